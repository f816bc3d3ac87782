// cxxsym.cpp: a C++ program for the symbolization tests: functions in nested namespaces, a
// class hierarchy, a class template whose std::vector grows, a lambda, and (at -O2) inlined
// calls. Every block stays reachable from `registry`.
#include <cstdio>
#include <string>
#include <vector>

namespace shapes {

struct Shape {
    virtual ~Shape() = default;
    virtual double area() const = 0;
};

class Circle : public Shape {
public:
    explicit Circle(double r) : r_(r) {}
    double area() const override { return 3.0 * r_ * r_; }

private:
    double r_;
};

template <typename T>
class Registry {
public:
    void add(T v) { items_.push_back(v); }
    std::size_t size() const { return items_.size(); }

private:
    std::vector<T> items_;
};

namespace detail {
inline std::string *label(int i)
{
    return new std::string("a label long enough to need the heap, number " + std::to_string(i));
}
} // namespace detail

__attribute__((noinline)) Shape *make_circle(double r)
{
    return new Circle(r);
}

} // namespace shapes

static shapes::Registry<shapes::Shape *> *registry;
static shapes::Registry<std::string *> *labels;

int main()
{
    registry = new shapes::Registry<shapes::Shape *>;
    labels = new shapes::Registry<std::string *>;
    auto add_some = [](int n) {
        for (int i = 0; i < n; i++) {
            registry->add(shapes::make_circle(i));
            labels->add(shapes::detail::label(i));
        }
    };
    add_some(5);
    std::printf("%zu shapes, %zu labels\n", registry->size(), labels->size());
    return 0;
}
