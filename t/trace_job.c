/*  trace_job.c — a small job for t/trace_rec.sh, and the checker of the trace files it
 *  leaves.  `trace_job run`: a master joins group "tj", spawns 3 workers (this program),
 *  all meet in a barrier, the master broadcasts, each worker answers with a message, all
 *  reduce and meet again, leave and exit.  `trace_job check DIR N`: reads every
 *  DIR/<tid>.gtev and prints one line per finding ("files 4", "pairs 6 of 6" ...), each a
 *  fact t/trace_rec.sh checks.
 */
#include <pvm3.h>

#include "base/gimpi_tev.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXM = 4096 };

/*  A message as one side recorded it: (src, dst, seq). */
typedef struct {
    int src, dst, seq;
} msg_t;

/*  What the files hold. */
typedef struct {
    int files, bad, unbalanced, exits, joins, leaves, bin, bout, coll, spawns, calls;
    int nsend, nrecv;
    msg_t send[MAXM], recv[MAXM];
} seen_t;

/*  The job's part of one task. */
static int s_run(char *self)
{
    int me = pvm_mytid(), inst = pvm_joingroup("tj"), v = 0;
    if (inst == 0) {
        int tids[3];
        char *args[] = { "worker", NULL };
        if (pvm_spawn(self, args, PvmTaskDefault, "", 3, tids) != 3)
            return 1;
    }
    pvm_barrier("tj", 4);
    if (inst == 0) {
        v = 42;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        pvm_bcast("tj", 1);
        for (int k = 0; k < 3; k++) {
            pvm_recv(-1, 2);
            pvm_upkint(&v, 1, 1);
        }
    } else {
        pvm_recv(-1, 1);
        pvm_upkint(&v, 1, 1);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&me, 1, 1);
        pvm_send(pvm_gettid("tj", 0), 2);
    }
    int sum = inst;
    pvm_reduce(PvmSum, &sum, 1, PVM_INT, 3, "tj", 0);
    pvm_barrier("tj", 4);
    pvm_lvgroup("tj");
    pvm_exit();
    return 0;
}

/*  Reads one file into s. */
static void s_file(const char *path, seen_t *s)
{
    FILE *f = fopen(path, "rb");
    gimpi_tev_file_t h;
    if (!f || fread(&h, sizeof h, 1, f) != 1 || h.magic != GIMPI_TEV_MAGIC) {
        s->bad++;
        if (f)
            fclose(f);
        return;
    }
    s->files++;
    int depth = 0;
    gimpi_tev_rec_t r;
    char str[1100];
    while (fread(&r, sizeof r, 1, f) == 1) {
        size_t rest = r.len - sizeof r;
        if (r.len < sizeof r || rest > sizeof str || fread(str, 1, rest, f) != rest) {
            s->bad++;
            break;
        }
        switch (r.kind) {
        case GIMPI_TEV_CALL_BEGIN: depth++; s->calls++; break;
        case GIMPI_TEV_CALL_END: s->unbalanced += --depth < 0; break;
        case GIMPI_TEV_SEND:
            if (s->nsend < MAXM)
                s->send[s->nsend++] = (msg_t){ h.tid, r.i[0], r.i[4] };
            break;
        case GIMPI_TEV_RECV:
            if (s->nrecv < MAXM)
                s->recv[s->nrecv++] = (msg_t){ r.i[0], h.tid, r.i[4] };
            break;
        case GIMPI_TEV_EXIT: s->exits++; break;
        case GIMPI_TEV_JOIN: s->joins++; break;
        case GIMPI_TEV_LEAVE: s->leaves++; break;
        case GIMPI_TEV_BARRIER_IN: s->bin++; break;
        case GIMPI_TEV_BARRIER_OUT: s->bout++; break;
        case GIMPI_TEV_COLL_SEND: s->coll++; break;
        case GIMPI_TEV_SPAWN: s->spawns++; break;
        default: break;
        }
    }
    s->unbalanced += depth != 0;
    fclose(f);
}

/*  Checks a folder of trace files. */
static int s_check(const char *dir)
{
    seen_t *s = calloc(1, sizeof *s);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (s && d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 5 && !strcmp(e->d_name + n - 5, GIMPI_TEV_SUFFIX)) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            s_file(path, s);
        }
    }
    if (d)
        closedir(d);
    if (!s)
        return 1;
    int paired = 0;
    for (int i = 0; i < s->nrecv; i++)
        for (int j = 0; j < s->nsend; j++)
            if (s->recv[i].src == s->send[j].src && s->recv[i].dst == s->send[j].dst
                && s->recv[i].seq == s->send[j].seq) {
                paired++;
                break;
            }
    printf("files %d bad %d\n", s->files, s->bad);
    printf("calls %d unbalanced %d\n", s->calls, s->unbalanced);
    printf("pairs %d of %d\n", paired, s->nrecv);
    printf("exits %d joins %d leaves %d\n", s->exits, s->joins, s->leaves);
    printf("barriers in %d out %d\n", s->bin, s->bout);
    printf("coll %d spawns %d\n", s->coll, s->spawns);
    free(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "check"))
        return s_check(argv[2]);
    return s_run(argv[0]);
}
