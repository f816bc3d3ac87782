/*
 * status.c: messages of status codes, error formatting and call names.
 */
#include <inttypes.h>
#include <stdio.h>

#include "rip.h"

static const char *const messages[] = {
#define RIP__MSG(name, msg) [name] = msg,
    RIP_STATUS_LIST(RIP__MSG)
#undef RIP__MSG
};

const char *rip_strerror(rip_status_t code)
{
    if ((unsigned)code < sizeof messages / sizeof messages[0] && messages[code])
        return messages[code];
    return "unknown status";
}

char *rip_error_format(const rip_error_t *err, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    const char *detail = err->detail[0] ? err->detail : rip_strerror(err->code);
    if (err->offset == RIP_NO_OFFSET)
        snprintf(buf, size, "%s: %s", err->path, detail);
    else
        snprintf(buf, size, "%s: offset %" PRIu64 ": %s", err->path, err->offset, detail);
    return buf;
}

const char *rip_call_name(rip_call_t call)
{
    switch (call) {
    case RIP_CALL_MALLOC: return "malloc";
    case RIP_CALL_CALLOC: return "calloc";
    case RIP_CALL_REALLOC: return "realloc";
    case RIP_CALL_REALLOCARRAY: return "reallocarray";
    case RIP_CALL_POSIX_MEMALIGN: return "posix_memalign";
    case RIP_CALL_ALIGNED_ALLOC: return "aligned_alloc";
    case RIP_CALL_MEMALIGN: return "memalign";
    case RIP_CALL_VALLOC: return "valloc";
    case RIP_CALL_PVALLOC: return "pvalloc";
    }
    return "?";
}
