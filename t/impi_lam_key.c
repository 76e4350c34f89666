/*  t/impi_lam_key.c — the KEY as LAM/MPI 7.1.4 reads it (issue #25, point 2).  LAM reads
 *  IMPI_AUTH_KEY with atoll(), which clamps anything at or above 2^63 to 2^63-1, so the
 *  printed key must be the signed decimal of its 64 bits.  Checked: impi_auth_key_format
 *  on edge values read back with atoll(); `impi-server -print-key` for a key file whose
 *  derived KEY is >= 2^63 read back with atoll() equals the 64 bits; the real impi-server
 *  with -auth key accepts the 8 bytes LAM sends for that text (and refuses what LAM
 *  would have sent for the old unsigned text); IMPI_AUTH_KEY given signed or unsigned to
 *  the server means the same key.
 */
#include "gtap.h"
#include "srvtest.h"
#include "base/gimpi_key.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_dir[] = "/tmp/gimpi-lamkey-XXXXXX";
static char s_file[128];

/*  What LAM sends for the text of IMPI_AUTH_KEY: atoll()'s value, as 64 bits. */
static uint64_t s_lam_reads(const char *text)
{
    return (uint64_t)atoll(text);
}

/*  Edge values round-trip through the signed text and atoll(). */
static void test_format(void)
{
    static const uint64_t v[] = { 0, 1, INT64_MAX, 1ull << 63, UINT64_MAX,
                                  16274314732115563071ull /* the key */ };
    int good = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char text[21];
        uint64_t back = 0;
        good += s_lam_reads(impi_auth_key_format(v[i], text)) == v[i]
                && impi_auth_key_parse(text, &back) == 0 && back == v[i];
    }
    cmp_ok(good, "==", (int)(sizeof v / sizeof v[0]), "signed text: atoll() gives the 64 bits");
    char unsigned_text[24];
    snprintf(unsigned_text, sizeof unsigned_text, "%" PRIu64, (uint64_t)16274314732115563071ull);
    uint64_t back = 0;
    ok(impi_auth_key_parse(unsigned_text, &back) == 0 && back == 16274314732115563071ull
       && s_lam_reads(unsigned_text) == (uint64_t)INT64_MAX,
       "the unsigned text is accepted by gimpi, and is what LAM clamps to 2^63-1");
}

/*  A key file (in s_file) whose derived KEY has bit 63 set; returns that KEY. */
static uint64_t s_high_key_file(void)
{
    for (int tries = 0; tries < 200; tries++) {
        gimpi_key_t k;
        gimpi_key_random(&k);
        uint64_t ik = gimpi_key_impi(&k);
        if (ik < 1ull << 63)
            continue;
        unlink(s_file);
        int fd = open(s_file, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || gimpi_key_write_fd(&k, fd) < 0)
            BAIL_OUT("cannot write %s", s_file);
        close(fd);
        return ik;
    }
    BAIL_OUT("no key >= 2^63 in 200 draws");
    return 0;
}

/*  -print-key for that file, read as LAM reads it; KEY as LAM sends it is accepted. */
static void test_print_key(void)
{
    uint64_t derived = s_high_key_file();
    setenv("GIMPI_KEY_FILE", s_file, 1);
    unsetenv("IMPI_AUTH_KEY");
    unsetenv("IMPI_AUTH_NONE");
    char cmd[600], out[64] = "";
    snprintf(cmd, sizeof cmd, "%s -print-key", tl_prog("programs/impi-server"));
    FILE *f = popen(cmd, "r");
    if (!f || !fgets(out, sizeof out, f))
        out[0] = 0;
    if (f)
        pclose(f);
    out[strcspn(out, "\n")] = 0;
    ok(out[0] == '-', "a KEY >= 2^63 is printed negative: %s", out);
    cmp_ok(s_lam_reads(out), "==", derived, "atoll() of the printed KEY is its 64 bits");

    st_server_t srv;
    if (st_start(&srv, "-server", "1", "-auth", "key", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int bad = st_connect(&srv);
    char unsigned_text[24];
    snprintf(unsigned_text, sizeof unsigned_text, "%" PRIu64, derived);
    cmp_ok(st_auth(bad, 1u << IMPI_AUTH_KEY, s_lam_reads(unsigned_text)), "==", IMPI_AUTH_KEY,
           "KEY chosen for LAM's mask");
    ok(tl_wait_closed(bad, ST_TIMEOUT_MS), "what LAM sends for the unsigned text: refused");
    close(bad);
    int a = st_connect(&srv);
    cmp_ok(st_auth(a, 1u << IMPI_AUTH_KEY, s_lam_reads(out)), "==", IMPI_AUTH_KEY,
           "what LAM sends for the printed text: KEY");
    ok(st_join(a, 0) == 0 && st_recv_impi(a) == 1 && st_done_fini(&a, 1) == 0,
       "and the job runs");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
    unsetenv("GIMPI_KEY_FILE");
}

/*  IMPI_AUTH_KEY signed or unsigned means the same 64 bits to the server. */
static void test_env_forms(void)
{
    static const char *forms[] = { "-2172429341593988545", "16274314732115563071" };
    for (int i = 0; i < 2; i++) {
        setenv("IMPI_AUTH_KEY", forms[i], 1);
        st_server_t srv;
        if (st_start(&srv, "-server", "1", (char *)NULL) < 0)
            BAIL_OUT("cannot start impi-server");
        int a = st_connect(&srv);
        cmp_ok(st_auth(a, 1u << IMPI_AUTH_KEY, 16274314732115563071ull), "==", IMPI_AUTH_KEY,
               "IMPI_AUTH_KEY=%s: the same bits accepted", forms[i]);
        ok(st_join(a, 0) == 0 && st_recv_impi(a) == 1 && st_done_fini(&a, 1) == 0, "job runs");
        cmp_ok(st_finish(&srv), "==", 0, "exit 0");
    }
    unsetenv("IMPI_AUTH_KEY");
}

int main(void)
{
    plan(NO_PLAN);
    if (!mkdtemp(s_dir))
        BAIL_OUT("mkdtemp");
    snprintf(s_file, sizeof s_file, "%s/key", s_dir);
    test_format();
    test_print_key();
    test_env_forms();
    unlink(s_file);
    rmdir(s_dir);
    done_testing();
}
