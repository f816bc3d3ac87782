/*
 * servepages.c: the collector's pages for people and for Prometheus: /metrics (the text format,
 * one series per recording, labels pid, recording, exe and mode) and / (the index of the
 * recordings with their heap now and links). They write into a FILE; server.c answers with it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "rheap_analysis.h"

#include "collector.h"

const char *rc__state_name(const rc_info_t *in)
{
    if (in->dropped)
        return in->state == RC_ENDED ? "ended" : "dropped";
    return in->state == RC_RECORDING ? "recording" : in->state == RC_OFF ? "off" : "ended";
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

void rc__metrics_write(const rc_host_t *h, FILE *f)
{
    static const struct {
        const char *name, *type, *help;
    } series[] = {
        {"rheap_live_bytes", "gauge",
         "Bytes in blocks allocated and not freed, now (an estimate in profile mode)."},
        {"rheap_live_blocks", "gauge", "Blocks allocated and not freed, now (an estimate in "
                                       "profile mode)."},
        {"rheap_live_bytes_high", "gauge", "The most live bytes seen since the collector began "
                                           "following the recording."},
        {"rheap_allocated_bytes_total", "counter",
         "Bytes asked for by allocating calls since recording began."},
        {"rheap_allocations_total", "counter", "Allocating calls since recording began."},
        {"rheap_allocation_rate_bytes", "gauge",
         "Bytes allocated per second over the last few seconds."},
        {"rheap_recording_state", "gauge",
         "1 for the recording's state: recording, off (turned off) or ended (process gone or "
         "exec'ed)."},
        {"rheap_collector_memory_bytes", "gauge",
         "Memory the collector holds for the recording (live blocks, stacks)."},
        {"rheap_compactions_total", "counter",
         "Checkpoints the collector wrote in place of the recording's closed segments "
         "(--disk-budget)."},
        {"rheap_compactions_deferred_total", "counter",
         "Compactions put off to a later scan because a conversion was reading the recording."},
    };
    size_t n = rc_host_count(h);
    for (size_t s = 0; s < sizeof series / sizeof *series; s++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", series[s].name, series[s].help,
                series[s].name, series[s].type);
        for (size_t i = 0; i < n; i++) {
            rc_info_t in;
            rc_host_info(h, i, &in);
            fprintf(f, "%s{pid=\"%" PRIu32 "\",recording=\"%" PRIu32 "\",exe=\"", series[s].name,
                    in.pid, in.recording);
            label_value(f, in.exe);
            fprintf(f, "\",mode=\"%s\"", in.interval ? "profile" : "trace");
            if (s == 6)
                fprintf(f, ",state=\"%s\"", rc__state_name(&in));
            fputs("} ", f);
            switch (s) {
            case 0: fprintf(f, "%.0f\n", in.live_bytes); break;
            case 1: fprintf(f, "%.0f\n", in.live_blocks); break;
            case 2: fprintf(f, "%.0f\n", in.high_bytes); break;
            case 3: fprintf(f, "%.0f\n", in.alloc_bytes); break;
            case 4: fprintf(f, "%.0f\n", in.alloc_blocks); break;
            case 5: fprintf(f, "%.1f\n", in.rate); break;
            case 6: fputs("1\n", f); break;
            case 7: fprintf(f, "%" PRIu64 "\n", in.memory); break;
            case 8: fprintf(f, "%" PRIu64 "\n", in.compactions); break;
            default: fprintf(f, "%" PRIu64 "\n", in.compactions_deferred); break;
            }
        }
    }
    fprintf(f, "# HELP rheap_collector_processes Recordings the collector follows.\n"
               "# TYPE rheap_collector_processes gauge\nrheap_collector_processes %zu\n",
            n);
}

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

void rc__index_write(const rc_host_t *h, FILE *f)
{
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rheap serve: ");
    html_text(f, rc__host_name(h));
    fputs("</title>\n<style>\n"
          "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\n"
          "table{border-collapse:collapse}th,td{padding:.3em .8em;border-bottom:1px solid #ddd}\n"
          "th{text-align:left;background:#f3f3f3}td.n{text-align:right;white-space:nowrap;font-variant-numeric:"
          "tabular-nums}\n.recording{color:#070}.off{color:#a60}.ended{color:#888}\n"
          "code{font-size:12px}</style></head><body>\n<h1>rheap serve on ",
          f);
    html_text(f, rc__host_name(h));
    size_t n = rc_host_count(h);
    fprintf(f, "</h1>\n<p id=\"count\">%zu recording%s followed. Profiles: "
               "<a href=\"/debug/pprof/heap\">heap of every process</a>, "
               "<a href=\"/debug/pprof/allocs\">allocations of every process</a>, "
               "<a href=\"/metrics\">metrics</a>.</p>\n",
            n, n == 1 ? "" : "s");
    fputs("<table id=\"processes\"><tr><th>pid</th><th>recording</th><th>state</th>"
          "<th>mode</th><th>live heap</th><th>live blocks</th><th>allocated</th>"
          "<th>rate</th><th>program</th><th>profiles</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        rc_info_t in;
        rc_host_info(h, i, &in);
        char live[32], alloc[32], rate[40];
        ra_human_bytes((long long)in.live_bytes, live, sizeof live);
        ra_human_bytes((long long)in.alloc_bytes, alloc, sizeof alloc);
        ra_human_bytes((long long)in.rate, rate, sizeof rate);
        fprintf(f,
                "<tr data-pid=\"%" PRIu32 "\" data-live-bytes=\"%.0f\"><td class=n>%" PRIu32
                "</td><td class=n>%" PRIu32 "</td><td class=\"%s\">%s</td><td>%s</td>"
                "<td class=n>%s%s</td><td class=n>%.0f</td><td class=n>%s</td>"
                "<td class=n>%s/s</td><td><code>",
                in.pid, in.live_bytes, in.pid, in.recording, rc__state_name(&in),
                rc__state_name(&in), in.interval ? "profile" : "trace",
                in.interval ? "~" : "", live, in.live_blocks, alloc, rate);
        html_text(f, in.cmdline[0] ? in.cmdline : in.exe);
        fputs("</code></td><td>", f);
        if (rc_host_find(h, in.pid) == (long)i)
            fprintf(f,
                    "<a href=\"/debug/pprof/heap?pid=%" PRIu32 "\">heap</a> "
                    "<a href=\"/debug/pprof/allocs?pid=%" PRIu32 "\">allocs</a> "
                    "<a href=\"/report?pid=%" PRIu32 "\">report</a>",
                    in.pid, in.pid, in.pid);
        else
            fputs("(superseded)", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p>Fetch a profile with <code>go tool pprof http://HOST:PORT/debug/pprof/"
          "heap?pid=PID</code>. Values of profile-mode recordings (~) are estimates.</p>\n"
          "</body></html>\n",
          f);
}
