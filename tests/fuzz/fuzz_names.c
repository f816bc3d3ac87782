/*
 * fuzz_names.c: the name shortener and the clipper (analysis/shorten.c) on any text.
 *
 * LLVMFuzzerTestOneInput takes any bytes as a name. Each transformation must return, in time
 * linear in its input, a text no longer than the input; a clip must fit the width it was given.
 * Built with -DRHEAP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer. Built plainly,
 * `fuzz_names --unit` checks each operator form against its expected text, and
 * `fuzz_names FILE...` replays every line of the files (real demangled names: the test feeds
 * it every symbol of libstdc++, LLVM and a Rust program) plus deterministic mutations of each
 * and random bracket-heavy texts. A watchdog names the input that takes longer than seconds.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rheap_analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *in, const char *out)
{
    fprintf(stderr, "FAIL: %s\n  input:  %s\n  output: %s\n", what, in, out ? out : "(null)");
    exit(1);
}

static void check_name(const char *in)
{
    size_t n = strlen(in);
    char *s = ra_name_short(in);
    if (!s)
        fail("ra_name_short returned NULL", in, NULL);
    if (strlen(s) > n)
        fail("ra_name_short made the text longer", in, s);
    /* Shortening what is short already changes nothing more than once: no pass may undo
     * another's work or loop on its own output. */
    char *again = ra_name_short(s);
    if (!again || strlen(again) > strlen(s))
        fail("ra_name_short made its own output longer", s, again);
    free(again);
    char *bare = ra_name_without_params(in);
    if (!bare)
        fail("ra_name_without_params returned NULL", in, NULL);
    if (strlen(bare) > n || strncmp(bare, in, strlen(bare)) != 0)
        fail("ra_name_without_params is not a start of its input", in, bare);
    free(bare);
    size_t w = ra_text_columns(in);
    size_t keeps[] = {0, 3, 4, 5, 8, 13, 20, 40, w > 0 ? w - 1 : 0, w, w + 1};
    for (size_t k = 0; k < sizeof keeps / sizeof *keeps; k++) {
        for (int from_end = 0; from_end < 2; from_end++) {
            char *c = ra_text_clip(in, keeps[k], from_end);
            if (!c)
                fail("ra_text_clip returned NULL", in, NULL);
            if (strlen(c) > n)
                fail("ra_text_clip made the text longer", in, c);
            if (keeps[k] >= 4 && ra_text_columns(c) > keeps[k])
                fail("ra_text_clip left the text wider than asked", in, c);
            free(c);
        }
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = 0;
    check_name(in);
    free(in);
    return 0;
}

#ifndef RHEAP_LIBFUZZER
static const char *current;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: a name transformation did not end within 10 s on: ";
    write(2, msg, sizeof msg - 1);
    write(2, current, strlen(current) > 2000 ? 2000 : strlen(current));
    write(2, "\n", 1);
    _exit(1);
}

static void run(const char *in)
{
    current = in;
    alarm(10);
    check_name(in);
    alarm(0);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Mutations of a real name: every prefix cut at a bracket, and a few random byte overwrites
 * with characters that matter to the shortener. */
static void mutate(const char *line)
{
    static const char interesting[] = "<>()[]{}-=: ,operator\xc3\xa9\x80";
    size_t n = strlen(line);
    char *m = malloc(n + 1);
    if (!m)
        return;
    for (size_t i = 0; i < n; i++) {
        if (line[i] == '<' || line[i] == '>' || line[i] == '(') {
            memcpy(m, line, i);
            m[i] = 0;
            run(m);
        }
    }
    for (int r = 0; r < 4 && n; r++) {
        memcpy(m, line, n + 1);
        for (int k = 0; k < 3; k++)
            m[next() % n] = interesting[next() % (sizeof interesting - 1)];
        run(m);
    }
    free(m);
}

static int replay(int argc, char **argv)
{
    size_t lines = 0;
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "r");
        if (!f) {
            perror(argv[a]);
            return 1;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        while ((len = getline(&line, &cap, f)) > 0) {
            if (line[len - 1] == '\n')
                line[len - 1] = 0;
            run(line);
            if (lines++ % 16 == 0)
                mutate(line);
        }
        free(line);
        fclose(f);
    }
    /* Random texts from an alphabet of brackets and operators, up to 64 KiB: deep nesting,
     * brackets never closed, the keyword everywhere. */
    static const char *const parts[] = {"<", ">", "<", ">", "operator", "operator<", "->", "()",
                                        "[]", " ", "a", "std::", "_", "=", "{lambda()#1}", "\xe2\x80"};
    char *buf = malloc(65537);
    if (!buf)
        return 1;
    for (int r = 0; r < 300; r++) {
        size_t want = r < 290 ? next() % 300 : 65000, o = 0;
        while (o < want) {
            const char *p = parts[next() % (sizeof parts / sizeof *parts)];
            size_t l = strlen(p);
            if (o + l > 65536)
                break;
            memcpy(buf + o, p, l);
            o += l;
        }
        buf[o] = 0;
        run(buf);
    }
    for (int r = 0; r < 200; r++) {
        size_t want = next() % 512;
        for (size_t i = 0; i < want; i++)
            buf[i] = (char)(1 + next() % 255);
        buf[want] = 0;
        run(buf);
    }
    free(buf);
    printf("fuzz_names: %zu names and their mutations, 500 random texts: ok\n", lines);
    return 0;
}

/* Each operator form, shortened as a reader of a leak table expects. */
static int unit(void)
{
    static const char *const cases[][2] = {
        {"Leaker::operator()(int)", "Leaker::operator()(int)"},
        {"std::map<int, int, std::less<int> >::operator[](int const&)",
         "std::map<...>::operator[](int const&)"},
        {"operator new(unsigned long)", "operator new(unsigned long)"},
        {"operator new[](unsigned long, std::nothrow_t const&)",
         "operator new[](unsigned long, std::nothrow_t const&)"},
        {"operator delete(void*, unsigned long, std::align_val_t)",
         "operator delete(void*, unsigned long, std::align_val_t)"},
        {"Pool::operator new(unsigned long)", "Pool::operator new(unsigned long)"},
        {"v8::internal::Malloced::operator new(unsigned long)",
         "v8::internal::Malloced::operator new(unsigned long)"},
        {"Handle<Object, int>::operator->() const", "Handle<...>::operator->() const"},
        {"Ptr<long>::operator->*(int)", "Ptr<...>::operator->*(int)"},
        {"std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
         "std::operator<< <std::char_traits<...> >(std::basic_ostream<...>&, char const*)"},
        {"bool operator< <long>(Box<long> const&, Box<long> const&)",
         "bool operator< <long>(Box<...> const&, Box<...> const&)"},
        {"operator<=>(Key const&, Key const&)", "operator<=>(Key const&, Key const&)"},
        {"Bits<unsigned>::operator>>=(int)", "Bits<...>::operator>>=(int)"},
        {"Cmp::operator>(Cmp const&)", "Cmp::operator>(Cmp const&)"},
        {"Cmp::operator<(Cmp const&)", "Cmp::operator<(Cmp const&)"},
        {"Vec::operator=(Vec const&)", "Vec::operator=(Vec const&)"},
        {"Vec::operator==(Vec const&)", "Vec::operator==(Vec const&)"},
        {"Str::operator std::basic_string<char, std::char_traits<char> >() const",
         "Str::operator std::basic_string<...>() const"},
        {"main::{lambda()#1}::operator()() const", "main::{lambda()#1}::operator()() const"},
        {"std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke(std::_Any_data const&)",
         "std::_Function_handler<...>::_M_invoke(std::_Any_data const&)"},
        {"std::__detail::_Map_base<std::__cxx11::basic_string<char>, std::pair<int, int> >::operator[](int)",
         "std::__detail::_Map_base<...>::operator[](int)"},
        {"parse_operator_list", "parse_operator_list"},
        {"parse_operator<int, long>", "parse_operator<...>"},
        {"my_operator<(int)", "my_operator<(int)"},
        {"operator", "operator"},
        {"operator<", "operator<"},
        {"<alloc::vec::Vec<T> as alloc::vec::spec_from_iter::SpecFromIter<T, I>>::from_iter",
         "<alloc::vec::Vec<T> as alloc::vec::spec_from_iter::SpecFromIter<...>>::from_iter"},
    };
    static const char *const bare[][2] = {
        {"Table::operator[](int) const", "Table::operator[]"},
        {"Functor::operator()(int)", "Functor::operator()"},
        {"Functor::operator()", "Functor::operator()"},
        {"main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()"},
        {"Pooled::operator new(unsigned long)", "Pooled::operator new"},
        {"std::vector<...>::push_back(int&&) &&", "std::vector<...>::push_back"},
        {"f(void (*)(int))", "f"},
        {"parse_operator_list", "parse_operator_list"},
        {"collect::leak_vec", "collect::leak_vec"},
        {"(anonymous namespace)::pool::pool()", "(anonymous namespace)::pool::pool"},
        {"broken(int", "broken(int"},
        {"(x)", "(x)"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof bare / sizeof *bare; i++) {
        char *s = ra_name_without_params(bare[i][0]);
        if (!s || strcmp(s, bare[i][1]) != 0) {
            fprintf(stderr, "FAIL: without params: %s\n  expected: %s\n  got:      %s\n", bare[i][0],
                    bare[i][1], s ? s : "(null)");
            bad = 1;
        }
        free(s);
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        current = cases[i][0];
        alarm(10);
        char *s = ra_name_short(cases[i][0]);
        alarm(0);
        if (!s || strcmp(s, cases[i][1]) != 0) {
            fprintf(stderr, "FAIL: %s\n  expected: %s\n  got:      %s\n", cases[i][0], cases[i][1],
                    s ? s : "(null)");
            bad = 1;
        }
        free(s);
    }
    if (!bad)
        printf("fuzz_names --unit: %zu operator forms, %zu parameter lists: ok\n",
               sizeof cases / sizeof *cases, sizeof bare / sizeof *bare);
    return bad;
}

int main(int argc, char **argv)
{
    signal(SIGALRM, on_alarm);
    if (argc == 2 && strcmp(argv[1], "--unit") == 0)
        return unit();
    return replay(argc, argv);
}
#endif
