/*
 * http.c: the small HTTP/1.1 server of `rheap serve`: one thread, one poll loop, non-blocking
 * sockets, one request per connection (every answer says Connection: close and has a
 * Content-Length).
 *
 * It faces whatever connects, so everything is bounded: at most MAX_CLIENTS connections (one
 * more is answered 503 and closed), a request head of at most MAX_HEAD bytes (431), no body
 * (a request announcing one gets 413), REQUEST_S seconds to send the head (408) and SEND_S
 * seconds to take the answer (then dropped). Only GET and HEAD are served (405); a line that is
 * not a request gets 400. No input can end the loop: a client is answered or dropped.
 */
#define _GNU_SOURCE /* accept4, strncasecmp */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"

#define MAX_CLIENTS 64
#define MAX_HEAD 8192
#define REQUEST_S 10
#define SEND_S 30

typedef enum { C_FREE, C_READING, C_HANDLING, C_WRITING, C_DRAINING } cstate_t;

/* After an answer, what the client still sends is read and thrown away for a moment before the
 * connection is closed: closing with unread bytes would reset the connection, and the client
 * could lose the answer (a 431 to a huge request) before reading it. */
#define DRAIN_S 2
#define DRAIN_MAX (1u << 20)

typedef struct {
    cstate_t state;
    int fd;
    char head[MAX_HEAD + 1];
    size_t nhead;
    char *out;
    size_t nout, sent, drained;
    double deadline;
    char method[8], path[MAX_HEAD], query[MAX_HEAD], peer[64];
    int head_only;
} client_t;

struct rc__http {
    int fd;
    char address[128];
    client_t c[MAX_CLIENTS];
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

rc__http_t *rc__http_open(const char *listen_at, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(listen_at, ':');
    if (!colon || colon == listen_at || !colon[1] || (size_t)(colon - listen_at) >= sizeof host) {
        snprintf(err, errlen, "--listen %s: expected ADDRESS:PORT (127.0.0.1:6060)", listen_at);
        return NULL;
    }
    memcpy(host, listen_at, (size_t)(colon - listen_at));
    host[colon - listen_at] = 0;
    char *h = host;
    if (h[0] == '[' && h[strlen(h) - 1] == ']') {
        h[strlen(h) - 1] = 0;
        h++;
    }
    struct addrinfo hints = {0}, *ai;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(h, colon + 1, &hints, &ai);
    if (gai != 0) {
        snprintf(err, errlen, "--listen %s: %s", listen_at, gai_strerror(gai));
        return NULL;
    }
    rc__http_t *s = calloc(1, sizeof *s);
    if (!s) {
        freeaddrinfo(ai);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(s->fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s->fd, 64) != 0) {
        snprintf(err, errlen, "--listen %s: %s", listen_at, strerror(errno));
        if (s->fd >= 0)
            close(s->fd);
        free(s);
        freeaddrinfo(ai);
        return NULL;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(s->fd, (struct sockaddr *)&ss, &sl);
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
        port = ntohs(a->sin_port);
        snprintf(s->address, sizeof s->address, "%s:%u", ip, port);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
        port = ntohs(a->sin6_port);
        snprintf(s->address, sizeof s->address, "[%s]:%u", ip, port);
    }
    for (int i = 0; i < MAX_CLIENTS; i++)
        s->c[i].fd = -1;
    return s;
}

void rc__http_close(rc__http_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < MAX_CLIENTS; i++) {
        if (s->c[i].fd >= 0)
            close(s->c[i].fd);
        free(s->c[i].out);
    }
    close(s->fd);
    free(s);
}

void rc__http_forget(rc__http_t *s)
{
    /* Only this process's references go: the parent's sockets stay as they are. */
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (s->c[i].fd >= 0)
            close(s->c[i].fd);
    close(s->fd);
}

const char *rc__http_address(const rc__http_t *s)
{
    return s->address;
}

static void drop(client_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->out);
    c->out = NULL;
    c->fd = -1;
    c->state = C_FREE;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

static void respond(rc__http_t *s, client_t *c, int status, const char *type, const void *body,
                    size_t len)
{
    (void)s;
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\n\r\n",
                     status, reason(status), type, len);
    size_t blen = c->head_only ? 0 : len;
    free(c->out);
    c->out = malloc((size_t)n + blen);
    if (!c->out) {
        drop(c);
        return;
    }
    memcpy(c->out, head, (size_t)n);
    if (blen)
        memcpy(c->out + n, body, blen);
    c->nout = (size_t)n + blen;
    c->sent = 0;
    c->state = C_WRITING;
    c->deadline = mono() + SEND_S;
}

static void respond_text(rc__http_t *s, client_t *c, int status, const char *text)
{
    respond(s, c, status, "text/plain; charset=utf-8", text, strlen(text));
}

void rc__http_respond(rc__http_t *s, int client, int status, const char *type, const void *body,
                      size_t len)
{
    if (client < 0 || client >= MAX_CLIENTS || s->c[client].state != C_HANDLING)
        return;
    respond(s, &s->c[client], status, type, body, len);
}

void rc__http_defer(rc__http_t *s, int client, int seconds)
{
    if (client >= 0 && client < MAX_CLIENTS && s->c[client].state == C_HANDLING)
        s->c[client].deadline = mono() + REQUEST_S + seconds;
}

/* A whole head was read: parses the request line, refuses what is not served, else hands it
 * to the handler. */
static void handle(rc__http_t *s, int i, void (*handler)(void *, const rc__request_t *),
                   void *user)
{
    client_t *c = &s->c[i];
    char *line_end = strstr(c->head, "\r\n");
    if (!line_end) {
        respond_text(s, c, 400, "bad request\n");
        return;
    }
    *line_end = 0;
    char *sp1 = strchr(c->head, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) || (size_t)(sp1 - c->head) >= sizeof c->method ||
        sp1[1] != '/') {
        respond_text(s, c, 400, "bad request\n");
        return;
    }
    memcpy(c->method, c->head, (size_t)(sp1 - c->head));
    c->method[sp1 - c->head] = 0;
    *sp2 = 0;
    const char *target = sp1 + 1;
    const char *q = strchr(target, '?');
    size_t plen = q ? (size_t)(q - target) : strlen(target);
    memcpy(c->path, target, plen);
    c->path[plen] = 0;
    snprintf(c->query, sizeof c->query, "%s", q ? q + 1 : "");
    c->head_only = !strcmp(c->method, "HEAD");
    if (strcmp(c->method, "GET") && !c->head_only) {
        respond_text(s, c, 405, "only GET and HEAD are served\n");
        return;
    }
    /* No request here has a body; one announced would be left unread. */
    for (char *h = line_end + 2; *h; ) {
        char *e = strstr(h, "\r\n");
        if (!e)
            break;
        if (!strncasecmp(h, "Content-Length:", 15) && strtoull(h + 15, NULL, 10) > 0) {
            respond_text(s, c, 413, "a request body is not accepted\n");
            return;
        }
        if (!strncasecmp(h, "Transfer-Encoding:", 18)) {
            respond_text(s, c, 413, "a request body is not accepted\n");
            return;
        }
        h = e + 2;
    }
    c->state = C_HANDLING;
    c->deadline = mono() + REQUEST_S;
    rc__request_t r = {i, c->method, c->path, c->query, c->peer};
    handler(user, &r);
}

static void accept_all(rc__http_t *s)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(s->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or a connection that went away, or out of descriptors */
        int i = 0;
        while (i < MAX_CLIENTS && s->c[i].state != C_FREE)
            i++;
        if (i == MAX_CLIENTS) {
            static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                       "Connection: close\r\n\r\n";
            (void)!send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(fd);
            continue;
        }
        client_t *c = &s->c[i];
        c->fd = fd;
        c->state = C_READING;
        c->nhead = 0;
        c->deadline = mono() + REQUEST_S;
        char ip[INET6_ADDRSTRLEN] = "?";
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip);
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof ip);
        snprintf(c->peer, sizeof c->peer, "%s", ip);
    }
}

void rc__http_round(rc__http_t *s, int timeout_ms,
                    void (*handler)(void *user, const rc__request_t *r), void *user)
{
    struct pollfd pf[MAX_CLIENTS + 1];
    int who[MAX_CLIENTS + 1];
    nfds_t n = 0;
    pf[n].fd = s->fd;
    pf[n].events = POLLIN;
    who[n++] = -1;
    for (int i = 0; i < MAX_CLIENTS; i++) {
        client_t *c = &s->c[i];
        if (c->state == C_READING || c->state == C_WRITING || c->state == C_DRAINING) {
            pf[n].fd = c->fd;
            pf[n].events = c->state == C_WRITING ? POLLOUT : POLLIN;
            who[n++] = i;
        }
    }
    int ready = poll(pf, n, timeout_ms);
    for (nfds_t k = 0; ready > 0 && k < n; k++) {
        if (!pf[k].revents)
            continue;
        if (who[k] < 0) {
            accept_all(s);
            continue;
        }
        client_t *c = &s->c[who[k]];
        if (c->state == C_READING) {
            ssize_t got = recv(c->fd, c->head + c->nhead, MAX_HEAD - c->nhead, 0);
            if (got <= 0) {
                if (got == 0 || (errno != EAGAIN && errno != EINTR))
                    drop(c);
                continue;
            }
            c->nhead += (size_t)got;
            c->head[c->nhead] = 0;
            /* A NUL byte is no part of a request: the head is not a string then. */
            if (memchr(c->head, 0, c->nhead))
                respond_text(s, c, 400, "bad request\n");
            else if (strstr(c->head, "\r\n\r\n"))
                handle(s, who[k], handler, user);
            else if (c->nhead == MAX_HEAD)
                respond_text(s, c, 431, "request head too large\n");
        } else if (c->state == C_WRITING) {
            ssize_t put = send(c->fd, c->out + c->sent, c->nout - c->sent, MSG_NOSIGNAL);
            if (put < 0) {
                if (errno != EAGAIN && errno != EINTR)
                    drop(c);
                continue;
            }
            c->sent += (size_t)put;
            if (c->sent == c->nout) {
                shutdown(c->fd, SHUT_WR);
                free(c->out);
                c->out = NULL;
                c->state = C_DRAINING;
                c->drained = 0;
                c->deadline = mono() + DRAIN_S;
            }
        } else if (c->state == C_DRAINING) {
            char sink[4096];
            ssize_t got = recv(c->fd, sink, sizeof sink, 0);
            if (got > 0)
                c->drained += (size_t)got;
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR) ||
                c->drained > DRAIN_MAX)
                drop(c);
        }
    }
    double now = mono();
    for (int i = 0; i < MAX_CLIENTS; i++) {
        client_t *c = &s->c[i];
        if (c->state == C_FREE || now < c->deadline)
            continue;
        if (c->state == C_READING)
            respond_text(s, c, 408, "request not received in time\n");
        else if (c->state == C_HANDLING)
            respond_text(s, c, 500, "no answer in time\n");
        else
            drop(c);
    }
}
