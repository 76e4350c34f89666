/*  t/ports.c — pinning a task's listening ports for a firewall (GIMPI_PORTS, in
 *  libgimpi/net/gimpi_host.c): listeners take the range's ports in order, a taken port is
 *  skipped, a full range and a malformed value are clear errors, and unset means any port.
 */
#include "gtap.h"
#include "net/gimpi_host.h"
#include "impi/impi_wire.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    plan(NO_PLAN);
    uint8_t lo16[16];
    impi_addr16_from_ipv4(lo16, 0x7f000001u);
    char err[256], spec[32];
    /* below the kernel's ephemeral range (32768-60999), where other tests' connections
       would take ports at random */
    int base = 20000 + (int)(getpid() % 2000) * 4, fd[4], port[4];

    /* someone else holds the range's second port */
    int other;
    unsetenv(GIMPI_ENV_PORTS);
    setenv(GIMPI_ENV_PORTS, (snprintf(spec, sizeof spec, "%d", base + 1), spec), 1);
    other = gimpi_host_listen(lo16, &port[0], err, sizeof err);
    ok(other >= 0 && port[0] == base + 1, "GIMPI_PORTS=%s: exactly that port (%d)", spec, port[0]);

    snprintf(spec, sizeof spec, "%d-%d", base, base + 3);
    setenv(GIMPI_ENV_PORTS, spec, 1);
    for (int i = 0; i < 3; i++)
        fd[i] = gimpi_host_listen(lo16, &port[i], err, sizeof err);
    ok(fd[0] >= 0 && port[0] == base, "GIMPI_PORTS=%s: the first listener takes %d", spec, base);
    ok(fd[1] >= 0 && port[1] == base + 2, "the second skips the taken %d and takes %d", base + 1,
       base + 2);
    ok(fd[2] >= 0 && port[2] == base + 3, "the third takes the last port");
    fd[3] = gimpi_host_listen(lo16, &port[3], err, sizeof err);
    ok(fd[3] < 0 && strstr(err, "no free port") && strstr(err, spec), "a full range: %s", err);
    for (int i = 0; i < 3; i++)
        close(fd[i]);
    close(other);

    static const char *bad[] = { "x", "0", "10-5", "70000", "5-", "-5", "1-2-3", "80 " };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(GIMPI_ENV_PORTS, bad[i], 1);
        int f = gimpi_host_listen(lo16, &port[0], err, sizeof err);
        ok(f < 0 && strstr(err, "not a port range"), "GIMPI_PORTS='%s' refused: %s", bad[i], err);
        if (f >= 0)
            close(f);
    }
    setenv(GIMPI_ENV_PORTS, "", 1);
    fd[0] = gimpi_host_listen(lo16, &port[0], err, sizeof err);
    ok(fd[0] >= 0 && port[0] > 0, "empty: any port (%d)", port[0]);
    close(fd[0]);
    unsetenv(GIMPI_ENV_PORTS);
    fd[0] = gimpi_host_listen(lo16, &port[0], err, sizeof err);
    ok(fd[0] >= 0 && port[0] > 0, "unset: any port (%d)", port[0]);
    close(fd[0]);
    done_testing();
}
