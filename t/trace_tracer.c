/*  trace_tracer.c — a small PVM tracer task for t/trace_pvm_cmp.sh: it makes itself its
 *  children's trace tid (PvmTraceTid, PvmTraceCode, PvmTraceOptions PvmTraceFull, a mask
 *  of every call), spawns n copies of a program (`trace_tracer [-n N] [-t T] [-a] PROGRAM
 *  [ARGS]`; -a: answer each message with tag 5 by one with tag 6, t/trace_prog.c's
 *  exchange) and decodes the trace messages that arrive (PVM 3.4's self-describing
 *  format: a descriptor the first time an event is sent, bare records later) from every
 *  task they lead to, until T tasks (default n; -t for a program that spawns copies of
 *  its own) have been seen, all have sent their pvm_exit event, and a second passed
 *  without more.  It prints one line per task, "task" and its events in order ("26+" an
 *  entry, "26-" an exit; tids left out so that runs compare), and "bad ..." for anything
 *  it cannot decode.  With -r it registers with pvm_reg_tracer instead (XPVM's way) and
 *  starts the n copies from the shell, then unregisters ("reg RC", "unreg RC").  Left out: the daemon's own events (its table of data ids,
 *  TEV_NEWTASK .. TEV_SPNTASK) and the events of calls made inside another call (PVM
 *  traces those its message handlers make while it enrols: TEV_MHF_INVOKE and what
 *  follows until the outer call's exit), and PVM's group server pvmgs (which a registered
 *  tracer traces too: it is a task of the virtual machine).  Built against PVM 3.4.6 and against gimpi.
 */
#include <pvm3.h>
#include <pvmtev.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CODE = 666, MAXF = 32, NEV = 0x10000, MAXT = 64 };

/*  The field types of one event's descriptor, as they were described. */
typedef struct {
    int n;
    int type[MAXF];
} desc_t;

/*  Unpacks one value of a field of type t (scalar or array); 0 or -1. */
static int s_value(int t)
{
    int cnt = 1, iv;
    long lv;
    double dv;
    char str[1024];
    if (t & TEV_DATA_ARRAY)
        pvm_upkint(&cnt, 1, 1);
    for (int k = 0; k < cnt; k++) {
        switch (t & ~TEV_DATA_ARRAY) {
        case TEV_DATA_INT: case TEV_DATA_UINT: pvm_upkint(&iv, 1, 1); break;
        case TEV_DATA_LONG: case TEV_DATA_ULONG: pvm_upklong(&lv, 1, 1); break;
        case TEV_DATA_DOUBLE: pvm_upkdouble(&dv, 1, 1); break;
        case TEV_DATA_STRING: pvm_upkstr(str); break;
        default: return -1;
        }
    }
    return 0;
}

/*  Skips the daemon's table of data ids (id, name, description ... end marker). */
static void s_data_ids(void)
{
    int id;
    char a[256], b[1024];
    while (pvm_upkint(&id, 1, 1) >= 0 && id != TEV_MARK_DATA_ID_END)
        pvm_upkstr(a), pvm_upkstr(b);
}

/*  A traced task: its tid, open calls, whether it exited, its events. */
typedef struct {
    int tid, depth, done;
    int checked, server;        /* looked up: PVM's group server (pvmgs), left out */
    char log[16384];
} task_t;

/*  What the tracer knows: the descriptors seen and the tasks. */
typedef struct {
    desc_t descs[NEV];
    task_t tasks[MAXT];
    int ntasks;
    int want;                   /* tasks the traced program makes in all (-t; else -n) */
} tracer_t;

/*  The task record of tid (a new one the first time). */
static task_t *s_task(tracer_t *tr, int tid)
{
    for (int i = 0; i < tr->ntasks; i++)
        if (tr->tasks[i].tid == tid)
            return &tr->tasks[i];
    if (tr->ntasks == MAXT)
        return NULL;
    tr->tasks[tr->ntasks].tid = tid;
    return &tr->tasks[tr->ntasks++];
}

/*  Logs event ev of task tid when it belongs to a top-level call. */
static void s_log(tracer_t *tr, int tid, int ev)
{
    task_t *t = s_task(tr, tid);
    int kind = ev & ~(TEV_EVENT_ENTRY | TEV_EVENT_EXIT);
    if (!t || (kind >= TEV_NEWTASK && kind <= TEV_SPNTASK))
        return;
    int open = kind != TEV_EXIT && kind != TEV_MHF_INVOKE;   /* no exit event follows */
    size_t n = strlen(t->log);
    if (ev & TEV_EVENT_ENTRY) {
        if (t->depth == 0)
            snprintf(t->log + n, sizeof t->log - n, " %d+", kind);
        t->depth += open;
    } else {
        t->depth -= t->depth > 0;
        if (t->depth == 0)
            snprintf(t->log + n, sizeof t->log - n, " %d-", kind);
    }
    if (kind == TEV_EXIT)
        t->done = 1;
}

/*  Unpacks one field of type t, keeping an int's value in *iv. */
static int s_field(int t, int *iv)
{
    int v = 0;
    if (t == (TEV_DATA_INT | TEV_DATA_SCALAR)) {
        pvm_upkint(&v, 1, 1);
        *iv = v;
        return 0;
    }
    return s_value(t);
}

/*  Decodes one trace message (events of any task). */
static int s_message(tracer_t *tr)
{
    int mark;
    while (pvm_upkint(&mark, 1, 1) >= 0) {
        if (mark == TEV_MARK_EVENT_BUFFER || mark == TEV_MARK_EVENT_BUFFER_END)
            continue;
        if (mark == TEV_MARK_DATA_ID) {
            s_data_ids();
            continue;
        }
        int ev, tid = 0, iv = 0;
        if (pvm_upkint(&ev, 1, 1) < 0 || ev < 0 || ev >= NEV)
            return printf("bad event\n"), -1;
        desc_t *d = &tr->descs[ev];
        if (mark == TEV_MARK_EVENT_DESC) {
            char name[256];
            pvm_upkstr(name);
            d->n = 0;
            int did, type;
            while (pvm_upkint(&did, 1, 1) >= 0 && did != TEV_MARK_EVENT_DESC_END) {
                pvm_upkint(&type, 1, 1);
                if (d->n < MAXF)
                    d->type[d->n++] = type;
                if (s_field(type, &iv) < 0)
                    return printf("bad type %d\n", type), -1;
                if (did == TEV_DID_TID)
                    tid = iv;
            }
        } else if (mark == TEV_MARK_EVENT_RECORD) {
            for (int f = 0; f < d->n; f++) {
                if (s_field(d->type[f], &iv) < 0)
                    return printf("bad record\n"), -1;
                if (f == 2)             /* time s, time us, tid: always the third */
                    tid = iv;
            }
            int end;
            pvm_upkint(&end, 1, 1);
            if (end != TEV_MARK_EVENT_RECORD_END)
                return printf("bad end %d\n", end), -1;
        } else
            return printf("bad marker %d\n", mark), -1;
        s_log(tr, tid, ev);
    }
    return 0;
}

/*  1 when task t is PVM's group server, which a registered tracer also traces (it
 *  never exits; gimpi has none). */
static int s_server(task_t *t)
{
    if (!t->checked) {
        struct pvmtaskinfo *ti;
        int n = 0;
        t->checked = 1;
        t->server = pvm_tasks(t->tid, &n, &ti) >= 0 && n == 1 && strstr(ti[0].ti_a_out, "pvmgs");
    }
    return t->server;
}

/*  1 when the tasks the program makes have all been seen, and every one has exited
 *  (a copy the program spawns late is waited for, not missed after a quiet second). */
static int s_all_done(tracer_t *tr)
{
    int seen = 0;
    for (int i = 0; i < tr->ntasks; i++) {
        if (s_server(&tr->tasks[i]))
            continue;
        if (!tr->tasks[i].done)
            return 0;
        seen++;
    }
    return seen > 0 && seen >= tr->want;
}

/*  The mask of every call (the daemon's events left out). */
static void s_mask(char *mask)
{
    TEV_MASK_INIT(mask);
    for (int k = TEV_FIRST; k <= TEV_MAX; k++)
        if (k < TEV_NEWTASK || k > TEV_SPNTASK)
            TEV_MASK_SET(mask, k);
}

/*  Starts n copies of argv from the shell (fork and exec: no PVM parent); 0 or -1. */
static int s_shell(int n, char **argv)
{
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execvp(argv[0], argv);
            _exit(127);
        }
        if (pid < 0)
            return -1;
    }
    return 0;
}

/*  Makes this task the tracer: registered (-r, then the program starts from the shell)
 *  or its children's trace tid (then it spawns the program).  0 or -1. */
static int s_start(int reg, int n, char **argv)
{
    Pvmtmask mask;
    s_mask(mask);
    if (reg) {
        int rc = pvm_reg_tracer(pvm_getcontext(), CODE, 0, 0, mask, 0, PvmTraceFull);
        printf("reg %d\n", rc);
        return rc < 0 || s_shell(n, argv) < 0 ? -1 : 0;
    }
    pvm_setopt(PvmTraceTid, pvm_mytid());
    pvm_setopt(PvmTraceCode, CODE);
    pvm_setopt(PvmTraceOptions, PvmTraceFull);
    pvm_settmask(PvmTaskChild, mask);
    int child[64];
    if (pvm_spawn(argv[0], argv[1] ? argv + 1 : NULL, PvmTaskDefault, "", n, child) != n) {
        printf("bad spawn %d\n", child[0]);
        return -1;
    }
    return 0;
}

/*  Receives the trace messages and logs the events of every task they lead to. */
static int s_collect(tracer_t *tr, int answer)
{
    int bad = 0;
    struct timeval busy = { 30, 0 }, quiet = { 1, 0 };
    for (;;) {
        int b = pvm_trecv(-1, -1, s_all_done(tr) ? &quiet : &busy);
        if (b <= 0) {
            if (!s_all_done(tr))
                printf("bad timeout\n"), bad = 1;
            break;
        }
        int bytes, tag, src;
        pvm_bufinfo(b, &bytes, &tag, &src);
        if (tag == CODE)
            bad |= s_message(tr) < 0;
        else if (tag == 5 && answer) {
            int v = 1;
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&v, 1, 1);
            pvm_send(src, 6);
        }
    }
    return bad;
}

/*  Traces the program (see the top); -q: only tries to register and prints the result
 *  (a traced program for the -r runs); -0: the same with a NULL mask; -k: a registered
 *  tracer exits without unregistering. */
int main(int argc, char **argv)
{
    int n = 1, want = 0, answer = 0, reg = 0, keep = 0, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc)
            n = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-t") && a + 1 < argc)
            want = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-a"))
            answer = 1;
        else if (!strcmp(argv[a], "-r"))
            reg = 1;
        else if (!strcmp(argv[a], "-k"))
            keep = 1;
        else if (!strcmp(argv[a], "-0")) {     /* gimpi only: PVM packs NULL and crashes */
            printf("null reg %d\n", pvm_reg_tracer(0, CODE, 0, 0, NULL, 0, PvmTraceFull));
            pvm_exit();
            return 0;
        } else if (!strcmp(argv[a], "-q")) {
            Pvmtmask mask;
            s_mask(mask);
            printf("second reg %d\n", pvm_reg_tracer(0, CODE, 0, 0, mask, 0, PvmTraceFull));
            pvm_exit();
            return 0;
        }
    }
    if (a >= argc || n < 1 || n > 64)
        return 2;
    pvm_mytid();
    pvm_setopt(PvmAutoErr, 0);          /* a message's end is found by running into it */
    tracer_t *tr = calloc(1, sizeof *tr);
    if (!tr || s_start(reg, n, argv + a) < 0) {
        pvm_exit();
        return 1;
    }
    tr->want = want > 0 ? want : n;
    int bad = s_collect(tr, answer);
    for (int i = 0; i < tr->ntasks; i++)
        if (!s_server(&tr->tasks[i]))
            printf("task%s\n", tr->tasks[i].log);
    free(tr);
    if (reg && !keep)
        printf("unreg %d\n", pvm_reg_tracer(-1, -1, -1, -1, "", -1, -1));
    while (reg && wait(NULL) > 0)
        ;
    pvm_exit();
    return bad;
}
