/*  trace_tracer.c — a small PVM tracer task for t/trace_pvm_cmp.sh: it makes itself its
 *  children's trace tid (PvmTraceTid, PvmTraceCode, PvmTraceOptions PvmTraceFull, a mask
 *  of every call), spawns the program argv[1], answers its one message, and decodes the
 *  trace messages that arrive (PVM 3.4's self-describing format: a descriptor the first
 *  time an event is sent, bare records later) until the child's pvm_exit event.  It
 *  prints one line per event of a top-level call, "<event number> <ENTRY|EXIT>", in the
 *  order they came (the task's tid is left out so that runs compare), and "bad ..." for
 *  anything it cannot decode.  Left out: the daemon's own events (its table of data ids,
 *  TEV_NEWTASK .. TEV_SPNTASK) and the events of calls made inside another call (PVM
 *  traces those its message handlers make while it enrols: TEV_MHF_INVOKE and what
 *  follows until the outer call's exit).  Built against PVM 3.4.6 and against gimpi.
 */
#include <pvm3.h>
#include <pvmtev.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CODE = 666, MAXF = 32, NEV = 0x10000 };

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

/*  Prints event ev when it belongs to a top-level call (*depth: calls open). */
static void s_print(int ev, int *depth)
{
    int kind = ev & ~(TEV_EVENT_ENTRY | TEV_EVENT_EXIT);
    if (kind >= TEV_NEWTASK && kind <= TEV_SPNTASK)
        return;
    int open = kind != TEV_EXIT && kind != TEV_MHF_INVOKE;   /* no exit event follows */
    if (ev & TEV_EVENT_ENTRY) {
        if (*depth == 0)
            printf("%d ENTRY\n", kind);
        *depth += open;
    } else {
        *depth -= *depth > 0;
        if (*depth == 0)
            printf("%d EXIT\n", kind);
    }
}

/*  Decodes one trace message; 1 when it held the child's exit event. */
static int s_message(desc_t *descs, int *depth)
{
    int mark, done = 0;
    while (pvm_upkint(&mark, 1, 1) >= 0) {
        if (mark == TEV_MARK_EVENT_BUFFER || mark == TEV_MARK_EVENT_BUFFER_END)
            continue;
        if (mark == TEV_MARK_DATA_ID) {
            s_data_ids();
            continue;
        }
        int ev, tid = 0;
        if (pvm_upkint(&ev, 1, 1) < 0 || ev < 0 || ev >= NEV)
            return printf("bad event\n"), 1;
        desc_t *d = &descs[ev];
        if (mark == TEV_MARK_EVENT_DESC) {
            char name[256];
            pvm_upkstr(name);
            d->n = 0;
            int did, type;
            while (pvm_upkint(&did, 1, 1) >= 0 && did != TEV_MARK_EVENT_DESC_END) {
                pvm_upkint(&type, 1, 1);
                if (d->n < MAXF)
                    d->type[d->n++] = type;
                if (s_value(type) < 0)
                    return printf("bad type %d\n", type), 1;
            }
        } else if (mark == TEV_MARK_EVENT_RECORD) {
            for (int f = 0; f < d->n; f++)
                if (s_value(d->type[f]) < 0)
                    return printf("bad record\n"), 1;
            int end;
            pvm_upkint(&end, 1, 1);
            if (end != TEV_MARK_EVENT_RECORD_END)
                return printf("bad end %d\n", end), 1;
        } else
            return printf("bad marker %d\n", mark), 1;
        (void)tid;
        s_print(ev, depth);
        if ((ev & ~(TEV_EVENT_ENTRY | TEV_EVENT_EXIT)) == TEV_EXIT)
            done = 1;
    }
    return done;
}

/*  Spawns argv[1] traced and logs its events. */
int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int me = pvm_mytid();
    pvm_setopt(PvmAutoErr, 0);          /* a message's end is found by running into it */
    Pvmtmask mask;
    TEV_MASK_INIT(mask);
    for (int k = TEV_FIRST; k <= TEV_MAX; k++)
        if (k < TEV_NEWTASK || k > TEV_SPNTASK)
            TEV_MASK_SET(mask, k);
    pvm_setopt(PvmTraceTid, me);
    pvm_setopt(PvmTraceCode, CODE);
    pvm_setopt(PvmTraceOptions, PvmTraceFull);
    pvm_settmask(PvmTaskChild, mask);
    int child;
    if (pvm_spawn(argv[1], NULL, PvmTaskDefault, "", 1, &child) != 1) {
        printf("bad spawn %d\n", child);
        pvm_exit();
        return 1;
    }
    desc_t *descs = calloc(NEV, sizeof *descs);
    int done = 0, answered = 0, depth = 0;
    struct timeval tmo = { 20, 0 };
    while (!done || !answered) {
        int b = pvm_trecv(-1, -1, &tmo);
        if (b <= 0) {
            printf("bad timeout\n");
            break;
        }
        int bytes, tag, src;
        pvm_bufinfo(b, &bytes, &tag, &src);
        if (tag == CODE)
            done |= s_message(descs, &depth);
        else if (tag == 5 && !answered) {
            int v = 1;
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&v, 1, 1);
            pvm_send(child, 6);
            answered = 1;
        }
    }
    free(descs);
    pvm_exit();
    return 0;
}
