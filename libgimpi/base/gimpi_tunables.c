/*  gimpi_tunables.c — the one table of the environment variables gimpi reads, the reader
 *  that checks its names against it (gimpi_env), and the two printers made from it: the
 *  markdown of doc/tunables.md and the list of what a process runs with (gimpi-stat
 *  --config).  A new variable gets a row here before any code reads it; a variable no
 *  code reads any more loses its row (t/tunables.sh checks both ways).  Defaults are the
 *  readers' own, written as text: the row says what the code does, it does not decide it.
 */
#include "base/gimpi_tunables.h"
#include "base/gimpi_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENV_MAX_BYTES (4 << 20)     /* another process's environment read at most this far */

#define U GIMPI_TUNE_USER
#define S GIMPI_TUNE_SET
#define T GIMPI_TUNE_TEST

/*  The table: users' settings first, then what gimpi hands its processes, then the
 *  knobs of tests and benchmarks; within each, by what they touch. */
static const gimpi_tunable_t s_table[] = {
    /* --- where things are ------------------------------------------------------- */
    { "GIMPI_GROUPD", U, "(the per-user ipc endpoint in the runtime directory)", "endpoint",
      "groupd's endpoint (ipc:// or tcp://); gimpirun sets it to the job's groupd for its "
      "tasks. For a task, a comma-separated list of tcp endpoints: a primary groupd, then "
      "its standbys (groupd --standby-of), tried in turn when the one in use goes away. "
      "Empty counts as unset.",
      "libgimpi/groups/gimpi_groups.c libgimpi/task/gimpi_task.c programs/gimpi_stat.c "
      "programs/gimpi_console.c programs/run_vm.c groupd/groupd.c", false },
    { "GIMPI_GROUPD_BIN", U, "(groupd beside the program, else in the bindir, else on PATH)",
      "path", "the groupd program that a task or gimpirun starts (both look for it through "
      "base/gimpi_findprog.c)", "programs/run_standby.c bench/gd_bench.c "
      "bench/gimpi_bench.c", false },
    { "GIMPI_GROUPD_IDLE", U, "30", "s",
      "a groupd started by a task exits after this long without tasks",
      "libgimpi/groups/gimpi_groups_start.c", false },
    { "GIMPI_GROUPD_OUTAGE_MS", U, "5000", "ms",
      "how long a task waits for a groupd that went away to come back (restarted from its "
      "journal, by the first task that notices on one machine) before its group calls fail "
      "with PvmSysErr; 0: they fail at once, as before the journal",
      "libgimpi/groups/gimpi_groups.c", false },
    { "GIMPI_GROUPD_RESTARTABLE", U, "", "0|1",
      "1: the tcp groupd of GIMPI_GROUPD is restarted at the same port with its journal "
      "(gimpirun sets it for its tasks), so a task reconnects to it as on ipc; unset: a "
      "tcp groupd that goes away fails the group calls",
      "libgimpi/groups/gimpi_groups.c", false },
    { "GIMPI_PATH", U, "", "list",
      "colon-separated directories where a spawn looks for a program given by its bare "
      "name first (then the spawner's folder and $HOME/pvm3/bin/ARCH, never PATH, as "
      "PVM's ep); gimpirun sets it on another host from the hostfile's ep= option, and "
      "starts its command line's programs from it before PATH",
      "libgimpi/task/gimpi_job.c libgimpi/base/gimpi_findprog.c", false },
    { "GIMPI_RSH", U, "ssh -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=1 "
      "-o ServerAliveCountMax=5 -x", "command",
      "how gimpirun reaches another host to start gimpi-agent there (words split on blanks)",
      "programs/run_hosts.c", false },
    { "GIMPI_SLURM", U, "1", "switch",
      "0: gimpirun ignores a Slurm allocation (without host options it is the host set)",
      "programs/gimpirun.c", false },
    { "PVM_EXPORT", U, "", "list",
      "colon-separated names of further variables gimpirun passes to the tasks on other "
      "hosts (GIMPI_* ones go anyway), and a task's spawns pass (its values at the spawn) "
      "to children on every host, as in PVM; pvm_export and pvm_unexport edit it",
      "programs/run_proc.c libgimpi/task/gimpi_spawn.c libgimpi/pvm/pvm_export.c", false },
    /* --- the key and authentication ----------------------------------------------- */
    { "GIMPI_KEY_FILE", U, "(~/.gimpi/key, else the key of the runtime directory)", "path",
      "the user's key file (it must exist); see doc/security.md",
      "libgimpi/base/gimpi_key.c", false },
    { "IMPI_AUTH_NONE", U, "", "switch",
      "set (to anything): offer or accept IMPI's AUTH_NONE at the startup (IMPI's own "
      "convention)", "libgimpi/impi/impi_client.c programs/impi_server_main.c", false },
    { "IMPI_AUTH_KEY", U, "(unset: gimpi's proof of the user's key)", "number",
      "IMPI's AUTH_KEY secret, a decimal 64-bit number, signed (as LAM reads it) or "
      "unsigned (IMPI's own convention); never printed",
      "libgimpi/impi/impi_client.c programs/impi_server_main.c examples/impi-startup.c", true },
    /* --- startup, meeting, deadlines -------------------------------------------- */
    { "GIMPI_STARTUP_TIMEOUT", U, "60", "s",
      "deadline of the IMPI startup with the server (fractions allowed)",
      "libgimpi/impi/impi_client.c", false },
    { "GIMPI_CONNECT_TIMEOUT", U, "60", "s",
      "deadline for a task to meet every other task of its job, and for pvm_tasks to see "
      "every one of them registered (1 to 86399)",
      "libgimpi/task/gimpi_task.c libgimpi/pvm/pvm_vm.c", false },
    { "GIMPI_FINALIZE_TIMEOUT", U, "60", "s",
      "deadline of finalize's world barrier and PK_FINI exchange (1 to 86399)",
      "libgimpi/task/gimpi_task.c libgimpi/pvm/pvm_transport_impi.c", false },
    { "GIMPI_CATCHOUT_WAIT", U, "30", "s",
      "how long a task waits at its end for its children's output to end (pvm_catchout, "
      "the console's spawn ->)",
      "libgimpi/task/gimpi_task.c libgimpi/pvm/pvm_task.c programs/gimpi_console.c", false },
    { "GIMPI_VM_TIMEOUT_MS", U, "120000", "ms",
      "how long a request to the virtual machine's manager (spawn elsewhere, addhosts, "
      "kill) waits for its answer", "libgimpi/task/gimpi_vm.c", false },
    { "GIMPI_BIND", U, "core", "word",
      "core: a core of its own per task when they fit; none: no binding",
      "libgimpi/base/gimpi_bind.c", false },
    /* --- the data plane ----------------------------------------------------------- */
    { "GIMPI_PORTS", U, "(any free port)", "range",
      "LO-HI: the tasks' listening ports (within 1..65535)", "libgimpi/net/gimpi_host.c",
      false },
    { "GIMPI_LOCAL_SOCKETS", U, "1", "switch",
      "0: tasks of one machine meet over TCP, not Unix-domain sockets",
      "libgimpi/net/gimpi_host.c", false },
    { "GIMPI_LINK_TIMEOUT", U, "10", "s",
      "bound on noticing a silent peer link (keep-alive, TCP_USER_TIMEOUT); 2 to 3600, "
      "0 leaves the kernel's defaults", "libgimpi/net/gimpi_host.c", false },
    { "GIMPI_DANCE_RANK_MS", U, "5000", "ms",
      "how long a caller at the hosts' meeting has to send its rank",
      "libgimpi/net/gimpi_host.c", false },
    { "GIMPI_DANCE_CHECK_CALLERS", U, "1", "switch",
      "0: accept TCP callers of the meeting from any address and user (NAT); the rank "
      "checks stay", "libgimpi/net/gimpi_host.c", false },
    { "GIMPI_HANDSHAKE_MAX", U, "32", "count",
      "callers not yet proven to hold the key, held at once (when full, one that has sent "
      "nothing is dropped first, else the oldest)",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_HANDSHAKE_PER_SOURCE", U, "16", "count",
      "of those, callers from one network address (local-socket callers, of our user, are "
      "bounded by the total only)",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_HANDSHAKE_TIMEOUT", U, "5", "s",
      "how long such a caller has to finish its introduction",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_MAX_DYN_CONNS", U, "512", "count",
      "introduced (authenticated) connections to dynamic hosts at once",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_UNEXPECTED_MAX", U, "1048576", "bytes",
      "what unexpected messages from one peer may cost before its credit is held back; "
      "0: no bound", "libgimpi/net/msg_new.c", false },
    { "GIMPI_UNEXPECTED_P2P_MAX", U, "67108864", "bytes",
      "the same for point-to-point messages, counted apart; 0: no bound",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_NOTE_MS", U, "100", "ms",
      "a call blocked this long tells groupd (so gimpi-stat shows it)",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_STATUS_AFTER", U, "250", "ms",
      "a receive blocked this long tells groupd what it waits for (gimpi-stat --tasks, the "
      "console's top); 0: never", "libgimpi/groups/gimpi_groups.c", false },
    { "GIMPI_LIVENESS_MS", U, "500", "ms",
      "a blocked call asks about its peers after this long, and again as often; 0: never",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_SPIN_US", U, "500", "us",
      "how long a blocked call polls (yielding) before it sleeps",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_DEBUG", U, "0", "switch",
      "1: every packet sent and received, and each link's transport, on stderr",
      "libgimpi/net/msg_new.c", false },
    { "GIMPI_SHM", U, "1", "switch",
      "0: no shared memory between the tasks of one machine (neither rings nor the "
      "collectives' segment)", "libgimpi/net/msg_shm.c libgimpi/coll/gimpi_coll.c", false },
    { "GIMPI_SHM_RING", U, "1048576", "bytes", "the size of one shared-memory ring",
      "libgimpi/net/msg_shm.c", false },
    /* --- the collectives ---------------------------------------------------------- */
    { "GIMPI_SHM_COLL", U, "1", "switch",
      "0: group collectives do not use the shared segment", "libgimpi/coll/gimpi_coll.c",
      false },
    { "GIMPI_SHM_SPIN_US", U, "50", "us",
      "how long a member of the shared segment spins before it sleeps (10 when members "
      "outnumber cores)", "libgimpi/coll/coll_shm.c", false },
    { "GIMPI_SHM_PAUSES", U, "16", "count",
      "looks with a pause before the spin yields the core (no bound with a core of its "
      "own)", "libgimpi/coll/coll_shm.c", false },
    { "GIMPI_SHM_RADIX", U, "(members - 1 up to 16 members or when cores are short, else 4)",
      "count", "radix of the shared segment's barrier tree", "libgimpi/coll/coll_shm.c",
      false },
    { "GIMPI_COLL_STAR_MAX", U, "64", "count", "a barrier is a star up to this many members",
      "libgimpi/coll/gimpi_coll.c", false },
    { "GIMPI_COLL_CHUNK", U, "131072", "bytes", "the reduce pipeline's unit (at least 64)",
      "libgimpi/coll/gimpi_coll.c", false },
    { "GIMPI_COLL_WIN", U, "8", "count", "chunks received ahead per child in a reduce",
      "libgimpi/coll/gimpi_coll.c", false },
    { "GIMPI_COLL_RSAG", U, "1", "switch", "0: large reduces do not go by reduce-scatter "
      "and gather", "libgimpi/coll/gimpi_coll.c", false },
    { "GIMPI_COLL_TREE_MIN", U, "16384", "bytes",
      "broadcasts from this size (and GIMPI_COLL_TREE_RECV receivers) go through a tree",
      "libgimpi/coll/gimpi_coll.c libgimpi/coll/impi_world.c", false },
    { "GIMPI_COLL_TREE_RECV", U, "16", "count",
      "broadcasts to this many receivers (and GIMPI_COLL_TREE_MIN bytes) go through a tree",
      "libgimpi/coll/gimpi_coll.c libgimpi/coll/impi_world.c", false },
    /* --- groups and PVM ----------------------------------------------------------- */
    { "GIMPI_GROUPS_SPIN_US", U, "100", "us",
      "how long a task polls for groupd's answer before it blocks (0 to 10000)",
      "libgimpi/groups/gimpi_groups.c", false },
    { "GIMPI_GROUPS_HOLD_MS", U, "10", "ms",
      "group events are applied once they are this old, or at once when needed (0 to 1000)",
      "libgimpi/groups/gimpi_groups.c", false },
    { "GIMPI_GROUPS_SYNC_LEAVE", U, "0", "switch",
      "1: every leave waits for groupd's answer, as PVM's does",
      "libgimpi/groups/gimpi_groups.c", false },
    { "GIMPI_TRACE", U, "", "path",
      "a folder: every task records its calls, messages and group events into "
      "FOLDER/<tid in hex>.gtev (doc/tracing.md); empty or unset: no recording",
      "libgimpi/pvm/pvm_tev.c", false },
    { "GIMPI_TRACE_BUFFER", U, "1048576", "bytes",
      "the size of a task's in-memory trace ring (at least 4096; unset: the "
      "PvmTraceBuffer its parent set with pvm_setopt, if any, else 1 MiB); a full ring is "
      "appended to the task's trace file", "libgimpi/pvm/pvm_tev.c", false },
    { "GIMPI_PVM_INLINE", U, "65536", "bytes",
      "a PVM message body up to this size travels with its header (one copy)",
      "libgimpi/pvm/pvm_transport_impi.c", false },

    /* === set by gimpi for the processes it starts =================================== */
    { "GIMPI_PVM_ABI", S, "0", "switch",
      "1: gimpi-agent puts the folder of PVM's ABI libraries (libpvm3.so.3 ...) first on "
      "LD_LIBRARY_PATH of the tasks it starts (gimpirun -pvm-abi sets it)",
      "programs/run_pvmabi.c", false },
    { "PVMTMASK", S, "(the empty mask)", "mask",
      "PVM's trace mask a task starts with, its parent's mask for its children "
      "(pvm_settmask PvmTaskChild); set by pvm_spawn for the tasks it starts",
      "libgimpi/pvm/pvm_tev.c", false },
    { "GIMPI_PVMTRACER", S, "(no tracer)", "list",
      "the PVM tracer a spawned task starts with, its parent's PvmTraceTid, "
      "PvmTraceContext, PvmTraceCode, PvmTraceBuffer and PvmTraceOptions as five "
      "comma-separated integers; set by pvm_spawn", "libgimpi/pvm/pvm_tev.c", false },
    { "GIMPI_TRACE_OFFSET", S, "0,0", "ns",
      "this host's clock offset to the job's reference clock and its error, "
      "\"offset_ns,err_ns\", written into the trace file's header (gimpirun sets it per "
      "host)", "libgimpi/base/gimpi_trace.c", false },
    { "GIMPI_TAG", S, "0", "switch",
      "not 0: output of spawned tasks is prefixed with their tid (gimpirun -tag sets it)",
      "libgimpi/pvm/pvm_spawn.c", false },
    { "GIMPI_SPAWN_DIR", S, "", "path",
      "the folder of the program that asked the virtual machine's manager for a spawn: "
      "where the manager looks for a bare name after GIMPI_PATH (never passed on to the "
      "task)", "programs/run_proc.c", false },
    { "GIMPI_PVM_CONTEXT", S, "0", "context id",
      "the PVM message context a task starts in (pvm_spawn sets its parent's current one)",
      "libgimpi/pvm/pvm_ctx.c", false },
    { "GIMPI_KEY_FD", S, "", "descriptor",
      "a descriptor holding the key text (gimpi-agent and a task hand it to what they "
      "start; a user may set it)", "libgimpi/base/gimpi_key.c", false },
    { "GIMPI_HOST", S, "(the system's host name)", "name",
      "this host's name in the virtual machine (gimpirun, gimpi-agent)",
      "libgimpi/task/gimpi_task.c libgimpi/groups/gimpi_groups.c libgimpi/coll/coll_shm.c",
      false },
    { "GIMPI_HOST_ADDR", S, "127.0.0.1", "address",
      "where a task started outside gimpirun listens (set by gimpirun and gimpi-agent, or a "
      "user on a machine of a virtual machine)", "libgimpi/task/gimpi_job.c", false },
    { "GIMPI_LISTEN_FD", S, "", "descriptor", "the task's TCP listening socket (hand-over)",
      "libgimpi/task/gimpi_job.c", false },
    { "GIMPI_LOCAL_LISTEN_FD", S, "", "descriptor",
      "the task's Unix-domain listening socket (hand-over)", "libgimpi/task/gimpi_job.c",
      false },
    { "GIMPI_TABLES_FD", S, "", "descriptor", "the memfd with the startup tables (hand-over)",
      "libgimpi/task/gimpi_job.c", false },
    { "GIMPI_GO_FD", S, "", "descriptor", "the pipe of the go byte (hand-over)",
      "libgimpi/task/gimpi_job.c", false },
    { "GIMPI_CLIENT", S, "", "number", "the task's IMPI client rank (hand-over)",
      "libgimpi/task/gimpi_job.c", false },
    { "GIMPI_LOCAL", S, "", "number", "the task's rank within its client (hand-over)",
      "libgimpi/task/gimpi_job.c", false },
    { "GIMPI_TID", S, "", "number", "a spawned task's tid, reserved by its spawner",
      "libgimpi/task/gimpi_task.c programs/proctree.c", false },
    { "GIMPI_TID_TOKEN", S, "", "text", "the token proving the tid block of GIMPI_TID or "
      "GIMPI_TIDBASE", "libgimpi/task/gimpi_task.c", false },
    { "GIMPI_PARENT", S, "", "number", "a spawned task's parent tid",
      "libgimpi/task/gimpi_task.c", false },
    { "GIMPI_PARENT_CONTACT", S, "", "address", "where a spawned task's parent listens "
      "(ADDR:PORT)", "libgimpi/task/gimpi_task.c", false },
    { "GIMPI_SIBLINGS", S, "", "list", "the tids of the same spawn",
      "libgimpi/task/gimpi_task.c", false },
    { "GIMPI_CATCHOUT_FD", S, "", "descriptor", "the socket a spawned task's output goes to "
      "(pvm_catchout)", "libgimpi/task/gimpi_catch.c", false },
    { "GIMPI_BOUND", S, "", "text", "a bound task's core: cpu,lockfd,cpus",
      "libgimpi/base/gimpi_bind.c", false },
    { "GIMPI_JOB_PID", S, "", "number",
      "marks the processes of a job: gimpirun's or the agent's pid, read from their "
      "environment in /proc; a spawner under it marks its tagged lines for it",
      "programs/proctree.c libgimpi/task/gimpi_spawn.c", false },

    /* === tests and benchmarks ======================================================= */
    { "GIMPI_TIDBASE", T, "(the launcher's, else a block of one from groupd)", "number",
      "where the task's tids start (tid = base + world rank + 1)",
      "libgimpi/task/gimpi_task.c", false },
    { "GIMPI_PROGRESS", T, "1", "switch", "0: no progress thread", "libgimpi/net/msg_new.c",
      false },
    { "GIMPI_BENCH_WARM", T, "0", "count", "more warm-up rounds for the benchmarks",
      "bench/bench_stats.c", false },
    { "GIMPI_BENCH_PKTLEN", T, "(IMPI's default)", "bytes",
      "gimpi-bench's packet length", "bench/gimpi_bench.c", false },
    { "GIMPI_BENCH_ACKMARK", T, "(IMPI's default)", "count",
      "gimpi-bench's ackmark", "bench/gimpi_bench.c", false },
    { "GIMPI_BENCH_HIWATER", T, "(IMPI's default)", "count",
      "gimpi-bench's hiwater", "bench/gimpi_bench.c", false },
    { "GIMPI_BENCH_VIEW", T, "", "switch",
      "set: gimpi-bench's group figures run over a view, without groupd",
      "bench/gimpi_bench.c", false },
    { "GIMPI_BENCH_TID_TOKEN", T, "", "text",
      "the token of the tid block gimpi-bench reserved (set by gimpi-bench)",
      "bench/coll_figures.c", false },
    { "GIMPI_BENCH_GIMPIRUN", T, "(gimpirun on PATH)", "path",
      "the gimpirun gimpi-pvm-bench runs", "bench/pvm_figures.c", false },
    { "GIMPI_DANCE_SOCK_DIAG", T, "1", "switch",
      "0: the kernel's socket diagnostics never name a TCP caller's user, as where the "
      "kernel lacks them (the meeting then refuses TCP callers from this machine)",
      "libgimpi/net/gimpi_host.c", false },
    { "GD_BENCH_ENDPOINT", T, "(a fresh ipc endpoint)", "endpoint",
      "the groupd gd-bench measures", "bench/gd_bench.c", false },
};

#undef U
#undef S
#undef T

enum { NROWS = sizeof s_table / sizeof s_table[0] };

/*  The row of name (gimpi_tunables.h). */
const gimpi_tunable_t *gimpi_tunable_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(s_table[i].name, name) == 0)
            return &s_table[i];
    return NULL;
}

/*  The i-th row (gimpi_tunables.h). */
const gimpi_tunable_t *gimpi_tunable_at(size_t i)
{
    return i < NROWS ? &s_table[i] : NULL;
}

/*  The number of rows (gimpi_tunables.h). */
size_t gimpi_tunables_count(void)
{
    return NROWS;
}

/*  The kind as a word (gimpi_tunables.h). */
const char *gimpi_tune_kind_name(gimpi_tune_kind_t kind)
{
    return kind == GIMPI_TUNE_USER ? "tunable" : kind == GIMPI_TUNE_SET ? "set by gimpi" : "test";
}

/*  Stops on a name that is not in the table (built with NDEBUG: says so and goes on). */
static void s_check(const char *name)
{
    if (gimpi_tunable_find(name))
        return;
    fprintf(stderr, "gimpi: internal error: the environment variable %s is read but has no "
            "row in the table of libgimpi/base/gimpi_tunables.c\n", name ? name : "(null)");
#ifndef NDEBUG
    abort();
#endif
}

/*  getenv for a name of the table (gimpi_tunables.h). */
const char *gimpi_env(const char *name)
{
    s_check(name);
    return name ? getenv(name) : NULL;
}

/*  The value of entry when it sets name (gimpi_tunables.h). */
const char *gimpi_env_entry(const char *entry, const char *name)
{
    s_check(name);
    if (!entry || !name)
        return NULL;
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && entry[n] == '=' ? entry + n + 1 : NULL;
}

/*  Reads all of fd (at most ENV_MAX_BYTES) into a new buffer, NUL-terminated; its length
 *  in *len.  NULL with errno. */
static char *s_slurp(int fd, size_t *len)
{
    size_t cap = 16384;
    char *buf = malloc(cap + 1);
    *len = 0;
    ssize_t r = 0;
    while (buf && *len < ENV_MAX_BYTES && (r = read(fd, buf + *len, cap - *len)) > 0)
        if ((*len += (size_t)r) == cap && cap < ENV_MAX_BYTES) {
            char *more = realloc(buf, cap * 2 + 1);
            if (!more)
                break;
            buf = more;
            cap *= 2;
        } else if (*len == cap)
            break;
    if (buf && r < 0) {
        int e = errno;
        free(buf);
        errno = e;
        return NULL;
    }
    if (buf)
        buf[*len] = 0;
    return buf;
}

/*  Another process's environment (gimpi_tunables.h). */
char **gimpi_env_of_pid(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len;
    char *buf = s_slurp(fd, &len);
    int e = errno;
    close(fd);
    if (!buf) {
        errno = e;
        return NULL;
    }
    size_t count = 0;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
        count++;
    size_t ptrs = (count + 1) * sizeof(char *);
    char **envp = malloc(ptrs + len + 1);
    if (envp) {
        char *strings = (char *)envp + ptrs;
        memcpy(strings, buf, len + 1);
        size_t k = 0;
        for (size_t i = 0; i < len; i += strlen(strings + i) + 1)
            envp[k++] = strings + i;
        envp[k] = NULL;
    }
    free(buf);
    if (!envp)
        errno = ENOMEM;
    return envp;
}

/* ------------------------------------------------------------------ doc/tunables.md */

/*  One markdown table cell: the text, with | escaped. */
static void s_md_cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

/*  The readers as a list of code spans. */
static void s_md_readers(FILE *out, const char *readers)
{
    const char *p = readers;
    bool first = true;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n) {
            fprintf(out, "%s`%.*s`", first ? "" : ", ", (int)n, p);
            first = false;
        }
        p += n;
        p += strspn(p, " ");
    }
}

/*  One section: the rows of one kind. */
static void s_md_section(FILE *out, gimpi_tune_kind_t kind, const char *title,
                         const char *intro)
{
    fprintf(out, "\n## %s\n\n%s\n\n", title, intro);
    fprintf(out, "| variable | default | unit | what it means | read in |\n");
    fprintf(out, "|---|---|---|---|---|\n");
    for (size_t i = 0; i < NROWS; i++) {
        const gimpi_tunable_t *t = &s_table[i];
        if (t->kind != kind)
            continue;
        fprintf(out, "| `%s` | ", t->name);
        if (*t->dflt && *t->dflt != '(')
            fputc('`', out);
        s_md_cell(out, *t->dflt ? t->dflt : "unset");
        if (*t->dflt && *t->dflt != '(')
            fputc('`', out);
        fprintf(out, " | %s | ", t->unit);
        s_md_cell(out, t->what);
        fputs(" | ", out);
        s_md_readers(out, t->readers);
        fputs(" |\n", out);
    }
}

/*  doc/tunables.md (gimpi_tunables.h). */
void gimpi_tunables_print_md(FILE *out)
{
    fputs("<!-- Generated from libgimpi/base/gimpi_tunables.c by `gimpi-stat --tunables-md`"
          " (make update-tunables-md); do not edit: t/tunables.sh compares. -->\n"
          "# The environment variables of gimpi\n\n"
          "Every environment variable that a part of gimpi reads, from one table "
          "(`libgimpi/base/gimpi_tunables.c`). Code reads them with `gimpi_env(NAME)`, "
          "which stops on a name missing from the table.\n\n"
          "What a process runs with: `gimpi-stat --config` prints every variable with its "
          "value and where it comes from (the environment or the default), and the "
          "`GIMPI_*` variables of the environment that gimpi does not know (a typo reads "
          "nothing). For a job, run it as one of its tasks (`gimpirun -np 1 gimpi-stat "
          "--config`: the environment gimpirun gives its tasks), or point it at a running "
          "task of this machine (`gimpi-stat --config --pid PID`: the environment the task "
          "was started with), or ask the console (`gimpi config TID`, for a task of this "
          "machine). This is the list Open MPI's `ompi_info --param` and MPICH's "
          "`MPIR_CVAR_*` listing give, and PVM's console showed with `setenv`. See "
          "gimpi-stat(1) and gimpi(1).\n\n"
          "A default in parentheses describes what happens when the variable is unset; "
          "\"unset\" means nothing is done. A switch is on unless it is `0`, except where "
          "the text says \"set\".\n", out);
    s_md_section(out, GIMPI_TUNE_USER, "Settings",
                 "What a user may set to change what gimpi does.");
    s_md_section(out, GIMPI_TUNE_SET, "Set by gimpi",
                 "Set by gimpirun, gimpi-agent or a task for the processes they start, and "
                 "read back there. A user does not set these, except where the text says so.");
    s_md_section(out, GIMPI_TUNE_TEST, "Tests and benchmarks",
                 "Knobs of the test suite and the programs of `bench/`.");
}

/* ------------------------------------------------------------------ --config */

/*  Whether unit is a measure, printed after a number. */
static bool s_measure(const char *unit)
{
    return !strcmp(unit, "s") || !strcmp(unit, "ms") || !strcmp(unit, "us")
           || !strcmp(unit, "bytes");
}

/*  The value of name in envp, or NULL. */
static const char *s_lookup(char *const *envp, const char *name)
{
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *v = gimpi_env_entry(envp[i], name);
        if (v)
            return v;
    }
    return NULL;
}

/*  One variable: name, source, value (NULL: unset without a default), unit, kind. */
static void s_config_line(FILE *out, bool json, bool *first, const char *name,
                          const char *source, const char *value, const char *unit,
                          const char *kind)
{
    if (json) {
        fputs(*first ? "" : ",", out);
        fputs("{\"name\":", out);
        gimpi_json_str(out, name);
        fputs(",\"source\":", out);
        gimpi_json_str(out, source);
        fputs(",\"value\":", out);
        if (value)
            gimpi_json_str(out, value);
        else
            fputs("null", out);
        fputs(",\"unit\":", out);
        gimpi_json_str(out, unit);
        fputs(",\"kind\":", out);
        gimpi_json_str(out, kind);
        fputc('}', out);
    } else {
        fprintf(out, "%-26s %-12s %s", name, source, value ? value : "(unset)");
        if (value && *value && *value != '(' && s_measure(unit))
            fprintf(out, " %s", unit);
        fputc('\n', out);
    }
    *first = false;
}

/*  Whether the environment entry e names a variable that looks like gimpi's (GIMPI_*, or
 *  IMPI's IMPI_AUTH_*). */
static bool s_ours(const char *e)
{
    return !strncmp(e, "GIMPI_", 6) || !strncmp(e, "IMPI_AUTH_", 10);
}

/*  What a process runs with (gimpi_tunables.h). */
int gimpi_tunables_print_config(FILE *out, char *const *envp, bool json)
{
    bool first = true;
    if (json)
        fputs("{\"tunables\":[", out);
    for (size_t i = 0; i < NROWS; i++) {
        const gimpi_tunable_t *t = &s_table[i];
        const char *v = s_lookup(envp, t->name);
        const char *kind = gimpi_tune_kind_name(t->kind);
        if (v)
            s_config_line(out, json, &first, t->name, "environment",
                          t->secret ? "(set, not shown)" : v, t->unit, kind);
        else
            s_config_line(out, json, &first, t->name, "default", *t->dflt ? t->dflt : NULL,
                          t->unit, kind);
    }
    int unknown = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *e = envp[i], *eq = strchr(e, '=');
        if (!eq || !s_ours(e))
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - e), e);
        if (gimpi_tunable_find(name))
            continue;
        s_config_line(out, json, &first, name, "unknown", eq + 1, "", "not read by gimpi");
        unknown++;
    }
    if (json)
        fputs("]}\n", out);
    return unknown;
}
