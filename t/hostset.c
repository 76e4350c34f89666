/*  t/hostset.c — the host set (libgimpi/base/gimpi_hostset.c): -H lists with slots and
 *  duplicates, PVM hostfiles (defaults, '&', every option, comments, errors with
 *  FILE:LINE), single lines as pvm_addhosts passes them, Slurm's hostlist and per-node
 *  count syntax through a fake environment, placement in slot order with wrap-around,
 *  -if by interface name and by network, and is_local on loopback and a documentation
 *  address.  Every error case also checks that the set is left as it was.
 */
#include "gtap.h"
#include "base/gimpi_hostset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  A fake environment: NULL-terminated name/value pairs. */
static const char *s_env(const char *name, void *arg)
{
    const char **kv = arg;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

/*  The set's hosts as "name:slots" joined by commas ('&' before later ones). */
static const char *s_show(gimpi_hostset_t *hs)
{
    static char buf[8192];
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < gimpi_hostset_size(hs) && n < sizeof buf - 300; i++) {
        const gimpi_hostinfo_t *h = gimpi_hostset_get(hs, i);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s%s:%d", i ? "," : "",
                              h->later ? "&" : "", h->name, h->slots);
    }
    return buf;
}

/*  Writes len bytes of text to a fresh temporary file; returns its path (static). */
static const char *s_file(const char *text, size_t len)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/gimpi-hostset-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        BAIL_OUT("cannot write a temporary file");
    close(fd);
    return path;
}

/*  Loads len bytes of text as a hostfile into a new set; rc and err come back. */
static gimpi_hostset_t *s_load_n(const char *text, size_t len, int *rc, char *err, size_t errsize)
{
    gimpi_hostset_t *hs = gimpi_hostset_new();
    const char *path = s_file(text, len);
    *rc = gimpi_hostset_add_file(hs, path, err, errsize);
    unlink(path);
    return hs;
}

/*  Loads a C string as a hostfile. */
static gimpi_hostset_t *s_load(const char *text, int *rc, char *err, size_t errsize)
{
    return s_load_n(text, strlen(text), rc, err, errsize);
}

/*  A hostfile that must be refused: checks rc, that err names line `line` and holds
 *  `word`, and that nothing was kept. */
static void s_bad_file_n(const char *text, size_t len, int line, const char *word,
                         const char *what)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "", at[32];
    int rc;
    gimpi_hostset_t *hs = s_load_n(text, len, &rc, err, sizeof err);
    snprintf(at, sizeof at, ":%d: ", line);
    ok(rc == -1 && strstr(err, at) && strstr(err, word) && gimpi_hostset_size(hs) == 0,
       "hostfile refused: %s", what);
    if (rc != -1 || !strstr(err, at) || !strstr(err, word))
        diag("rc %d, err: %s", rc, err);
    gimpi_hostset_destroy(&hs);
}

/*  A hostfile (a C string) that must be refused, as s_bad_file_n. */
static void s_bad_file(const char *text, int line, const char *word, const char *what)
{
    s_bad_file_n(text, strlen(text), line, word, what);
}

/*  A -H list that must be refused, with word in the message and the set unchanged. */
static void s_bad_list(const char *list, const char *word, const char *what)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    gimpi_hostset_t *hs = gimpi_hostset_new();
    gimpi_hostset_add_list(hs, "keep:2", NULL, 0);
    int rc = gimpi_hostset_add_list(hs, list, err, sizeof err);
    ok(rc == -1 && strstr(err, word) && strcmp(s_show(hs), "keep:2") == 0,
       "-H refused: %s", what);
    if (rc != -1 || !strstr(err, word))
        diag("rc %d, err: %s", rc, err);
    gimpi_hostset_destroy(&hs);
}

/*  A Slurm environment that must be refused, with word in the message. */
static void s_bad_slurm(const char **env, const char *word, const char *what)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    gimpi_hostset_t *hs = gimpi_hostset_new();
    int rc = gimpi_hostset_add_slurm(hs, s_env, env, err, sizeof err);
    ok(rc == -1 && strstr(err, word) && gimpi_hostset_size(hs) == 0, "Slurm refused: %s", what);
    if (rc != -1 || !strstr(err, word))
        diag("rc %d, err: %s", rc, err);
    gimpi_hostset_destroy(&hs);
}

/*  A Slurm environment that must expand to `want` (s_show form). */
static void s_good_slurm(const char **env, const char *want, const char *what)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    gimpi_hostset_t *hs = gimpi_hostset_new();
    int rc = gimpi_hostset_add_slurm(hs, s_env, env, err, sizeof err);
    if (rc < 0)
        diag("err: %s", err);
    is(s_show(hs), want, "Slurm: %s", what);
    gimpi_hostset_destroy(&hs);
}

/*  -H lists. */
static void test_lists(void)
{
    char err[GIMPI_HOSTSET_ERRLEN];
    gimpi_hostset_t *hs = gimpi_hostset_new();
    cmp_ok(gimpi_hostset_size(hs), "==", 0, "a new set is empty");
    cmp_ok(gimpi_hostset_total_slots(hs), "==", 0, "with no slots");
    ok(gimpi_hostset_get(hs, 0) == NULL && gimpi_hostset_get(hs, -1) == NULL, "get out of range: NULL");
    cmp_ok(gimpi_hostset_add_list(hs, "a,b:2,c", err, sizeof err), "==", 3, "-H a,b:2,c: 3 entries");
    is(s_show(hs), "a:1,b:2,c:1", "hosts in order, b with 2 slots");
    cmp_ok(gimpi_hostset_total_slots(hs), "==", 4, "4 slots");
    const gimpi_hostinfo_t *h = gimpi_hostset_get(hs, 0);
    ok(h->speed == 1000 && !h->later && !h->login[0] && !h->wd[0] && !h->ip[0],
       "defaults: speed 1000, started, empty strings");
    cmp_ok(gimpi_hostset_add_list(hs, "a,A,c:3", err, sizeof err), "==", 3, "-H a,A,c:3 again");
    is(s_show(hs), "a:3,b:2,c:4", "duplicates add their slots (names ignore case)");
    cmp_ok(gimpi_hostset_find(hs, "B"), "==", 1, "find ignores case");
    cmp_ok(gimpi_hostset_find(hs, "zz"), "==", -1, "find of an unknown host: -1");
    cmp_ok(gimpi_hostset_find(hs, NULL), "==", -1, "find of NULL: -1");
    gimpi_hostset_destroy(&hs);
    ok(hs == NULL, "destroy nulls the pointer");
    gimpi_hostset_destroy(&hs);
    pass("destroy of NULL is harmless");

    hs = gimpi_hostset_new();
    cmp_ok(gimpi_hostset_add_list(hs, " n1 , 10.0.0.2:3,[fe80::1]:2,fe80::2,[::1]", err, sizeof err),
           "==", 5, "spaces, addresses, bracketed and bare IPv6");
    is(s_show(hs), "n1:1,10.0.0.2:3,fe80::1:2,fe80::2:1,::1:1", "addresses kept bare");
    cmp_ok(gimpi_hostset_add_list(hs, "node_x.example-1.org:4096", err, sizeof err), "==", 1,
           "4096 slots (the limit) accepted");
    gimpi_hostset_destroy(&hs);

    s_bad_list(NULL, "empty", "NULL");
    s_bad_list("", "empty", "empty string");
    s_bad_list("a,,b", "empty entry 2", "an empty entry");
    s_bad_list("a,b,", "empty entry 3", "a trailing comma");
    s_bad_list("a:0", "slots", "0 slots");
    s_bad_list("a:4097", "slots", "slots beyond the limit");
    s_bad_list("a:99999999999999999999", "slots", "a huge slot number");
    s_bad_list("a:-1", "slots", "negative slots");
    s_bad_list("a:x", "slots", "slots not a number");
    s_bad_list("-oProxyCommand=x", "bad host name", "a name that ssh would take for an option");
    s_bad_list("a b", "bad host name", "a space inside a name");
    s_bad_list("a;rm", "bad host name", "a shell character");
    s_bad_list("[::1", "IPv6", "an unclosed bracket");
    s_bad_list("[zz::q]:2", "IPv6", "a bracketed non-address");
    s_bad_list("keep:4095", "more than 4096", "merged slots beyond the limit");
    s_bad_list("ok1,ok2,bad!", "entry 3", "the bad entry's number, nothing of the list kept");

    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    s_bad_list(big, "longer", "an overlong entry");
    big[256] = '\0';
    s_bad_list(big, "longer than 255", "a 256-character name");
}

/*  A hostfile with every kind of line: hosts, slots, options, '*' defaults, '&' hosts,
 *  comments; returns the set for the next tests. */
static gimpi_hostset_t *test_file_lines(void)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    int rc;
    gimpi_hostset_t *hs = s_load(
        "# my first host file\n"
        "\n"
        "   # indented comment\n"
        "thud\n"
        "fred   slots=4   # a trailing comment\n"
        "sigi.cs\tdx=/usr/local/pvm3/lib/pvmd\r\n"
        "* lo=guest wd=/scratch sp=500\n"
        "sn666.jrandom.com\n"
        "cubie ep=bob/bin:$HOME/bin wd=/tmp\n"
        "& igor.firewall.com lo=guest2 ep=bob/pvm3/bin/$PVM_ARCH\n"
        "&later2 slots=2\n"
        "*\n"
        "plain ip=10.1.1.1 arch=LINUX64 bx=/usr/bin/gdb id=vm7\n"
        "$over\n"
        "last", &rc, err, sizeof err);
    cmp_ok(rc, "==", 10, "10 host lines read");
    if (rc < 0)
        diag("%s", err);
    is(s_show(hs), "thud:1,fred:4,sigi.cs:1,sn666.jrandom.com:1,cubie:1,&igor.firewall.com:1,"
       "&later2:2,plain:1,over:1,last:1", "hosts, slots and '&' marks");
    cmp_ok(gimpi_hostset_total_slots(hs), "==", 11, "total slots leave '&' hosts out");
    const gimpi_hostinfo_t *h = gimpi_hostset_get(hs, 2);
    is(h->dx, "/usr/local/pvm3/lib/pvmd", "dx= kept (tab and CRLF handled)");
    h = gimpi_hostset_get(hs, 3);
    ok(strcmp(h->login, "guest") == 0 && strcmp(h->wd, "/scratch") == 0 && h->speed == 500,
       "a '*' line gives lo= wd= sp= to the lines below");
    h = gimpi_hostset_get(hs, 0);
    ok(!h->login[0] && !h->wd[0] && h->speed == 1000, "but not to the lines above");
    h = gimpi_hostset_get(hs, 4);
    ok(strcmp(h->wd, "/tmp") == 0 && strcmp(h->login, "guest") == 0
       && strcmp(h->ep, "bob/bin:$HOME/bin") == 0, "a line's own option beats the default; $ kept");
    h = gimpi_hostset_get(hs, 5);
    ok(h->later && strcmp(h->login, "guest2") == 0 && strcmp(h->wd, "/scratch") == 0,
       "'& host' (with a space) is stored for later, with defaults");
    h = gimpi_hostset_get(hs, 7);
    ok(!h->login[0] && !h->wd[0] && h->speed == 1000, "a bare '*' line puts the built-in defaults back");
    ok(strcmp(h->ip, "10.1.1.1") == 0 && strcmp(h->arch, "LINUX64") == 0,
       "ip= and arch= kept; bx= and id= accepted");
    ok(gimpi_hostset_find(hs, "over") == 8, "'$host' (PVM's overloading) is an ordinary host");

    return hs;
}

/*  pvm_addhosts: one line at a time into the set of test_file_lines. */
static void test_file_add_line(gimpi_hostset_t *hs)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    const gimpi_hostinfo_t *h;
    cmp_ok(gimpi_hostset_add_line(hs, "igor.firewall.com", err, sizeof err), "==", 1,
           "add_line of a '&' host starts it");
    h = gimpi_hostset_get(hs, 5);
    ok(!h->later && strcmp(h->login, "guest2") == 0, "keeping its stored options");
    cmp_ok(gimpi_hostset_add_line(hs, "later2 slots=3 wd=/w", err, sizeof err), "==", 1,
           "add_line with options starts a '&' host");
    h = gimpi_hostset_get(hs, 6);
    ok(!h->later && h->slots == 3 && strcmp(h->wd, "/w") == 0, "the line's options replace the stored");
    cmp_ok(gimpi_hostset_total_slots(hs), "==", 15, "both now count");
    cmp_ok(gimpi_hostset_add_line(hs, "* wd=/dyn", err, sizeof err), "==", 0, "a '*' line: 0");
    cmp_ok(gimpi_hostset_add_line(hs, "newhost", err, sizeof err), "==", 1, "a new host");
    is(gimpi_hostset_get(hs, 10)->wd, "/dyn", "takes the last '*' line's defaults");
    cmp_ok(gimpi_hostset_add_list(hs, "viaH", err, sizeof err), "==", 1, "-H after '*'");
    is(gimpi_hostset_get(hs, 11)->wd, "/dyn", "takes them too");
    cmp_ok(gimpi_hostset_add_line(hs, "   ", err, sizeof err), "==", 0, "a blank line: 0");
    cmp_ok(gimpi_hostset_add_line(hs, "# x", err, sizeof err), "==", 0, "a comment: 0");
    cmp_ok(gimpi_hostset_add_line(hs, "fred slots=2 wd=/x", err, sizeof err), "==", 1,
           "a started host named again");
    h = gimpi_hostset_get(hs, 1);
    ok(h->slots == 6 && strcmp(h->wd, "/x") == 0, "adds slots and takes options it had not stated");
    cmp_ok(gimpi_hostset_add_line(hs, "fred wd=/y", err, sizeof err), "==", -1,
           "a different value for an option stated before");
    ok(strstr(err, "wd=/y") && strstr(err, "wd=/x"), "is refused naming both (%s)", err);
    cmp_ok(gimpi_hostset_add_line(hs, "&fred", err, sizeof err), "==", -1, "'&' for a started host");
    cmp_ok(gimpi_hostset_get(hs, 1)->slots, "==", 6, "refused lines change nothing");
    cmp_ok(gimpi_hostset_add_line(hs, NULL, err, sizeof err), "==", -1, "add_line(NULL): -1");
}

/*  Removing a host, then the set goes. */
static void test_file_remove(gimpi_hostset_t *hs)
{
    int n = gimpi_hostset_size(hs);
    cmp_ok(gimpi_hostset_remove(hs, 0), "==", 0, "remove host 0");
    ok(gimpi_hostset_size(hs) == n - 1 && gimpi_hostset_find(hs, "fred") == 0, "the rest move down");
    cmp_ok(gimpi_hostset_remove(hs, n - 1), "==", -1, "remove out of range: -1");
    cmp_ok(gimpi_hostset_remove(hs, -1), "==", -1, "remove(-1): -1");
    gimpi_hostset_destroy(&hs);
}

/*  An empty hostfile, duplicate lines, a missing file, a directory. */
static void test_file_misc(void)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    int rc;
    gimpi_hostset_t *hs = s_load("", &rc, err, sizeof err);
    cmp_ok(rc, "==", 0, "an empty hostfile: 0 hosts");
    gimpi_hostset_destroy(&hs);
    hs = s_load("a\na slots=2\n&b\n&b\n", &rc, err, sizeof err);
    is(s_show(hs), "a:3,&b:2", "duplicate lines merge, '&' ones too");
    gimpi_hostset_destroy(&hs);

    hs = gimpi_hostset_new();
    rc = gimpi_hostset_add_file(hs, "/nonexistent/hostfile", err, sizeof err);
    ok(rc == -1 && strstr(err, "/nonexistent/hostfile") && strstr(err, "No such file"),
       "a missing hostfile is named (%s)", err);
    rc = gimpi_hostset_add_file(hs, "/", err, sizeof err);
    ok(rc == -1 && strstr(err, "/"), "a directory is refused (%s)", err);
    ok(gimpi_hostset_add_file(hs, NULL, err, sizeof err) == -1, "add_file(NULL): -1");
    gimpi_hostset_destroy(&hs);
}

/*  Bad lines are refused, naming the line and what is wrong. */
static void test_file_bad(void)
{
    s_bad_file("a\nb\nc frob=1\n", 3, "frob=1", "an unknown option, with its line");
    s_bad_file("a\nb lo\n", 2, "'lo'", "a word that is not KEY=VALUE");
    s_bad_file("a wd=\n", 1, "no value", "an empty value");
    s_bad_file("a so=pw\n", 1, "password", "so=pw (no password prompts under BatchMode)");
    s_bad_file("a so=ms\n", 1, "manual start", "so=ms");
    s_bad_file("a so=zz\n", 1, "so=", "an unknown so= value");
    s_bad_file("a sp=0\n", 1, "sp=", "sp=0");
    s_bad_file("a sp=1000001\n", 1, "sp=", "sp beyond PVM's range");
    s_bad_file("a slots=0\n", 1, "slots=", "slots=0");
    s_bad_file("a slots=12345678901234567890\n", 1, "slots=", "huge slots");
    s_bad_file("a slots=2x\n", 1, "slots=", "slots with junk");
    s_bad_file("a lo=-oProxy\n", 1, "lo=", "a login that ssh would take for an option");
    s_bad_file("a lo=a/b\n", 1, "lo=", "a login with a slash");
    s_bad_file("a arch=X/Y\n", 1, "arch=", "a bad arch name");
    s_bad_file("a ip=-bad\n", 1, "ip=", "a bad ip= name");
    s_bad_file("* ip=1.2.3.4\n", 1, "ip=", "ip= on a '*' line");
    s_bad_file("node:2\n", 1, "slots=N", "host:N in a hostfile points at slots=N");
    s_bad_file("&\n", 1, "without a host name", "a lone '&'");
    s_bad_file("&*\n", 1, "before '*'", "'&*'");
    s_bad_file("ok\n-x\n", 2, "bad host name", "a name starting with '-'");
    s_bad_file("a\x01\n", 1, "control character", "a control byte");
    s_bad_file_n("a\nb\nc\na\0b\n", 10, 4, "NUL", "a NUL byte");
    s_bad_file("a\na\n&a\n", 3, "already", "'&' after the host was started");
    s_bad_file("a wd=/x\na wd=/y\n", 2, "wd=/y", "conflicting options on two lines");
    s_bad_file("a slots=4000\na slots=97\n", 2, "more than 4096", "merged slots beyond the limit");
}

/*  Overlong lines, names and paths; one host more than the limit. */
static void test_file_limits(void)
{
    char *text = malloc(GIMPI_HOSTSET_MAX_LINE + 100);
    memset(text, 'x', GIMPI_HOSTSET_MAX_LINE + 10);
    memcpy(text, "ok\nb ep=", 8);
    strcpy(text + GIMPI_HOSTSET_MAX_LINE + 10, "\nc\n");
    s_bad_file(text, 2, "longer than", "an overlong line");
    memset(text, 'y', 300);
    text[300] = '\n';
    text[301] = '\0';
    s_bad_file(text, 1, "longer than 255", "an overlong host name");
    memcpy(text, "a dx=", 5);
    memset(text + 5, 'p', 1030);
    text[1035] = '\0';
    s_bad_file(text, 1, "dx=", "an overlong path");
    free(text);
    /* 4097 hosts: one too many */
    size_t size = 4097 * 8 + 1;
    text = malloc(size);
    char *p = text;
    for (int i = 0; i < 4097; i++)
        p += sprintf(p, "h%d\n", i);
    s_bad_file(text, 4097, "more than 4096 hosts", "more hosts than the limit");
    free(text);
}

/*  Hostfiles (PVM's format, with gimpi's slots= and arch=). */
static void test_files(void)
{
    gimpi_hostset_t *hs = test_file_lines();
    test_file_add_line(hs);
    test_file_remove(hs);
    test_file_misc();
    test_file_bad();
    test_file_limits();
}

/*  Slurm allocations. */
static void test_slurm(void)
{
    char err[GIMPI_HOSTSET_ERRLEN] = "";
    gimpi_hostset_t *hs = gimpi_hostset_new();
    const char *none[] = { "HOME", "/root", NULL };
    cmp_ok(gimpi_hostset_add_slurm(hs, s_env, none, err, sizeof err), "==", 0,
           "outside an allocation: 0 hosts");
    const char *empty[] = { "SLURM_JOB_NODELIST", "", NULL };
    cmp_ok(gimpi_hostset_add_slurm(hs, s_env, empty, err, sizeof err), "==", 0,
           "an empty SLURM_JOB_NODELIST counts as none");
    const char *real[] = { "SLURM_JOB_NODELIST", "node[01-03,7],gpu5,rack[1-2]-n[3-4]",
                           "SLURM_TASKS_PER_NODE", "2(x3),1(x2),3(x4)", NULL };
    cmp_ok(gimpi_hostset_add_slurm(hs, s_env, real, err, sizeof err), "==", 9, "9 nodes");
    is(s_show(hs), "node01:2,node02:2,node03:2,node7:1,gpu5:1,rack1-n3:3,rack1-n4:3,rack2-n3:3,"
       "rack2-n4:3", "ranges, zero padding, lists, two groups (first slowest), counts");
    gimpi_hostset_destroy(&hs);

    const char *old[] = { "SLURM_NODELIST", "c[8-11]", NULL };
    s_good_slurm(old, "c8:1,c9:1,c10:1,c11:1", "SLURM_NODELIST, no counts: 1 slot each, width of the low end");
    const char *cpus[] = { "SLURM_JOB_NODELIST", "a,b", "SLURM_JOB_CPUS_PER_NODE", "16,8", NULL };
    s_good_slurm(cpus, "a:16,b:8", "SLURM_JOB_CPUS_PER_NODE when tasks per node are missing");
    const char *both[] = { "SLURM_JOB_NODELIST", "a,b", "SLURM_JOB_CPUS_PER_NODE", "16(x2)",
                           "SLURM_TASKS_PER_NODE", "1(x2)", NULL };
    s_good_slurm(both, "a:1,b:1", "SLURM_TASKS_PER_NODE wins over CPUs");
    const char *pad[] = { "SLURM_JOB_NODELIST", "n[008-011],x[0],y[0-1]z", NULL };
    s_good_slurm(pad, "n008:1,n009:1,n010:1,n011:1,x0:1,y0z:1,y1z:1", "padding, [0], suffixes");
    const char *one[] = { "SLURM_JOB_NODELIST", "solo", "SLURM_TASKS_PER_NODE", "4", NULL };
    s_good_slurm(one, "solo:4", "one node");
    const char *dup[] = { "SLURM_JOB_NODELIST", "a,a", NULL };
    s_good_slurm(dup, "a:2", "a node listed twice merges");
    const char *max[] = { "SLURM_JOB_NODELIST", "n[0001-4096]", NULL };
    hs = gimpi_hostset_new();
    cmp_ok(gimpi_hostset_add_slurm(hs, s_env, max, err, sizeof err), "==", 4096, "4096 nodes (the limit)");
    is(gimpi_hostset_get(hs, 4095)->name, "n4096", "the last one");
    gimpi_hostset_destroy(&hs);

    const char *e1[] = { "SLURM_JOB_NODELIST", "node[1-3", NULL };
    s_bad_slurm(e1, "unterminated", "an unterminated '['");
    const char *e2[] = { "SLURM_JOB_NODELIST", "node[5-1]", NULL };
    s_bad_slurm(e2, "backwards", "[5-1]");
    const char *e3[] = { "SLURM_JOB_NODELIST", "node[1-999999999]", NULL };
    s_bad_slurm(e3, "more than 4096", "an enormous range");
    const char *e3b[] = { "SLURM_JOB_NODELIST", "a[1-100]b[1-100]", NULL };
    s_bad_slurm(e3b, "more than 4096", "an enormous product of ranges");
    const char *e3c[] = { "SLURM_JOB_NODELIST", "n[1-4000],m[1-97]", NULL };
    s_bad_slurm(e3c, "more than 4096", "elements adding up past the limit");
    const char *e4[] = { "SLURM_JOB_NODELIST", "node[[1]]", NULL };
    s_bad_slurm(e4, "nested", "nested brackets");
    const char *e5[] = { "SLURM_JOB_NODELIST", "node1]", NULL };
    s_bad_slurm(e5, "without '['", "a stray ']'");
    const char *e6[] = { "SLURM_JOB_NODELIST", "node[]", NULL };
    s_bad_slurm(e6, "bad range", "empty brackets");
    const char *e7[] = { "SLURM_JOB_NODELIST", "node[1,]", NULL };
    s_bad_slurm(e7, "bad range", "an empty range");
    const char *e8[] = { "SLURM_JOB_NODELIST", "node[a-b]", NULL };
    s_bad_slurm(e8, "bad range", "letters in a range");
    const char *e9[] = { "SLURM_JOB_NODELIST", "node[1-2-3]", NULL };
    s_bad_slurm(e9, "bad range", "two dashes");
    const char *e10[] = { "SLURM_JOB_NODELIST", "a,,b", NULL };
    s_bad_slurm(e10, "empty host name", "an empty element");
    const char *e11[] = { "SLURM_JOB_NODELIST", "-x[1-2]", NULL };
    s_bad_slurm(e11, "SLURM_JOB_NODELIST: bad host name", "a bad name, with the variable");
    const char *e12[] = { "SLURM_JOB_NODELIST", "a[1-3]", "SLURM_TASKS_PER_NODE", "2(x2)", NULL };
    s_bad_slurm(e12, "counts 2 nodes", "fewer counts than nodes");
    const char *e13[] = { "SLURM_JOB_NODELIST", "a", "SLURM_TASKS_PER_NODE", "2,1", NULL };
    s_bad_slurm(e13, "more nodes", "more counts than nodes");
    const char *e14[] = { "SLURM_JOB_NODELIST", "a", "SLURM_TASKS_PER_NODE", "2(x1", NULL };
    s_bad_slurm(e14, "N(xM)", "an unclosed repeat");
    const char *e14b[] = { "SLURM_JOB_NODELIST", "a", "SLURM_TASKS_PER_NODE", "2(", NULL };
    s_bad_slurm(e14b, "N(xM)", "a '(' at the end");
    const char *e15[] = { "SLURM_JOB_NODELIST", "a", "SLURM_TASKS_PER_NODE", "0", NULL };
    s_bad_slurm(e15, "SLURM_TASKS_PER_NODE", "a count of 0");
    const char *e16[] = { "SLURM_JOB_NODELIST", "a", "SLURM_TASKS_PER_NODE", "99999999999", NULL };
    s_bad_slurm(e16, "SLURM_TASKS_PER_NODE", "a huge count");
    const char *e17[] = { "SLURM_JOB_NODELIST", "a[1-2]", "SLURM_JOB_CPUS_PER_NODE", "1(x99999999999)", NULL };
    s_bad_slurm(e17, "SLURM_JOB_CPUS_PER_NODE", "a huge repeat");
    const char *e18[] = { "SLURM_JOB_NODELIST", "a", "SLURM_TASKS_PER_NODE", "1;", NULL };
    s_bad_slurm(e18, "','", "junk after a count");
    const char *e19[] = { "SLURM_JOB_NODELIST", "a[1]b[2]c[3]d[4]e[5]f[6]g[7]h[8]i[9]", NULL };
    s_bad_slurm(e19, "bracket groups", "too many bracket groups");
    char longname[400];
    memset(longname, 'q', 300);
    strcpy(longname + 300, "[1-2]");
    const char *e20[] = { "SLURM_JOB_NODELIST", longname, NULL };
    s_bad_slurm(e20, "longer than 255", "an overlong expanded name");

    hs = gimpi_hostset_new();
    gimpi_hostset_add_list(hs, "a:4090", NULL, 0);
    const char *e21[] = { "SLURM_JOB_NODELIST", "b,a", "SLURM_TASKS_PER_NODE", "1,7", NULL };
    ok(gimpi_hostset_add_slurm(hs, s_env, e21, err, sizeof err) == -1
       && strcmp(s_show(hs), "a:4090") == 0, "a merge past the slot limit undoes the whole allocation");
    gimpi_hostset_destroy(&hs);

    setenv("SLURM_JOB_NODELIST", "env[1-2]", 1);
    setenv("SLURM_TASKS_PER_NODE", "3(x2)", 1);
    hs = gimpi_hostset_new();
    cmp_ok(gimpi_hostset_add_slurm(hs, NULL, NULL, err, sizeof err), "==", 2, "get NULL reads the environment");
    is(s_show(hs), "env1:3,env2:3", "from getenv");
    gimpi_hostset_destroy(&hs);
    unsetenv("SLURM_JOB_NODELIST");
    unsetenv("SLURM_TASKS_PER_NODE");
}

/*  Placement in slot order. */
static void test_place(void)
{
    gimpi_hostset_t *hs = gimpi_hostset_new();
    int out[16];
    cmp_ok(gimpi_hostset_place(hs, 3, 0, out), "==", -1, "no hosts: -1");
    gimpi_hostset_add_list(hs, "a:2,b,c:3", NULL, 0);
    gimpi_hostset_add_line(hs, "&d slots=5", NULL, 0);
    cmp_ok(gimpi_hostset_place(hs, 8, 0, out), "==", 8, "8 tasks on 6 slots");
    char got[64] = "";
    for (int k = 0; k < 8; k++)
        got[k] = (char)('0' + out[k]);
    is(got, "00122200", "slot order, then around again; the '&' host skipped");
    cmp_ok(gimpi_hostset_place(hs, 4, 3, out), "==", 4, "start at task 3");
    for (int k = 0; k < 4; k++)
        got[k] = (char)('0' + out[k]);
    got[4] = '\0';
    is(got, "2220", "continues the rotation");
    cmp_ok(gimpi_hostset_place(hs, 2, 2000000001, out), "==", 2, "a huge start");
    ok(out[0] == 2 && out[1] == 2, "wraps by the slot count (2000000001 %% 6 = 3)");
    cmp_ok(gimpi_hostset_place(hs, 0, 0, NULL), "==", 0, "0 tasks, no array: 0");
    cmp_ok(gimpi_hostset_place(hs, -1, 0, out), "==", -1, "negative n: -1");
    cmp_ok(gimpi_hostset_place(hs, 1, -1, out), "==", -1, "negative start: -1");
    cmp_ok(gimpi_hostset_place(hs, 1, 0, NULL), "==", -1, "no array: -1");
    gimpi_hostset_add_line(hs, "d", NULL, 0);
    gimpi_hostset_remove(hs, 0);
    cmp_ok(gimpi_hostset_place(hs, 10, 0, out), "==", 10, "after starting d and removing a");
    for (int k = 0; k < 10; k++)
        got[k] = (char)('0' + out[k]);
    got[10] = '\0';
    is(got, "0111222220", "b, c's 3, d's 5, around");
    gimpi_hostset_destroy(&hs);

    hs = gimpi_hostset_new();
    gimpi_hostset_add_line(hs, "&x", NULL, 0);
    cmp_ok(gimpi_hostset_place(hs, 1, 0, out), "==", -1, "only '&' hosts: -1");
    gimpi_hostset_destroy(&hs);
}

/*  -if and is_local. */
static void test_local(void)
{
    char addr[64], err[GIMPI_HOSTSET_ERRLEN];
    cmp_ok(gimpi_hostset_if_addr("lo", addr, sizeof addr, err, sizeof err), "==", 0, "-if lo");
    is(addr, "127.0.0.1", "is 127.0.0.1");
    cmp_ok(gimpi_hostset_if_addr("127.0.0.0/8", addr, sizeof addr, err, sizeof err), "==", 0,
           "-if 127.0.0.0/8");
    ok(strncmp(addr, "127.", 4) == 0, "gives a loopback address (%s)", addr);
    cmp_ok(gimpi_hostset_if_addr("127.0.0.1", addr, sizeof addr, err, sizeof err), "==", 0,
           "-if 127.0.0.1 (a local address)");
    cmp_ok(gimpi_hostset_if_addr("127.9.9.9/32", addr, sizeof addr, err, sizeof err), "==", -1,
           "-if 127.9.9.9/32: no interface there");
    ok(strstr(err, "in that network") != NULL, "says so (%s)", err);
    cmp_ok(gimpi_hostset_if_addr("192.0.2.77", addr, sizeof addr, err, sizeof err), "==", -1,
           "-if with a foreign address");
    cmp_ok(gimpi_hostset_if_addr("nosuchif0", addr, sizeof addr, err, sizeof err), "==", -1,
           "-if with an unknown interface");
    ok(strstr(err, "nosuchif0") && strstr(err, "no such interface"), "names it (%s)", err);
    cmp_ok(gimpi_hostset_if_addr("averyveryverylongifname", addr, sizeof addr, err, sizeof err),
           "==", -1, "-if with an overlong name");
    const char *badnets[] = { "10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "/8", "10.0.0.0/-1",
                              "10.0.0.0/8x" };
    for (size_t i = 0; i < sizeof badnets / sizeof badnets[0]; i++) {
        cmp_ok(gimpi_hostset_if_addr(badnets[i], addr, sizeof addr, err, sizeof err), "==", -1,
               "-if %s refused", badnets[i]);
    }
    ok(strstr(err, "not a network") != NULL, "as not a network (%s)", err);
    cmp_ok(gimpi_hostset_if_addr(NULL, addr, sizeof addr, err, sizeof err), "==", -1, "-if NULL");
    cmp_ok(gimpi_hostset_if_addr("", addr, sizeof addr, err, sizeof err), "==", -1, "-if ''");
    cmp_ok(gimpi_hostset_if_addr("lo", addr, 4, err, sizeof err), "==", -1, "too small a buffer");
    cmp_ok(gimpi_hostset_if_addr("0.0.0.0/0", addr, sizeof addr, NULL, 0), "==", 0,
           "-if 0.0.0.0/0 takes the first address (no err buffer needed)");

    ok(gimpi_hostset_is_local("127.0.0.1"), "127.0.0.1 is local");
    ok(gimpi_hostset_is_local("127.3.4.5"), "127.3.4.5 is local");
    ok(gimpi_hostset_is_local("localhost"), "localhost is local");
    ok(gimpi_hostset_is_local("LocalHost"), "LocalHost is local");
    ok(gimpi_hostset_is_local("::1") && gimpi_hostset_is_local("[::1]"), "::1 is local");
    ok(!gimpi_hostset_is_local("192.0.2.77"), "192.0.2.77 (TEST-NET-1) is not");
    ok(!gimpi_hostset_is_local("2001:db8::77"), "2001:db8::77 is not");
    ok(!gimpi_hostset_is_local(NULL) && !gimpi_hostset_is_local(""), "NULL and '' are not");
    ok(!gimpi_hostset_is_local("-x") && !gimpi_hostset_is_local("a b"), "bad names are not");
    ok(!gimpi_hostset_is_local("no-such-host.invalid"), "an unresolvable name is not");
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    ok(gimpi_hostset_is_local(me), "our host name (%s) is", me);
    if (gimpi_hostset_if_addr("0.0.0.0/0", addr, sizeof addr, NULL, 0) == 0)
        ok(gimpi_hostset_is_local(addr), "an interface address (%s) is", addr);
    else
        pass("no interface address to try");
}

/*  The address a job that may grow announces: an interface's, never a loopback one. */
static void test_lan_addr(void)
{
    char addr[64];
    cmp_ok(gimpi_hostset_lan_addr(NULL, 64), "==", -1, "lan_addr: NULL buffer");
    cmp_ok(gimpi_hostset_lan_addr(addr, 4), "==", -1, "lan_addr: too small a buffer");
    if (gimpi_hostset_lan_addr(addr, sizeof addr) == 0)
        ok(strncmp(addr, "127.", 4) != 0 && gimpi_hostset_is_local(addr),
           "lan_addr: an address of this machine, not a loopback one (%s)", addr);
    else
        pass("lan_addr: this machine has no interface but the loopback");
}

int main(void)
{
    plan(NO_PLAN);
    test_lists();
    test_files();
    test_slurm();
    test_place();
    test_local();
    test_lan_addr();
    done_testing();
}
