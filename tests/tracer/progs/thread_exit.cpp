/*
 * thread_exit: memory freed while threads end. Each worker allocates a block owned by a
 * pthread key (freed by the key's destructor), a C++ thread_local object holding two blocks
 * (freed by its destructor at thread exit), and exits with pthread_exit from a nested call.
 * Those frees happen during the thread's own teardown and must be recorded in its file.
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

#define NTHREADS 3

static pthread_key_t key;

static void free_key_block(void *p)
{
    free(p);
}

struct PerThread {
    void *a = nullptr, *b = nullptr;
    void fill()
    {
        a = malloc(7001);
        b = malloc(7002);
    }
    ~PerThread()
    {
        free(a);
        free(b);
    }
};
static thread_local PerThread per_thread;

__attribute__((noinline)) static void leave()
{
    pthread_exit(nullptr);
}

static void *work(void *)
{
    pthread_setspecific(key, malloc(7003));
    per_thread.fill();
    SINK(per_thread.a);
    leave();
    return nullptr;
}

int main()
{
    pthread_key_create(&key, free_key_block);
    pthread_t th[NTHREADS];
    for (pthread_t &t : th)
        pthread_create(&t, nullptr, work, nullptr);
    for (pthread_t &t : th)
        pthread_join(t, nullptr);
    say("threads done\n");
    return 0;
}
