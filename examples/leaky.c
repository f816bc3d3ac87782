/*
 * leaky: a small request "server" with two leaks, the quick-start demo of rheap.
 *
 * It serves 1000 made-up requests. Each request copies its path with strdup, builds a session
 * with calloc, grows a response buffer with realloc and frees all of that again. Two places
 * forget to free:
 *
 *   - remember_session() keeps a 48-byte cache entry for every 10th request and never frees
 *     it: 100 blocks of 48 bytes;
 *   - open_connection() allocates a 4096-byte buffer for every 100th request and loses it:
 *     10 blocks of 4096 bytes.
 *
 * Everything else is freed, so a recording of this program shows exactly those 110 blocks as
 * never freed, each group with its own backtrace:
 *
 *     LD_PRELOAD=librheap.so ./leaky
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session {
    char *path;
    int id;
    size_t bytes_sent;
};

/* A cache of sessions that is meant to be trimmed, but nothing ever trims or frees it. */
struct cache_entry {
    struct cache_entry *next;
    int session_id;
    char key[36];
};
_Static_assert(sizeof(struct cache_entry) == 48, "the README promises 48-byte leaks");
static struct cache_entry *cache;

static void remember_session(const struct session *s)
{
    struct cache_entry *e = malloc(sizeof *e); /* LEAK: 48 bytes, every 10th request */
    e->session_id = s->id;
    snprintf(e->key, sizeof e->key, "%s", s->path);
    e->next = cache;
    cache = e;
}

/* Only the newest connection is remembered: each new one loses the previous buffer. */
static char *current_connection;

static void open_connection(void)
{
    char *buffer = malloc(4096); /* LEAK: 4096 bytes, every 100th request */
    memset(buffer, 0, 4096);
    current_connection = buffer;
}

/* Builds the response in a buffer that grows by doubling, as a real server would. */
static size_t respond(const struct session *s)
{
    size_t cap = 16, len = 0;
    char *out = malloc(cap);
    for (int line = 0; line < 20 + s->id % 7; line++) {
        char chunk[64];
        int n = snprintf(chunk, sizeof chunk, "line %d of %s\n", line, s->path);
        while (len + (size_t)n + 1 > cap) {
            cap *= 2;
            out = realloc(out, cap);
        }
        memcpy(out + len, chunk, (size_t)n + 1);
        len += (size_t)n;
    }
    free(out);
    return len;
}

static size_t serve(int id, const char *path)
{
    struct session *s = calloc(1, sizeof *s);
    s->id = id;
    s->path = strdup(path);
    if (id % 10 == 0)
        remember_session(s);
    if (id % 100 == 0)
        open_connection();
    s->bytes_sent = respond(s);
    size_t sent = s->bytes_sent;
    free(s->path);
    free(s);
    return sent;
}

int main(void)
{
    static const char *const paths[] = {"/index.html", "/api/users", "/static/app.js",
                                        "/api/orders/42"};
    size_t total = 0;
    for (int id = 0; id < 1000; id++)
        total += serve(id, paths[id % 4]);
    printf("served 1000 requests, %zu bytes\n", total);
    return 0;
}
