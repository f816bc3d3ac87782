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
#define RIP__CALL_NAME(name, id, text, kind) case name: return text;
        RIP_CALL_LIST(RIP__CALL_NAME)
#undef RIP__CALL_NAME
    }
    return "?";
}

int rip_call_resizes(rip_call_t call)
{
    switch (call) {
#define RIP__CALL_KIND(name, id, text, kind) case name: return kind == RIP_RESIZE;
        RIP_CALL_LIST(RIP__CALL_KIND)
#undef RIP__CALL_KIND
    }
    return 0;
}
