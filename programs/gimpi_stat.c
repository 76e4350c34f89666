/*  gimpi_stat.c — `gimpi-stat [--json] [--endpoint EP] [GROUP]`: prints groupd's groups,
 *  like PVM's pvm_gstat: size, frozen or not, members (instance -> tid, host, pid), and the
 *  barrier and freeze in progress with their count, arrivals and waiters (never stale: the
 *  lists are emptied when an episode completes).  Plain text by default, JSON with --json.
 *  It asks groupd with one STAT request (the endpoint from --endpoint, $GIMPI_GROUPD or the
 *  per-user default), never registers and never starts a groupd; no answer within 5 s, or
 *  an unknown GROUP, is an error (exit 1).  `gimpi-stat --config [--pid PID]` prints what
 *  this process, or a running task of this machine, runs with: every environment variable
 *  of gimpi's table (base/gimpi_tunables.h) with its value and source; the hidden
 *  --tunables-md prints doc/tunables.md from the same table.  `gimpi-stat --tasks` prints
 *  the live view of the job (live_view.h): every task, and what each blocked one is in,
 *  for how long, and whom it waits for; `--watch` prints it again every --interval ms
 *  (default 1000; --count N times, else until interrupted).
 */
#include "config.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "base/gimpi_key.h"
#include "base/gimpi_json.h"
#include "base/gimpi_tunables.h"
#include "gimpi.h"
#include "programs/run_jobfile.h"
#include "programs/live_view.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

enum { TIMEOUT_MS = 5000 };

/*  Prints a tid list as JSON. */
static void s_json_tids(FILE *out, const int32_t *tids, int n)
{
    fputc('[', out);
    for (int k = 0; k < n; k++)
        fprintf(out, "%s%d", k ? "," : "", (int)tids[k]);
    fputc(']', out);
}

/*  One group as JSON. */
static void s_print_json(FILE *out, const gd_groupstat_t *st, bool first)
{
    fprintf(out, "%s{\"name\":", first ? "" : ",");
    gimpi_json_str(out, st->name);
    fprintf(out, ",\"size\":%d,\"frozen\":%s,\"frozen_size\":%d,\"dead\":%s,\"version\":%llu,"
            "\"members\":[", (int)st->size, st->frozen ? "true" : "false", (int)st->frozen,
            st->dead ? "true" : "false", (unsigned long long)st->version);
    for (int k = 0; k < st->nmembers; k++) {
        const gd_member_t *m = &st->members[k];
        fprintf(out, "%s{\"inst\":%d,\"tid\":%d,\"pid\":%d,\"host\":", k ? "," : "",
                (int)m->inst, (int)m->tid, (int)m->ospid);
        gimpi_json_str(out, m->host);
        fputc('}', out);
    }
    fputs("],\"barrier\":", out);
    if (st->bar_count) {
        fprintf(out, "{\"count\":%d,\"arrived\":%d,\"waiting\":", (int)st->bar_count,
                (int)st->bar_arrived);
        s_json_tids(out, st->bar_waiters, st->nbar_waiters);
        fputc('}', out);
    } else
        fputs("null", out);
    fputs(",\"freeze\":", out);
    if (st->frz_count) {
        fprintf(out, "{\"count\":%d,\"arrived\":%d,\"waiting\":", (int)st->frz_count,
                (int)st->frz_arrived);
        s_json_tids(out, st->frz_waiters, st->nfrz_waiters);
        fputc('}', out);
    } else
        fputs("null", out);
    fputs(",\"dataplane_barrier\":[", out);
    for (int k = 0; k < st->ndp; k++)
        fprintf(out, "%s{\"tid\":%d,\"count\":%d,\"waited_ms\":%d}", k ? "," : "",
                (int)st->dp[k].tid, (int)st->dp[k].count, (int)st->dp[k].ms);
    fputs("]}", out);
}

/*  One group as text. */
static void s_print_text(FILE *out, const gd_groupstat_t *st)
{
    fprintf(out, "group: %s, size: %d, ", st->name, (int)st->size);
    if (st->frozen)
        fprintf(out, "frozen at %d%s\n", (int)st->frozen, st->dead ? " (dead: lost a member)" : "");
    else
        fprintf(out, "dynamic\n");
    fprintf(out, "  members:\n");
    for (int k = 0; k < st->nmembers; k++) {
        const gd_member_t *m = &st->members[k];
        fprintf(out, "    %d t%x %s pid %d\n", (int)m->inst, (unsigned)m->tid,
                *m->host ? m->host : "?", (int)m->ospid);
    }
    if (st->bar_count) {
        fprintf(out, "  barrier: count %d, arrived %d, waiting:", (int)st->bar_count,
                (int)st->bar_arrived);
        for (int k = 0; k < st->nbar_waiters; k++)
            fprintf(out, " t%x", (unsigned)st->bar_waiters[k]);
        fputc('\n', out);
    }
    if (st->frz_count) {
        fprintf(out, "  freeze: target %d, arrived %d, waiting:", (int)st->frz_count,
                (int)st->frz_arrived);
        for (int k = 0; k < st->nfrz_waiters; k++)
            fprintf(out, " t%x", (unsigned)st->frz_waiters[k]);
        fputc('\n', out);
    }
    if (st->ndp) {          /* later barriers of an unchanged membership run task to task */
        fprintf(out, "  barrier on the data plane: count %d, waiting:", (int)st->dp[0].count);
        for (int k = 0; k < st->ndp; k++)
            fprintf(out, " t%x (%d ms)", (unsigned)st->dp[k].tid, (int)st->dp[k].ms);
        fputc('\n', out);
    }
}

/*  --fingerprint: the user's key's fingerprint and where the key came from. */
static int s_fingerprint(void)
{
    gimpi_key_t key;
    char from[GIMPI_KEY_PATHLEN], err[GIMPI_KEY_ERRLEN], fp[9];
    if (gimpi_key_default(&key, from, sizeof from, err, sizeof err) < 0) {
        fprintf(stderr, "gimpi-stat: %s\n", err);
        return 1;
    }
    printf("%s %s\n", gimpi_key_fingerprint(&key, fp), from);
    gimpi_key_wipe(&key, sizeof key);
    return 0;
}

/*  Prints the synopsis. */
static void s_usage(FILE *out)
{
    fprintf(out, "usage: gimpi-stat [--json] [--endpoint EP | --job PID] [GROUP]\n"
                 "       gimpi-stat --tasks [--json] [--endpoint EP | --job PID]\n"
                 "       gimpi-stat --watch [--interval MS] [--count N] [--endpoint EP | "
                 "--job PID]\n"
                 "       gimpi-stat --config [--json] [--pid PID]\n"
                 "       gimpi-stat --fingerprint\n");
}

/*  --config: what this process (pidtext NULL) or process pidtext runs with. */
static int s_config(const char *pidtext, bool json)
{
    extern char **environ;
    char **envp = environ, *end;
    if (pidtext) {
        long pid = strtol(pidtext, &end, 10);
        if (!*pidtext || *end || pid <= 0 || pid > INT32_MAX) {
            fprintf(stderr, "gimpi-stat: --pid %s: not a process id\n", pidtext);
            return 1;
        }
        if (!(envp = gimpi_env_of_pid((int)pid))) {
            fprintf(stderr, "gimpi-stat: the environment of process %ld: %s\n", pid,
                    strerror(errno));
            return 1;
        }
    }
    gimpi_tunables_print_config(stdout, envp, json);
    if (envp != environ)
        free(envp);
    return fflush(stdout) == 0 ? 0 : 1;
}

/*  One STAT request to groupd at ep, printed as text or JSON.  The exit status. */
static int s_stat(const char *ep, const char *group, bool json)
{
    void *zctx = zmq_ctx_new();
    if (!zctx) {
        fprintf(stderr, "gimpi-stat: %s\n", zmq_strerror(errno));
        return 1;
    }
    char err[GD_SOCK_ERRLEN], desc[GIMPI_KEY_PATHLEN + 64];
    void *monitor = NULL;
    void *s = gd_sock_tool_new(zctx, ep, &monitor, desc, sizeof desc, err, sizeof err);
    int rc = 1;
    if (!s) {
        fprintf(stderr, "gimpi-stat: %s\n", err);
        goto out;
    }
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_STAT, 1);
    gd_frame_t req[2] = { { hdr, sizeof hdr }, { (const uint8_t *)group, strlen(group) } };
    gd_multipart_t mp;
    gd_msg_t msg;
    int ready = gd_send_frames(s, NULL, 0, req, 2, 0) < 0
              ? 0 : gd_sock_tool_wait(s, monitor, TIMEOUT_MS, *desc != 0, err, sizeof err);
    if (ready < 0) {
        if (*desc)
            fprintf(stderr, "gimpi-stat: groupd at %s refused us: %s (ours: %s)\n", ep, err, desc);
        else
            fprintf(stderr, "gimpi-stat: groupd at %s refused us: %s (we are uid %u)\n", ep, err,
                    (unsigned)geteuid());
        goto out;
    }
    if (ready == 0 || gd_multipart_recv_max(s, &mp, 0, 1 << 24) < 0) {
        fprintf(stderr, "gimpi-stat: no groupd answers at %s\n", ep);
        goto out;
    }
    if (mp.truncated || gd_reply_decode(GD_STAT, mp.frames, mp.nparts, &msg) != GD_OK) {
        fprintf(stderr, "gimpi-stat: bad reply from groupd at %s\n", ep);
        gd_multipart_close(&mp);
        goto out;
    }
    int status = msg.values[0].i;
    if (status < 0) {
        if (*group)
            fprintf(stderr, "gimpi-stat: %s: %s\n", group, gimpi_strerror(status));
        else
            fprintf(stderr, "gimpi-stat: %s\n", gimpi_strerror(status));
        gd_multipart_close(&mp);
        goto out;
    }
    rc = 0;
    if (json)
        fputs("{\"groups\":[", stdout);
    else if (msg.nextra == 0)
        puts("no groups exist");
    for (int k = 0; k < msg.nextra; k++) {
        const gd_frame_t *f = &mp.frames[msg.extra_first + k];
        gd_groupstat_t st;
        if (gd_groupstat_decode(f->data, f->len, &st) != GD_OK) {
            fprintf(stderr, "gimpi-stat: bad group record from groupd\n");
            rc = 1;
            continue;
        }
        if (json)
            s_print_json(stdout, &st, k == 0);
        else
            s_print_text(stdout, &st);
        gd_groupstat_clear(&st);
    }
    if (json)
        fputs("]}\n", stdout);
    gd_multipart_close(&mp);
out:
    gd_sock_destroy(&s, &monitor);
    zmq_ctx_term(zctx);
    return rc;
}

/*  --tasks and --watch: the live view, once or every interval_ms (count times, 0: until
 *  interrupted; on a terminal the screen is cleared first).  The exit status. */
static int s_live(const char *ep, bool json, bool watch, long interval_ms, long count)
{
    bool tty = isatty(STDOUT_FILENO);
    for (long round = 0; !watch || count <= 0 || round < count; round++) {
        if (round) {
            struct timespec ts = { interval_ms / 1000, interval_ms % 1000 * 1000000L };
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        }
        char err[512];
        live_view_t *lv = live_view_new(ep, TIMEOUT_MS, err, sizeof err);
        if (!lv) {
            fprintf(stderr, "gimpi-stat: groupd at %s: %s\n", ep, err);
            return 1;
        }
        if (watch && tty && !json)
            fputs("\033[H\033[2J", stdout);
        else if (round)
            putchar('\n');
        live_view_print(lv, stdout, json);
        live_view_destroy(&lv);
        if (fflush(stdout) != 0)
            return 1;
        if (!watch)
            break;
    }
    return 0;
}

/*  The options; then one STAT request, printed as text or JSON, or another mode. */
int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "endpoint", required_argument, NULL, 'e' },
        { "job", required_argument, NULL, 'J' },
        { "fingerprint", no_argument, NULL, 'f' },
        { "config", no_argument, NULL, 'c' },
        { "pid", required_argument, NULL, 'p' },
        { "tunables-md", no_argument, NULL, 'm' },
        { "tasks", no_argument, NULL, 't' },
        { "watch", no_argument, NULL, 'w' },
        { "interval", required_argument, NULL, 'i' },
        { "count", required_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false, config = false, tasks = false, watch = false;
    long interval_ms = 1000, count = 0;
    char *end;
    const char *ep = NULL, *pid = NULL, *job = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "je:fh", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'e': ep = optarg; break;
        case 'J': job = optarg; break;
        case 'c': config = true; break;
        case 'p': pid = optarg; break;
        case 't': tasks = true; break;
        case 'w': watch = true; break;
        case 'i':
            interval_ms = strtol(optarg, &end, 10);
            if (!*optarg || *end || interval_ms < 10 || interval_ms > 3600000) {
                fprintf(stderr, "gimpi-stat: --interval %s: not 10 .. 3600000 ms\n", optarg);
                return 2;
            }
            break;
        case 'n':
            count = strtol(optarg, &end, 10);
            if (!*optarg || *end || count < 1) {
                fprintf(stderr, "gimpi-stat: --count %s: not a positive number\n", optarg);
                return 2;
            }
            break;
        case 'h': s_usage(stdout); return 0;
        case 'f': return s_fingerprint();
        case 'm': gimpi_tunables_print_md(stdout); return fflush(stdout) == 0 ? 0 : 1;
        default: s_usage(stderr); return 2;
        }
    }
    if ((pid && !config) || (config && (ep || job || optind < argc)) || (ep && job)
        || ((tasks || watch) && (config || optind < argc))) {
        s_usage(stderr);
        return 2;
    }
    if (config)
        return s_config(pid, json);
    if (argc - optind > 1) {
        s_usage(stderr);
        return 2;
    }
    const char *group = optind < argc ? argv[optind] : "";
    if (optind < argc && !*group) {
        fprintf(stderr, "gimpi-stat: %s\n", gimpi_strerror(GIMPI_ENULLGROUP));
        return 1;
    }
    if (strlen(group) > GD_MAX_NAME) {
        fprintf(stderr, "gimpi-stat: group name longer than %d bytes\n", GD_MAX_NAME);
        return 1;
    }
    char buf[600];
    if (!ep && !job && (ep = gimpi_env("GIMPI_GROUPD")) && !*ep)
        ep = NULL;
    /* no endpoint given: the running gimpirun job's groupd, as the console finds it */
    int found = ep ? 0 : run_jobfile_pick("gimpi-stat", "--job", job, buf, sizeof buf);
    if (found < 0)
        return 1;
    if (found)
        ep = buf;
    char why[GIMPI_KEY_ERRLEN];
    if (!ep && !(ep = gd_default_endpoint(buf, sizeof buf, why, sizeof why))) {
        fprintf(stderr, "gimpi-stat: %s\n", why);
        return 1;
    }
    if (tasks || watch)
        return s_live(ep, json, watch, interval_ms, count);
    return s_stat(ep, group, json);
}
