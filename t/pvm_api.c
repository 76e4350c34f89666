/*  t/pvm_api.c — the PVM API's buffer, packing, option and error calls on the loopback
 *  transport: every pk/upk family through every encoding (strided), long -6 and
 *  5000000000 through PvmDataDefault, buffer ids and active buffers, freeing the active
 *  buffer, bufinfo, every error code with its PvmAutoErr diagnostic, pvm_perror's format,
 *  setopt/getopt, pvmdebmask, pvmsleep/pvmgetclock, PvmSum & co called directly, and
 *  gimpi_strerror against PVM 3.4.6's table.
 */
#include "gtap.h"
#include "gimpi.h"
#include "pvmtest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

/*  Packs every family strided into a new send buffer of `enc`, sends it to ourselves,
 *  receives and unpacks; 1 if every value came back. */
static int s_families(int enc)
{
    char by[4] = { -1, 2, -3, 4 }, by2[4] = { 0 };
    short sh[4] = { -30000, 1, -2, 3 }, sh2[4] = { 0 };
    int in[4] = { -2000000000, 1, 2, 3 }, in2[4] = { 0 };
    long lo[4] = { -6, 5000000000L, -5000000000L, 7 }, lo2[4] = { 0 };
    float fl[4] = { 1.5f, -2.5f, 3, 4 }, fl2[4] = { 0 };
    double db[4] = { 1e300, -2, 3, 4 }, db2[4] = { 0 };
    float cx[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, cx2[8] = { 0 };
    double dc[8] = { 1, -1, 2, -2, 3, -3, 4, -4 }, dc2[8] = { 0 };
    unsigned short us[4] = { 65535, 1, 2, 3 }, us2[4] = { 0 };
    unsigned int ui[4] = { 4000000000u, 1, 2, 3 }, ui2[4] = { 0 };
    unsigned long ul[4] = { 18000000000000000000UL, 1, 2, 3 }, ul2[4] = { 0 };
    char str[32];
    int rc = pvm_initsend(enc) > 0 ? 0 : -1;
    rc |= pvm_pkbyte(by, 2, 2) | pvm_pkshort(sh, 2, 2) | pvm_pkint(in, 4, 1)
        | pvm_pklong(lo, 4, 1) | pvm_pkfloat(fl, 2, 2) | pvm_pkdouble(db, 4, 1)
        | pvm_pkcplx(cx, 2, 2) | pvm_pkdcplx(dc, 4, 1) | pvm_pkushort(us, 4, 1)
        | pvm_pkuint(ui, 4, 1) | pvm_pkulong(ul, 4, 1) | pvm_pkstr("hello, world");
    rc |= pvm_send(PVMTEST_TID, 10 + enc);
    rc |= pvm_recv(PVMTEST_TID, 10 + enc) > 0 ? 0 : -1;
    rc |= pvm_upkbyte(by2, 2, 2) | pvm_upkshort(sh2, 2, 2) | pvm_upkint(in2, 4, 1)
        | pvm_upklong(lo2, 4, 1) | pvm_upkfloat(fl2, 2, 2) | pvm_upkdouble(db2, 4, 1)
        | pvm_upkcplx(cx2, 2, 2) | pvm_upkdcplx(dc2, 4, 1) | pvm_upkushort(us2, 4, 1)
        | pvm_upkuint(ui2, 4, 1) | pvm_upkulong(ul2, 4, 1) | pvm_upkstr(str);
    if (rc)
        return 0;
    return by2[0] == -1 && by2[2] == -3 && by2[1] == 0 && sh2[0] == -30000 && sh2[2] == -2
        && sh2[1] == 0 && !memcmp(in, in2, sizeof in) && !memcmp(lo, lo2, sizeof lo)
        && fl2[0] == 1.5f && fl2[2] == 3 && fl2[1] == 0 && !memcmp(db, db2, sizeof db)
        && cx2[0] == 1 && cx2[1] == 2 && cx2[4] == 5 && cx2[5] == 6 && cx2[2] == 0
        && !memcmp(dc, dc2, sizeof dc) && !memcmp(us, us2, sizeof us)
        && !memcmp(ui, ui2, sizeof ui) && !memcmp(ul, ul2, sizeof ul)
        && !strcmp(str, "hello, world");
}

/*  Calls for the capture tests. */
static int s_call_pkint_nobuf(void *arg) { (void)arg; int v = 1; return pvm_pkint(&v, 1, 1); }
static int s_call_upk_past(void *arg) { (void)arg; int v; return pvm_upkint(&v, 1, 1); }
static int s_call_initsend_bad(void *arg) { (void)arg; return pvm_initsend(9); }
static int s_call_getopt_bad(void *arg) { (void)arg; return pvm_getopt(999); }
static int s_call_perror(void *arg) { return pvm_perror(arg); }
static int s_call_parent(void *arg) { (void)arg; return pvm_parent(); }

/*  gimpi_strerror gives PVM 3.4.6's texts. */
static void s_check_strerror(void)
{
    /* gimpi_strerror: PVM 3.4.6's table (errstr list) */
    is(gimpi_strerror(0), "Error 0", "strerror 0");
    is(gimpi_strerror(-1), "Error 1", "strerror -1 (unused code)");
    is(gimpi_strerror(-9), "Error 9", "strerror -9 (unused code)");
    is(gimpi_strerror(PvmNoData), "End of buffer", "strerror PvmNoData");
    is(gimpi_strerror(PvmNoBuf), "No current buffer", "strerror PvmNoBuf");
    is(gimpi_strerror(PvmDupHost), "Duplicate host", "strerror PvmDupHost");
    is(gimpi_strerror(PvmExists), "Already Exists", "strerror PvmExists");
    is(gimpi_strerror(PvmParentNotSet), "Spawning parent set PvmNoParent", "strerror -35");
    is(gimpi_strerror(-37), "Unknown Error", "strerror past the table");
    is(gimpi_strerror(5), "Unknown Error", "strerror positive");
}

/*  Enrolment that fails (PvmSysErr), then from the shell on the real transport. */
static void s_check_enrolment(void)
{
    /* enrolment that fails (a broken launcher environment): PvmSysErr */
    pvm_ctx_install(pvm_ctx_new());
    pvm_setopt(PvmAutoErr, 0);
    setenv("GIMPI_LISTEN_FD", "999", 1);
    int b0 = pvm_initsend(PvmDataDefault);
    cmp_ok(b0, ">", 0, "buffers work before enrolment");
    cmp_ok(pvm_mytid(), "==", PvmSysErr, "pvm_mytid when enrolment fails: PvmSysErr");
    cmp_ok(pvm_errno, "==", PvmSysErr, "... and pvm_errno");
    cmp_ok(pvm_send(0x40002, 1), "==", PvmSysErr, "send when enrolment fails: PvmSysErr");
    unsetenv("GIMPI_LISTEN_FD");
    /* from the shell: the real transport makes a one-task job */
    cmp_ok(pvm_mytid(), ">", 0, "pvm_mytid from the shell enrols (a one-task job)");
    cmp_ok(pvm_parent(), "==", PvmNoParent, "... with no parent");
    cmp_ok(pvm_send(pvm_mytid() + 1, 1), "==", PvmBadParam, "send to a tid outside the job");
}

/*  Every pack family in every encoding, longs through PvmDataDefault, InPlace. */
static void s_check_encodings(void)
{
    /* every family, every encoding */
    ok(s_families(PvmDataDefault), "every pk/upk family through PvmDataDefault, strided");
    ok(s_families(PvmDataRaw), "every pk/upk family through PvmDataRaw, strided");
    ok(s_families(PvmDataInPlace), "every pk/upk family through PvmDataInPlace, strided");

    /* long -6 and 5000000000 through PvmDataDefault, exactly */
    long lv[2] = { -6, 5000000000L }, lr[2] = { 0, 0 };
    pvm_initsend(PvmDataDefault);
    pvm_pklong(lv, 2, 1);
    pvm_send(PVMTEST_TID, 3);
    pvm_recv(-1, 3);
    cmp_ok(pvm_upklong(lr, 2, 1), "==", 0, "upklong");
    cmp_ok(lr[0], "==", -6, "long -6 survives PvmDataDefault (sign kept)");
    cmp_ok(lr[1], "==", 5000000000L, "long 5000000000 survives PvmDataDefault (64 bits)");
    cmp_ok(pvm_upklong(lr, 1, 1), "==", PvmNoData, "unpack past the end: PvmNoData");
    cmp_ok(pvm_errno, "==", PvmNoData, "... sets pvm_errno");

    /* InPlace sends the data as it is at send time */
    int ip = 1, ipr = 0;
    pvm_initsend(PvmDataInPlace);
    pvm_pkint(&ip, 1, 1);
    ip = 2;
    pvm_send(PVMTEST_TID, 4);
    pvm_recv(-1, 4);
    pvm_upkint(&ipr, 1, 1);
    cmp_ok(ipr, "==", 2, "PvmDataInPlace takes the data at send time");
}

/*  Buffer ids, pvm_initsend and pvm_bufinfo of a local buffer; returns the active send
 *  buffer, which holds the int 42. */
static int s_check_buffers(void)
{
    /* buffer ids, set/get */
    pvm_freebuf(pvm_getsbuf());
    pvm_freebuf(pvm_getrbuf());
    cmp_ok(pvm_getsbuf(), "==", 0, "freeing the active send buffer leaves none");
    cmp_ok(pvm_getrbuf(), "==", 0, "freeing the active receive buffer leaves none");
    int a = pvm_mkbuf(PvmDataDefault), b = pvm_mkbuf(PvmDataRaw);
    cmp_ok(a, ">", 0, "mkbuf gives an id > 0");
    ok(b > 0 && b != a, "a second mkbuf gives another id");
    cmp_ok(pvm_getsbuf(), "==", 0, "mkbuf does not make the buffer active");
    cmp_ok(pvm_setsbuf(a), "==", 0, "setsbuf returns the old id (none)");
    cmp_ok(pvm_setsbuf(b), "==", a, "setsbuf returns the old id");
    cmp_ok(pvm_getsbuf(), "==", b, "getsbuf sees it");
    cmp_ok(pvm_setrbuf(a), "==", 0, "setrbuf returns the old id (none)");
    cmp_ok(pvm_getrbuf(), "==", a, "getrbuf sees it");
    cmp_ok(pvm_setrbuf(b), "==", a, "making the send buffer the receive buffer...");
    cmp_ok(pvm_getsbuf(), "==", 0, "... leaves no send buffer (as PVM)");
    cmp_ok(pvm_setsbuf(0), "==", 0, "setsbuf(0)");
    cmp_ok(pvm_setrbuf(0), "==", b, "setrbuf(0) returns the old one");
    cmp_ok(pvm_freebuf(0), "==", 0, "freebuf(0) is a no-op");
    cmp_ok(pvm_freebuf(a), "==", 0, "freebuf");
    cmp_ok(pvm_freebuf(a), "==", PvmNoSuchBuf, "freeing twice: PvmNoSuchBuf");
    cmp_ok(pvm_freebuf(-3), "==", PvmBadParam, "freebuf(-3): PvmBadParam");
    cmp_ok(pvm_setsbuf(1234), "==", PvmNoSuchBuf, "setsbuf(unknown): PvmNoSuchBuf");
    cmp_ok(pvm_setrbuf(1234), "==", PvmNoSuchBuf, "setrbuf(unknown): PvmNoSuchBuf");
    cmp_ok(pvm_setsbuf(-1), "==", PvmBadParam, "setsbuf(-1): PvmBadParam");
    cmp_ok(pvm_mkbuf(PvmDataTrace), "==", PvmBadParam, "mkbuf(PvmDataTrace): PvmBadParam");
    cmp_ok(pvm_mkbuf(-1), "==", PvmBadParam, "mkbuf(-1): PvmBadParam");
    int c = pvm_mkbuf(PvmDataDefault);
    cmp_ok(c, "==", a, "the lowest free id is reused");
    pvm_freebuf(b);
    pvm_freebuf(c);

    /* initsend */
    int s1 = pvm_initsend(PvmDataDefault);
    cmp_ok(s1, ">", 0, "initsend returns the new active buffer's id");
    cmp_ok(pvm_getsbuf(), "==", s1, "... which is active");
    int v = 42;
    pvm_pkint(&v, 1, 1);
    int s2 = pvm_initsend(PvmDataRaw);
    cmp_ok(pvm_getsbuf(), "==", s2, "a second initsend makes a new buffer active");
    int bytes = -1, tag = -1, tid = -1;
    cmp_ok(pvm_bufinfo(s1, &bytes, &tag, &tid), "==", PvmNoSuchBuf,
           "... and freed the old one");
    cmp_ok(pvm_initsend(9), "==", PvmBadParam, "initsend(9): PvmBadParam");
    cmp_ok(pvm_getsbuf(), "==", s2, "... and the old buffer stays active");

    /* bufinfo of a local buffer */
    pvm_pkint(&v, 1, 1);
    cmp_ok(pvm_bufinfo(s2, &bytes, &tag, &tid), "==", 0, "bufinfo of a send buffer");
    ok(bytes == (int)sizeof v && tag == 0 && tid == PVMTEST_TID,
       "... bytes %d, tag 0, our tid", bytes);
    cmp_ok(pvm_bufinfo(s2, NULL, NULL, NULL), "==", 0, "bufinfo with NULL outputs");
    cmp_ok(pvm_bufinfo(0, &bytes, &tag, &tid), "==", PvmBadParam, "bufinfo(0): PvmBadParam");
    cmp_ok(pvm_bufinfo(999, &bytes, &tag, &tid), "==", PvmNoSuchBuf,
           "bufinfo(999): PvmNoSuchBuf");
    return s2;
}

/*  Pack and unpack errors (s2: a send buffer holding the int 42), and the options. */
static void s_check_errors_options(int s2)
{
    /* pack and unpack errors */
    int v = 0;
    pvm_setsbuf(0);
    cmp_ok(pvm_pkint(&v, 1, 1), "==", PvmNoBuf, "pkint with no send buffer: PvmNoBuf");
    cmp_ok(pvm_pkstr("x"), "==", PvmNoBuf, "pkstr with no send buffer: PvmNoBuf");
    cmp_ok(pvm_upkint(&v, 1, 1), "==", PvmNoBuf, "upkint with no receive buffer: PvmNoBuf");
    char sbuf[16];
    cmp_ok(pvm_upkstr(sbuf), "==", PvmNoBuf, "upkstr with no receive buffer: PvmNoBuf");
    pvm_setsbuf(s2);
    cmp_ok(pvm_pkint(&v, -1, 1), "==", PvmBadParam, "pkint n = -1: PvmBadParam");
    cmp_ok(pvm_pkint(NULL, 1, 1), "==", PvmBadParam, "pkint NULL: PvmBadParam (PVM crashes)");
    cmp_ok(pvm_pkint(&v, 0, 1), "==", 0, "pkint n = 0 packs nothing");
    cmp_ok(pvm_pkstr(NULL), "==", PvmBadParam, "pkstr NULL: PvmBadParam");
    pvm_send(PVMTEST_TID, 5);
    pvm_recv(-1, 5);
    cmp_ok(pvm_upkstr(sbuf), "==", PvmNoData, "upkstr of an int: PvmNoData");
    int two[2];
    cmp_ok(pvm_upkint(two, 2, 1), "==", PvmNoData, "upkint past the end: PvmNoData");
    cmp_ok(pvm_upkint(two, 1, 1), "==", 0, "... and nothing was consumed");
    cmp_ok(two[0], "==", 42, "... the int is still there");

    /* options */
    cmp_ok(pvm_getopt(PvmAutoErr), "==", 0, "getopt(PvmAutoErr) (set to 0 for the tests)");
    cmp_ok(pvm_setopt(PvmAutoErr, 1), "==", 0, "setopt returns the old value");
    cmp_ok(pvm_getopt(PvmAutoErr), "==", 1, "getopt sees the new one");
    cmp_ok(pvm_setopt(PvmAutoErr, 0), "==", 1, "back to 0");
    cmp_ok(pvm_getopt(PvmRoute), "==", PvmAllowDirect, "PvmRoute defaults to PvmAllowDirect");
    cmp_ok(pvm_setopt(PvmRoute, PvmRouteDirect), "==", PvmAllowDirect, "PvmRoute accepted");
    cmp_ok(pvm_getopt(PvmRoute), "==", PvmRouteDirect, "... and remembered");
    cmp_ok(pvm_setopt(PvmRoute, 7), "==", PvmBadParam, "PvmRoute 7: PvmBadParam");
    cmp_ok(pvm_setopt(PvmDebugMask, 5), "==", 0, "PvmDebugMask returns the old mask");
    cmp_ok(pvmdebmask, "==", 5, "... which is pvmdebmask");
    pvmdebmask = 3;
    cmp_ok(pvm_getopt(PvmDebugMask), "==", 3, "a write to pvmdebmask shows in getopt");
    pvmdebmask = 0;
    cmp_ok(pvm_setopt(999, 1), "==", PvmBadParam, "setopt(unknown): PvmBadParam");
    cmp_ok(pvm_getopt(999), "==", PvmBadParam, "getopt(unknown): PvmBadParam");
    cmp_ok(pvm_getopt(0), "==", PvmBadParam, "getopt(0): PvmBadParam");
    cmp_ok(pvm_setopt(PvmAutoErr, 4), "==", PvmBadParam, "PvmAutoErr 4: PvmBadParam");
}

/*  What PvmAutoErr 1, 2 and 3 and pvm_perror print (and do). */
static void s_check_diagnostics(void)
{
    char err[512];
    int v = 0;
    /* diagnostics: PvmAutoErr 1 prints libpvm [t<tid>]: fn(): text */
    pvm_setopt(PvmAutoErr, 1);
    pvm_setsbuf(0);
    cmp_ok(pvmtest_capture(s_call_pkint_nobuf, NULL, err, sizeof err), "==", PvmNoBuf,
           "pkint with no buffer, AutoErr 1");
    is(err, "libpvm [t40001]: pvm_pkint(): No current buffer\n", "... prints PVM's line");
    pvmtest_capture(s_call_upk_past, NULL, err, sizeof err);
    is(err, "libpvm [t40001]: pvm_upkint(): End of buffer\n", "upk past the end prints");
    pvmtest_capture(s_call_initsend_bad, NULL, err, sizeof err);
    is(err, "libpvm [t40001]: pvm_mkbuf(): Bad parameter\n"
            "libpvm [t40001]: pvm_initsend(): Bad parameter\n",
       "initsend(9) reports mkbuf and initsend, as PVM");
    pvmtest_capture(s_call_getopt_bad, NULL, err, sizeof err);
    is(err, "libpvm [t40001]: pvm_getopt(): Bad parameter\n", "getopt(unknown) prints");
    cmp_ok(pvmtest_capture(s_call_parent, NULL, err, sizeof err), "==", PvmNoParent,
           "pvm_parent from the shell: PvmNoParent");
    is(err, "", "... printed nothing, as PVM");
    cmp_ok(pvm_errno, "==", PvmNoParent, "... and set pvm_errno");
    pvm_setopt(PvmAutoErr, 0);
    pvmtest_capture(s_call_pkint_nobuf, NULL, err, sizeof err);
    is(err, "", "PvmAutoErr 0 prints nothing");
    cmp_ok(pvm_errno, "==", PvmNoBuf, "... but sets pvm_errno");

    /* PvmAutoErr 2 exits after the diagnostic, 3 aborts */
    for (int mode = 2; mode <= 3; mode++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            dup2(fd, 2);
            pvm_setopt(PvmAutoErr, mode);
            pvm_setsbuf(0);
            pvm_pkint(&v, 1, 1);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (mode == 2)
            ok(WIFEXITED(st) && WEXITSTATUS(st) != 0, "PvmAutoErr 2: the task exits on error");
        else
            ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "PvmAutoErr 3: the task aborts");
    }

    /* pvm_perror */
    pvm_errno = PvmNoGroup;
    pvmtest_capture(s_call_perror, "my message", err, sizeof err);
    is(err, "libpvm [t40001]: my message: No such group\n", "pvm_perror format");
    pvm_errno = -50;
    pvmtest_capture(s_call_perror, "x", err, sizeof err);
    is(err, "libpvm [t40001]: x: Unknown Error\n", "pvm_perror of an unknown code");
    pvm_ctx_install(pvm_ctx_new());
    pvm_errno = PvmBadParam;
    pvmtest_capture(s_call_perror, "y", err, sizeof err);
    char want[128];
    snprintf(want, sizeof want, "libpvm [pid%d]: y: Bad parameter\n", (int)getpid());
    is(err, want, "pvm_perror before enrolment names the pid");
    pvmtest_setup(PVMTEST_TID, 0);
}

/*  pvm_packf / pvm_unpackf, the helpers and the reduce functions called directly. */
static void s_check_packf_helpers(void)
{
    /* pvm_packf / pvm_unpackf */
    {
        int arr[6] = { 1, 2, 3, 4, 5, 6 }, arr2[3] = { 0 }, iv = 0, cnt = 3;
        double dv[2] = { 2.5, -1 }, dv2[2] = { 0 };
        long lval = 0;
        short shv = 0;
        unsigned uv = 0;
        float fv = 0, cxv[2] = { 1, 2 }, cxv2[2] = { 0 };
        char sv[16], cv = 0;
        cmp_ok(pvm_packf("%+ %d %*.2d %2lf %ld %hd %ud %f %c %x %s", PvmDataDefault, -7,
                         cnt, arr, dv, -6L, -3, 4000000000u, 1.25, 'q', cxv, "str"),
               "==", 0, "pvm_packf with init, values, counts, strides, modifiers");
        pvm_setrbuf(pvm_getsbuf());
        cmp_ok(pvm_unpackf("%d %3d %2lf %ld %hd %ud %f %c %x %s", &iv, arr2, dv2, &lval,
                           &shv, &uv, &fv, &cv, cxv2, sv), "==", 0, "pvm_unpackf");
        ok(iv == -7 && arr2[0] == 1 && arr2[1] == 3 && arr2[2] == 5 && dv2[0] == 2.5
           && dv2[1] == -1 && lval == -6 && shv == -3 && uv == 4000000000u && fv == 1.25f
           && cv == 'q' && cxv2[0] == 1 && cxv2[1] == 2 && !strcmp(sv, "str"),
           "... every value came back");
        cmp_ok(pvm_unpackf("%d", &iv), "==", PvmNoData, "unpackf past the end: PvmNoData");
        cmp_ok(pvm_packf("%+ %q", PvmDataRaw), "==", PvmBadParam,
               "packf with an unknown conversion: PvmBadParam");
        cmp_ok(pvm_packf("%+", 17), "==", PvmBadParam, "packf %%+ with a bad encoding");
        cmp_ok(pvm_packf(NULL), "==", PvmBadParam, "packf(NULL)");
    }

    /* helpers */
    struct timeval tv = { 0, 0 };
    cmp_ok(pvmgetclock(&tv), "==", 0, "pvmgetclock");
    ok(tv.tv_sec > 1000000000, "... gives the time of day");
    cmp_ok(pvmgetclock(NULL), "==", PvmBadParam, "pvmgetclock(NULL)");
    cmp_ok(pvmsleep(0), "==", 0, "pvmsleep(0) returns at once");

    /* reduce functions called directly */
    int x[3] = { 1, 5, -2 }, y[3] = { 4, 2, -3 }, dt = PVM_INT, n = 3, info = 99;
    PvmSum(&dt, x, y, &n, &info);
    ok(info == 0 && x[0] == 5 && x[1] == 7 && x[2] == -5, "PvmSum");
    PvmMax(&dt, x, y, &n, &info);
    ok(info == 0 && x[0] == 5 && x[1] == 7 && x[2] == -3, "PvmMax");
    PvmMin(&dt, x, y, &n, &info);
    ok(info == 0 && x[0] == 4 && x[1] == 2 && x[2] == -3, "PvmMin");
    PvmProduct(&dt, x, y, &n, &info);
    ok(info == 0 && x[0] == 16 && x[1] == 4 && x[2] == 9, "PvmProduct");
    dt = PVM_STR;
    PvmSum(&dt, x, y, &n, &info);
    cmp_ok(info, "==", PvmBadParam, "PvmSum on PVM_STR: *info = PvmBadParam");
}

int main(void)
{
    plan(NO_PLAN);
    s_check_strerror();
    s_check_enrolment();
    pvmtest_setup(PVMTEST_TID, 0);
    cmp_ok(pvm_mytid(), "==", PVMTEST_TID, "pvm_mytid on the loopback");
    cmp_ok(pvm_getsbuf(), "==", 0, "a new context has no send buffer");
    cmp_ok(pvm_getrbuf(), "==", 0, "... and no receive buffer");

    s_check_encodings();
    s_check_errors_options(s_check_buffers());
    s_check_diagnostics();
    s_check_packf_helpers();

    /* pvm_siblings and pvm_exit */
    int *sib = NULL;
    cmp_ok(pvm_siblings(&sib), "==", 1, "pvm_siblings from the shell: 1");
    ok(sib && sib[0] == PVMTEST_TID, "... itself");
    pvm_initsend(PvmDataDefault);
    cmp_ok(pvm_exit(), "==", 0, "pvm_exit");
    cmp_ok(pvm_getsbuf(), "==", 0, "pvm_exit freed the buffers");
    cmp_ok(pvm_getopt(PvmAutoErr), "==", 0, "... and kept the options");
    cmp_ok(pvm_mytid(), ">", 0, "after pvm_exit the next call enrols again (a one-task job)");
    ok(pvm_ctx_ops(pvm_ctx_current(), NULL) != NULL
       && strcmp(pvm_ctx_ops(pvm_ctx_current(), NULL)->name, "impi") == 0,
       "... on the data plane");

    pvm_ctx_install(NULL);
    done_testing();
}
