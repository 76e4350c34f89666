/*  trace_opts.c — PVM's tracing options and masks in one task (on the in-process
 *  loopback, which drops and notes messages for other tids): PVM 3.4.6's rules for
 *  PvmTraceTid/Code/Options/Buffer and the PvmSelfTrace* forms, the two masks, the events
 *  a call sends to the tracer (entry and exit, top-level calls only, none for calls the
 *  mask leaves out), PvmTraceBuffer's gathering, what pvm_spawn hands the children, and
 *  the GIMPI_TRACE recorder's records of calls and messages.
 */
#include "gtap.h"
#include "pvmtest.h"
#include "pvmtev.h"
#include "base/gimpi_tev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACER 0x40099

/*  Messages the loopback dropped for the tracer since it was made. */
static int s_to_tracer(const pvm_loopback_t *lb)
{
    int k = 0;
    for (int i = 0; i < pvm_loopback_dropped(lb); i++)
        k += pvm_loopback_dropped_dst(lb, i) == TRACER;
    return k;
}

/*  The options: PVM's rules. */
static void s_options(void)
{
    cmp_ok(pvm_getopt(PvmTraceTid), "==", 0, "no tracer for the children at start");
    cmp_ok(pvm_getopt(PvmSelfTraceTid), "==", 0, "nor for the task");
    cmp_ok(pvm_getopt(PvmTraceOptions), "==", 0, "options 0 (PVM's default: nothing sent)");
    cmp_ok(pvm_setopt(PvmTraceTid, 0x40077), "==", PvmBadParam,
           "PvmTraceTid: another task than this one or its own tracer is PvmBadParam");
    cmp_ok(pvm_setopt(PvmTraceTid, PVMTEST_TID), "==", 0, "this task may be the tracer");
    cmp_ok(pvm_getopt(PvmTraceTid), "==", PVMTEST_TID, "... and getopt says so");
    cmp_ok(pvm_setopt(PvmTraceCode, 666), "==", 0, "PvmTraceCode set (was 0)");
    cmp_ok(pvm_getopt(PvmTraceCode), "==", 666, "... 666");
    cmp_ok(pvm_setopt(PvmTraceOptions, 4), "==", PvmBadParam, "PvmTraceOptions 4: PvmBadParam");
    cmp_ok(pvm_setopt(PvmTraceOptions, PvmTraceFull), "==", 0, "PvmTraceFull");
    cmp_ok(pvm_setopt(PvmTraceBuffer, 4096), "==", 0, "PvmTraceBuffer 4096");
    cmp_ok(pvm_getopt(PvmSelfTraceBuffer), "==", 0, "the task's own buffer is apart");
    cmp_ok(pvm_setopt(PvmSelfTraceContext, 5), "==", PvmNotImpl,
           "PvmSelfTraceContext is PvmNotImpl, as in PVM");
    cmp_ok(pvm_setopt(PvmSelfTraceCode, 5), "==", PvmBadParam,
           "PvmSelfTraceCode without a tracer: PvmBadParam");
}

/*  The masks: the task's and the children's, apart. */
static void s_masks(Pvmtmask send)
{
    Pvmtmask m;
    ok(pvm_gettmask(PvmTaskSelf, m) == 0 && strlen(m) == TEV_MASK_LENGTH - 1
       && strspn(m, "@") == TEV_MASK_LENGTH - 1, "the task's mask starts empty");
    ok(pvm_settmask(PvmTaskChild, send) == 0, "the children's mask set");
    ok(pvm_gettmask(PvmTaskChild, m) == 0 && !strcmp(m, send), "... and read back");
    ok(pvm_gettmask(PvmTaskSelf, m) == 0 && strspn(m, "@") == TEV_MASK_LENGTH - 1,
       "the task's own is still empty");
    ok(pvm_settmask(2, send) == PvmBadParam && pvm_settmask(PvmTaskSelf, "zz") == PvmBadParam
       && pvm_gettmask(PvmTaskSelf, NULL) == PvmBadParam, "bad who, text or NULL: PvmBadParam");
}

/*  The events a traced task sends. */
static void s_events(pvm_loopback_t *lb, Pvmtmask send)
{
    cmp_ok(pvm_setopt(PvmSelfTraceTid, TRACER), "==", 0, "the task's tracer: another task");
    pvm_setopt(PvmSelfTraceCode, 777);
    pvm_setopt(PvmSelfTraceOptions, PvmTraceFull);
    pvm_settmask(PvmTaskSelf, send);
    int v = 1, d0 = s_to_tracer(lb);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    cmp_ok(s_to_tracer(lb), "==", d0, "calls the mask leaves out send nothing");
    pvm_send(PVMTEST_TID, 1);
    cmp_ok(s_to_tracer(lb), "==", d0 + 2, "pvm_send: an entry and an exit event");
    Pvmtmask m;
    memcpy(m, send, sizeof m);
    TEV_MASK_SET(m, TEV_INITSEND);
    TEV_MASK_SET(m, TEV_MKBUF);
    pvm_settmask(PvmTaskSelf, m);
    pvm_initsend(PvmDataDefault);
    cmp_ok(s_to_tracer(lb), "==", d0 + 4,
           "pvm_initsend: two events, none for the pvm_mkbuf it makes inside");
    pvm_setopt(PvmSelfTraceBuffer, 100000);
    pvm_send(PVMTEST_TID, 1);
    pvm_send(PVMTEST_TID, 1);
    cmp_ok(s_to_tracer(lb), "==", d0 + 4, "PvmSelfTraceBuffer: events are gathered");
    pvm_setopt(PvmSelfTraceBuffer, 0);
    cmp_ok(s_to_tracer(lb), "==", d0 + 5, "changing it sends what was gathered, as one");
    pvm_setopt(PvmSelfTraceOptions, PvmTraceCount);
    pvm_send(PVMTEST_TID, 1);
    cmp_ok(s_to_tracer(lb), "==", d0 + 5, "PvmTraceCount sends nothing (not built)");
    pvm_setopt(PvmSelfTraceOptions, PvmTraceFull);
    pvm_setopt(PvmSelfTraceTid, 0);
    pvm_send(PVMTEST_TID, 1);
    cmp_ok(s_to_tracer(lb), "==", d0 + 5, "no tracer: nothing");
    while (pvm_nrecv(-1, -1) > 0)
        ;
}

/*  What a spawn hands the children. */
static void s_spawn_env(Pvmtmask send)
{
    pvm_setopt(PvmTraceTid, PVMTEST_TID);
    pvm_setopt(PvmTraceCode, 666);
    pvm_setopt(PvmTraceBuffer, 4096);
    pvm_settmask(PvmTaskChild, send);
    int tid;
    pvm_spawn("true", NULL, PvmTaskDefault, "", 1, &tid);   /* no spawner on a loopback */
    const char *tr = getenv("GIMPI_PVMTRACER"), *mask = getenv("PVMTMASK");
    char want[64];
    snprintf(want, sizeof want, "%d,0,666,4096,%d", PVMTEST_TID, PvmTraceFull);
    is(tr, want, "the children's tracer goes in GIMPI_PVMTRACER");
    is(mask, send, "their mask in PVMTMASK");
}

/*  Reads a recorder's file: counts by kind; the first SEND and RECV. */
static int s_read(const char *path, int *bykind, gimpi_tev_rec_t *send, gimpi_tev_rec_t *recv,
                  int *names_ok)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    gimpi_tev_file_t h;
    int rc = fread(&h, sizeof h, 1, f) == 1 && h.magic == GIMPI_TEV_MAGIC ? 0 : -2;
    gimpi_tev_rec_t r;
    char s[1100];
    while (rc == 0 && fread(&r, sizeof r, 1, f) == 1 && r.kind < 32
           && r.len - sizeof r < sizeof s && fread(s, 1, r.len - sizeof r, f) == r.len - sizeof r) {
        bykind[r.kind]++;
        if (r.kind == GIMPI_TEV_SEND && !send->len)
            *send = r;
        if (r.kind == GIMPI_TEV_RECV && !recv->len)
            *recv = r;
        if (r.kind == GIMPI_TEV_CALL_BEGIN && r.ev == TEV_SEND)
            *names_ok += r.slen == 8 && !memcmp(s, "pvm_send", 8);
    }
    fclose(f);
    return rc;
}

/*  The recorder: calls and messages into DIR/<tid>.gtev. */
static void s_recorder(void)
{
    char dir[] = "/tmp/trace_opts.XXXXXX";
    if (!mkdtemp(dir))
        BAIL_OUT("mkdtemp");
    setenv("GIMPI_TRACE", dir, 1);
    unsetenv("GIMPI_PVMTRACER");
    unsetenv("PVMTMASK");
    pvmtest_setup(0x40003, 0);
    int v = 5;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(0x40003, 9);
    pvm_recv(-1, 9);
    pvm_upkint(&v, 1, 1);
    pvm_ctx_install(NULL);              /* the context goes: the ring is written */
    unsetenv("GIMPI_TRACE");
    char path[128];
    snprintf(path, sizeof path, "%s/40003.gtev", dir);
    int bykind[32] = { 0 }, names = 0;
    gimpi_tev_rec_t send = { 0 }, recv = { 0 };
    ok(s_read(path, bykind, &send, &recv, &names) == 0, "GIMPI_TRACE: the task's file is there");
    cmp_ok(bykind[GIMPI_TEV_CALL_BEGIN], "==", 5, "5 calls begun");
    cmp_ok(bykind[GIMPI_TEV_CALL_END], "==", 5, "5 calls ended");
    cmp_ok(names, "==", 1, "a call's record names it (pvm_send)");
    ok(send.len && send.i[0] == 0x40003 && send.i[1] == 9 && send.i[4] == 1 && send.i[3] > 0,
       "SEND: destination, tag, bytes, seq 1");
    ok(recv.len && recv.i[0] == 0x40003 && recv.i[1] == 9 && recv.i[4] == 1
       && recv.i[3] == send.i[3], "RECV: source, tag, the same bytes, seq 1");
    cmp_ok(bykind[GIMPI_TEV_QUEUE], "==", 2, "QUEUE on arrival and on take");
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
}

int main(void)
{
    plan(NO_PLAN);
    unsetenv("GIMPI_TRACE");
    unsetenv("GIMPI_PVMTRACER");
    unsetenv("PVMTMASK");
    pvm_loopback_t *lb = pvmtest_setup(PVMTEST_TID, 0);
    Pvmtmask send;
    TEV_MASK_INIT(send);
    TEV_MASK_SET(send, TEV_SEND);
    s_options();
    s_masks(send);
    s_events(lb, send);
    s_spawn_env(send);
    s_recorder();
    done_testing();
}
