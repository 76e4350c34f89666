/*  t/startup_e2e.c — the library's startup client and the real impi-server together, for
 *  1, 2 and 32 clients: every client (a thread with its own connection) runs the whole
 *  startup, all clients agree on the same tables (compared through their printed form),
 *  world ranks and host ranks follow client order, and the server exits 0 after every
 *  FINI.  Each client offers a different shape so that a mix-up would show.
 */
#include "gtap.h"
#include "impi/impi_client.h"
#include "testlib.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    const char *server;
    int rank, nhosts;
    int rc;
    char err[512];
    char *printed;              /* impi_tables_print output */
    size_t printed_len;
    int first_proc, first_host, nprocs;
} client_t;

/*  One client: hosts = rank % 3 + 1, one proc per host, then FINI. */
static void *s_client(void *arg)
{
    client_t *c = arg;
    impi_desc_host_t hosts[3];
    impi_proc_t procs[3];
    for (int h = 0; h < c->nhosts; h++) {
        hosts[h] = (impi_desc_host_t){ .port = 1000 + 10 * c->rank + h, .nprocs = 1,
                                       .ackmark = 10 + (uint32_t)c->rank, .hiwater = 40 };
        impi_addr16_from_ipv4(hosts[h].addr, 0x7f000001);
        memcpy(procs[h].hostid, hosts[h].addr, 16);
        procs[h].pid = 100000 + 10 * c->rank + h;
    }
    impi_desc_t desc = { .rank = c->rank, .nversions = 1, .datalen = 4000 + (uint32_t)c->rank,
                         .tagub = 0x7fffffff - c->rank, .xsize = -1, .maxlinear = -1,
                         .nhosts = c->nhosts, .hosts = hosts, .nprocs = c->nhosts,
                         .procs = procs };
    impi_client_t *cl = impi_client_new(c->server, 20000);
    impi_client_set_auth(cl, 0x1, 0);
    c->rc = impi_client_start(cl, &desc, c->err, sizeof c->err);
    if (c->rc == IMPI_CLIENT_OK) {
        const impi_tables_t *t = impi_client_tables(cl);
        FILE *f = open_memstream(&c->printed, &c->printed_len);
        impi_tables_print(t, f);
        fclose(f);
        char *me = strstr(c->printed, " (this is client");    /* the one line that differs */
        char *end = me ? strchr(me, ')') : NULL;
        if (end) {
            memmove(me, end + 1, strlen(end + 1) + 1);
            c->printed_len = strlen(c->printed);
        }
        c->first_proc = t->clients[c->rank].first_proc;
        c->first_host = t->clients[c->rank].first_host;
        c->nprocs = t->nprocs;
        c->rc = impi_client_fini(cl, c->err, sizeof c->err);
    }
    impi_client_destroy(&cl);
    return NULL;
}

/*  A whole job of n clients through a fresh server. */
static void s_job(int n)
{
    char count[16];
    snprintf(count, sizeof count, "%d", n);
    char prog[4096];
    snprintf(prog, sizeof prog, "%s", tl_prog("programs/impi-server"));
    char *argv[] = { prog, "-server", count, "-host", "127.0.0.1", "-auth", "none", NULL };
    tl_child_t srv;
    if (tl_spawn(argv, &srv) < 0)
        BAIL_OUT("cannot start impi-server");
    char addr[64];
    if (tl_read_line(srv.out, addr, sizeof addr, 20000) < 0)
        BAIL_OUT("impi-server printed no address");
    client_t *c = calloc((size_t)n, sizeof *c);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    for (int i = n - 1; i >= 0; i--) {       /* connect in reverse rank order */
        c[i] = (client_t){ .server = addr, .rank = i, .nhosts = i % 3 + 1 };
        pthread_create(&th[i], NULL, s_client, &c[i]);
    }
    int all_ok = 1, same = 1, ranks = 1, want_procs = 0;
    for (int i = 0; i < n; i++)
        want_procs += i % 3 + 1;
    int proc = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        if (c[i].rc != IMPI_CLIENT_OK) {
            all_ok = 0;
            diag("client %d: %s", i, c[i].err);
            continue;
        }
        same &= c[0].printed && c[i].printed_len == c[0].printed_len &&
                memcmp(c[i].printed, c[0].printed, c[0].printed_len) == 0;
        ranks &= c[i].first_proc == proc && c[i].first_host == proc && c[i].nprocs == want_procs;
        proc += i % 3 + 1;
    }
    ok(all_ok, "%d clients: every client completed the startup and FINI", n);
    ok(same, "%d clients: all agree on the same tables", n);
    ok(ranks, "%d clients: world and host ranks follow client order (%d procs)", n, want_procs);
    if (n == 2 && c[0].printed)
        ok(strstr(c[0].printed, "4000") != NULL, "packet length is the minimum offered (4000)");
    int st = tl_wait(&srv, 20000);
    ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%d clients: impi-server exits 0", n);
    tl_child_close(&srv);
    for (int i = 0; i < n; i++)
        free(c[i].printed);
    free(c);
    free(th);
}

int main(void)
{
    plan(NO_PLAN);
    s_job(1);
    s_job(2);
    s_job(32);
    done_testing();
}
