/*  t/dance_callers.c — the hosts' meeting (libgimpi/net/gimpi_host.c) against a host of
 *  the job that calls from an address other than the one it announced, as a LAM host
 *  with several interfaces does when the kernel's choice of source differs from its
 *  announced address, and against a kernel whose socket diagnostics cannot name a
 *  caller's user.  Host 0 meets for real; host 1 is played by hand (a TCP call from a
 *  chosen address, its rank, then a wait until host 0 closes it), from this namespace or,
 *  with "netns NS" (t/dance_callers_netns.sh), from another one.  Checked: the refusal
 *  names the address that called, those announced, and the fixes; with the diagnostics
 *  failing (GIMPI_DANCE_SOCK_DIAG=0), a caller from this machine is refused and one from
 *  elsewhere still admitted.
 */
#include "dp_harness.h"
#include "dance_lib.h"
#include "net/gimpi_host.h"
#include "gtap.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMO 20000               /* bound on every wait, ms */
#define FAIL_MS 2000            /* host 0's meeting when it is to fail */

/*  One case: who host 1 is and what host 0 must make of it. */
typedef struct {
    int n;                      /* hosts (2, or 3 with host 2 absent) */
    uint32_t announce1;         /* host 1's announced address (0: the harness's) */
    const char *from;           /* the address host 1 calls from */
    const char *netns;          /* host 1 calls from this network namespace (or NULL) */
    int no_diag;                /* host 0 runs with GIMPI_DANCE_SOCK_DIAG=0 */
    int meets;                  /* host 0's meeting must succeed (else fail) */
    const char *want[4];        /* substrings of host 0's error when it fails */
} case_t;

/*  Host 1 by hand: argv = FROM TO PORT.  Calls, sends rank 1 and waits until host 0
 *  closes the connection (after its meeting, or at once when it refuses).  0 when so. */
static int s_caller(char **argv)
{
    int fd = dance_call(argv[0], argv[1], atoi(argv[2]), 1);
    if (fd < 0) {
        fprintf(stderr, "# caller: %s -> %s:%s: %s\n", argv[0], argv[1], argv[2],
                strerror(errno));
        return 1;
    }
    uint8_t rank[4] = { 0, 0, 0, 1 };
    int rc = tl_send_all(fd, rank, 4) == 0 && tl_wait_closed(fd, TMO) == 1 ? 0 : 1;
    close(fd);
    return rc;
}

/*  Host 1's process: runs the caller, through `ip netns exec` when the case says. */
static int s_host1(const case_t *c, const impi_tables_t *t)
{
    char to[48], port[16], self[512];
    impi_addr16_format(t->hosts[0].addr, to, sizeof to);
    snprintf(port, sizeof port, "%d", t->hosts[0].port);
    if (!c->netns) {
        char *argv[] = { (char *)c->from, to, port };
        return s_caller(argv);
    }
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return 1;
    self[sl] = '\0';
    char *argv[] = { "ip", "netns", "exec", (char *)c->netns, self, "caller",
                     (char *)c->from, to, port, NULL };
    tl_child_t ch = { .pid = fork(), .out = -1, .err = -1 };
    if (ch.pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "# cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (ch.pid < 0)
        return 1;
    int ws = tl_wait(&ch, TMO);
    return ws >= 0 && WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
}

/*  Host 0: meets with host 1 announced where the case says, and checks the outcome. */
static int s_host0(const case_t *c, const impi_tables_t *t, int lfd)
{
    impi_tables_t tc = *t;
    impi_host_info_t hosts[3];
    memcpy(hosts, t->hosts, (size_t)t->nhosts * sizeof *hosts);
    if (c->announce1)
        impi_addr16_from_ipv4(hosts[1].addr, c->announce1);
    tc.hosts = hosts;
    if (c->no_diag)
        setenv("GIMPI_DANCE_SOCK_DIAG", "0", 1);
    int fds[3];
    char err[1024] = "";
    int rc = gimpi_host_dance(&tc, 0, lfd, -1, fds, c->meets ? TMO : FAIL_MS, err, sizeof err);
    for (int i = 0; i < tc.nhosts; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (c->meets)
        return rc == 0 ? 0 : dp_fail(0, "the meeting failed: %s", err);
    if (rc == 0)
        return dp_fail(0, "the meeting succeeded");
    for (int k = 0; k < 4 && c->want[k]; k++)
        if (!strstr(err, c->want[k]))
            return dp_fail(0, "the error does not say '%s': %s", c->want[k], err);
    return 0;
}

/*  A task of the job: host 0 meets, host 1 calls by hand, host 2 (if any) stays away. */
static int s_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    const case_t *c = arg;
    int rc = rank == 0 ? s_host0(c, t, lfd) : rank == 1 ? s_host1(c, t) : 0;
    close(lfd);
    return rc;
}

/*  Runs one case as a job on base, base + 1, ... */
static void s_case(const char *name, uint32_t base, case_t c)
{
    dp_opts_t o = { c.n, 1024, 10, 20, 60000, 0, 0, 1 };
    int codes[3] = { -1, -1, -1 };
    int rc = dp_run_at(&o, base, s_body, &c, codes);
    ok(rc == 0, "%s", name);
    if (rc)
        diag("  exit codes: host 0 %d, host 1 %d", codes[0], codes[1]);
}

/*  The cases on one machine: the hosts on 127.0.0.1-3. */
static void s_local_cases(void)
{
    const uint32_t lo = 0x7f000001u;
    s_case("a host calling from another address than it announced: the refusal says "
           "which, and what to do", lo, (case_t){ .n = 2, .from = "127.0.0.9",
           .want = { "127.0.0.9", "host 1 announced 127.0.0.2",
                     "IMPI_HOST_NAME=127.0.0.9", "GIMPI_DANCE_CHECK_CALLERS=0" } });
    s_case("a rank from another host's address: the refusal says what to do", lo,
           (case_t){ .n = 3, .from = "127.0.0.3",
           .want = { "announced rank 1, whose address is 127.0.0.2",
                     "IMPI_HOST_NAME=127.0.0.3", "gimpirun -if", "missing hosts: 1 2" } });
    s_case("a caller from this machine whose user the kernel tells is admitted", lo,
           (case_t){ .n = 2, .from = "127.0.0.2", .meets = 1 });
    s_case("socket diagnostics failing: a caller from this machine is refused", lo,
           (case_t){ .n = 2, .from = "127.0.0.2", .no_diag = 1,
           .want = { "comes from this machine, but the kernel's socket diagnostics" } });
}

/*  The cases from another network namespace ns: the hosts on 192.0.2.1-2, host 1 calling
 *  from 192.0.2.99 there (t/dance_netns.sh makes both). */
static void s_netns_cases(const char *ns)
{
    const uint32_t base = 0xC0000201u;     /* 192.0.2.1 */
    s_case("socket diagnostics failing: a caller from another machine is admitted", base,
           (case_t){ .n = 2, .announce1 = 0xC0000263u, .from = "192.0.2.99", .netns = ns,
           .no_diag = 1, .meets = 1 });
    s_case("another machine calling from another address than it announced: the "
           "refusal says which, and what to do", base, (case_t){ .n = 2,
           .from = "192.0.2.99", .netns = ns,
           .want = { "192.0.2.99", "announced 192.0.2.2", "IMPI_HOST_NAME=192.0.2.99",
                     "GIMPI_DANCE_CHECK_CALLERS=0" } });
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "caller"))
        return s_caller(argv + 2);
    const char *ns = argc > 2 && !strcmp(argv[1], "netns") ? argv[2] : NULL;
    plan(NO_PLAN);
    if (ns)
        s_netns_cases(ns);      /* from t/dance_callers_netns.sh */
    else
        s_local_cases();
    done_testing();
}
