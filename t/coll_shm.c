/*  t/coll_shm.c — the collectives' shared-memory segment on its own (libgimpi/coll/
 *  coll_shm.c), with forked members and no data plane: the offer codec, every header byte
 *  checked, barrier and chunked reduce across 2, 3, 4 and 8 members against the serial
 *  bracketing (bit for bit, roots first and last, more chunks than slots), a member killed
 *  while the others wait (they fail within the liveness bound, nobody hangs), a corrupt
 *  counter (reported, not followed), and nothing left in /dev/shm.
 */
#include "coll/coll_shm.h"
#include "gimpi.h"
#include "gtap.h"
#include "testlib.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK 256                   /* 32 doubles a slot: many chunks per reduce */
#define COUNT 1000

typedef struct {                    /* shared by the forked members (MAP_SHARED) */
    pid_t pid[16];
} pids_t;

/*  x = 3x + y: neither commutative nor associative, exact in doubles here. */
static int s_lin(void *arg, void *x, const void *y, int cnt)
{
    (void)arg;
    for (int i = 0; i < cnt; i++)
        ((double *)x)[i] = 3 * ((double *)x)[i] + ((const double *)y)[i];
    return 0;
}

/*  The documented bracketing R(j,2w) = R(j,w) op R(j+w,w) of element i. */
static double s_bracket(int n, int j, int w, int i)
{
    if (w == 1)
        return (double)((j * 7 + i) % 13) - 6;
    double a = s_bracket(n, j, w / 2, i);
    return j + w / 2 < n ? 3 * a + s_bracket(n, j + w / 2, w / 2, i) : a;
}

/*  Liveness by /proc: a member whose process is gone or a zombie has left. */
static int s_alive(void *arg, int pos)
{
    pids_t *p = arg;
    char path[64], st[256] = { 0 };
    snprintf(path, sizeof path, "/proc/%d/stat", (int)p->pid[pos]);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t r = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    char *close_paren = strrchr(st, ')');
    return r && close_paren && close_paren[2] != 'Z';
}

/*  Member pos's part of the main test: barriers and reduces; 0 when all came out right. */
static int s_member(coll_shm_t *seg, int n, int pos)
{
    double *x = malloc(COUNT * sizeof *x);
    if (!x)
        return 1;
    for (int round = 0; round < 20; round++) {
        if (coll_shm_barrier(seg, 0, NULL) != 0)
            return 2;
        int root = round % 2 ? n - 1 : 0, count = round % 3 ? COUNT : 1;
        for (int i = 0; i < count; i++)
            x[i] = (double)((pos * 7 + i) % 13) - 6;
        if (coll_shm_reduce(seg, s_lin, NULL, x, count, sizeof *x, root, round % 4 == 0, 0,
                            NULL) != 0)
            return 3;
        for (int i = 0; pos == root && i < count; i++)
            if (x[i] != s_bracket(n, 0, 1 << 5, i))
                return 4;
    }
    free(x);
    return coll_shm_barrier(seg, 0, NULL) != 0 ? 5 : 0;
}

/*  Runs n members (the parent is position 0): body(seg, n, pos) in each; returns the worst
 *  of the children's exit codes and the parent's own, and its time in ms in *ms. */
static int s_run(int n, int (*body)(coll_shm_t *, int, int, pids_t *), pids_t *pids, int64_t *ms)
{
    coll_shm_offer_t offer;
    coll_shm_t *seg = coll_shm_create(n, CHUNK, &offer);
    if (!seg)
        return 100;
    pids->pid[0] = getpid();
    coll_shm_set_alive(seg, s_alive, pids);
    for (int pos = 1; pos < n; pos++) {
        pid_t c = fork();
        if (c == 0) {
            int err;
            coll_shm_destroy(&seg);      /* a member maps it through /proc, as in a job */
            coll_shm_t *mine = coll_shm_attach(&offer, pos, &err);
            if (!mine)
                _exit(90);
            pids->pid[pos] = getpid();
            coll_shm_set_alive(mine, s_alive, pids);
            _exit(body(mine, n, pos, pids));
        }
        pids->pid[pos] = c;
    }
    int64_t t0 = tl_now_ms();
    int worst = body(seg, n, 0, pids);
    *ms = tl_now_ms() - t0;
    for (int pos = 1; pos < n; pos++) {
        int st = 0;
        waitpid(pids->pid[pos], &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code && code != 128 + SIGKILL && !worst)
            worst = code;               /* the victims of the kill test are expected */
    }
    coll_shm_destroy(&seg);
    return worst;
}

static int s_main_body(coll_shm_t *seg, int n, int pos, pids_t *p)
{
    (void)p;
    return s_member(seg, n, pos);
}

/*  Member 2 dies after the first barrier; the others must fail the second one. */
static int s_kill_body(coll_shm_t *seg, int n, int pos, pids_t *p)
{
    (void)n;
    (void)p;
    if (coll_shm_barrier(seg, 0, NULL) != 0)
        return 1;
    if (pos == 2)
        raise(SIGKILL);
    return coll_shm_barrier(seg, 0, NULL) == GIMPI_ESYSERR ? 0 : 2;
}

/*  Member 1 pushes member 0's arrival counter far ahead: both fail, none hangs. */
static int s_counter_body(coll_shm_t *seg, int n, int pos, pids_t *p)
{
    (void)n;
    (void)p;
    if (coll_shm_barrier(seg, 0, NULL) != 0)
        return 1;
    if (pos == 1) {
        uint32_t *arrive0 = (uint32_t *)((uint8_t *)coll_shm_base(seg) + 320);
        __atomic_add_fetch(arrive0, 1000, __ATOMIC_SEQ_CST);
    }
    int rc = coll_shm_barrier(seg, 0, NULL);
    return rc == GIMPI_EBADMSG || rc == GIMPI_ESYSERR ? 0 : 2;
}

/*  Entries of /dev/shm. */
static int s_devshm(void)
{
    DIR *d = opendir("/dev/shm");
    int k = 0;
    while (d && readdir(d))
        k++;
    if (d)
        closedir(d);
    return k;
}

int main(void)
{
    plan(NO_PLAN);
    int shm0 = s_devshm();
    /* the offer */
    coll_shm_offer_t o = { .uid = 1000, .pid = 42, .fd = 7, .n = 4, .chunk = 4096 }, back;
    coll_shm_offer_t made;
    coll_shm_t *seg = coll_shm_create(4, 4096, &made);
    ok(seg != NULL, "a segment of 4 members");
    o.size = made.size;
    uint8_t buf[COLL_SHM_OFFER_SIZE];
    coll_shm_offer_encode(&o, buf);
    ok(coll_shm_offer_decode(buf, sizeof buf, &back) == 0 && back.n == 4 && back.pid == 42
       && back.fd == 7 && back.size == o.size && back.chunk == 4096, "offer round trip");
    ok(coll_shm_offer_decode(buf, sizeof buf - 1, &back) == GIMPI_EBADMSG, "a short offer");
    o.size++;
    coll_shm_offer_encode(&o, buf);
    ok(coll_shm_offer_decode(buf, sizeof buf, &back) == GIMPI_EBADMSG, "a wrong size");
    /* the header: every byte under the checksum counts */
    uint8_t *h = coll_shm_base(seg);
    ok(coll_shm_check_header(h, made.size, 4, made.size, 4096, made.nonce) == 0, "the header");
    int caught = 0;
    for (int i = 0; i < 60; i++) {
        h[i] ^= 0x10;
        caught += coll_shm_check_header(h, made.size, 4, made.size, 4096, made.nonce) != 0;
        h[i] ^= 0x10;
    }
    ok(caught == 60, "every flipped header byte is caught (%d of 60)", caught);
    int err = 0;
    made.nonce[0] ^= 1;
    coll_shm_t *wrong = coll_shm_attach(&made, 1, &err);
    ok(!wrong && err == GIMPI_EBADMSG, "another nonce: not attached (%d)", err);
    made.nonce[0] ^= 1;
    made.boot[0] ^= 1;
    wrong = coll_shm_attach(&made, 1, &err);
    ok(!wrong && err == GIMPI_ENOTIMPL, "another machine: not attached (%d)", err);
    coll_shm_destroy(&seg);
    ok(seg == NULL, "destroyed");

    pids_t *pids = mmap(NULL, sizeof *pids, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
    int ns[] = { 2, 3, 4, 8 };
    for (int i = 0; i < 4; i++) {
        int64_t ms;
        int rc = s_run(ns[i], s_main_body, pids, &ms);
        ok(rc == 0, "barriers and reduces bit for bit, n=%d (%d)", ns[i], rc);
    }
    int64_t ms;
    int rc = s_run(4, s_kill_body, pids, &ms);
    ok(rc == 0 && ms < 2000, "a member killed: the others fail in %lld ms (%d)", (long long)ms,
       rc);
    rc = s_run(3, s_counter_body, pids, &ms);
    ok(rc == 0, "a counter pushed ahead: reported, not followed (%d)", rc);
    ok(s_devshm() == shm0, "nothing left in /dev/shm");
    return tap_exit_status();
}
