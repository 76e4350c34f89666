/*  t/key.c — the job secret and the private runtime directory (libgimpi/base/gimpi_key.c):
 *  derivations and MACs, key files created 0600 and the same for racing creators, files
 *  and directories that are not private (open modes, links, another owner) refused with a
 *  message naming what is wrong, the order in which a task finds its key (GIMPI_KEY_FD,
 *  GIMPI_KEY_FILE, ~/.gimpi/key, the runtime directory), and a runtime directory squatted
 *  by user nobody refused by the library, groupd and gimpi-stat alike.
 */
#include "gtap.h"
#include "testlib.h"
#include "base/gimpi_key.h"
#include "groups/gd_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_tmp[256];

/*  Writes text to path with mode. */
static void s_write(const char *path, const char *text, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            perror("write");
        fchmod(fd, mode);
        close(fd);
    }
}

/*  Derivations, key pairs, MACs. */
static void test_derive(void)
{
    cmp_ok(gimpi_key_selftest(), "==", 0, "self-test");
    gimpi_key_t k;
    memset(&k, 7, sizeof k);
    char fp1[9], fp2[9];
    gimpi_key_fingerprint(&k, fp1);
    k.bytes[31] ^= 1;
    gimpi_key_fingerprint(&k, fp2);
    ok(strlen(fp1) == 8 && strcmp(fp1, fp2) != 0, "fingerprints differ for keys 1 bit apart (%s %s)",
       fp1, fp2);
}

/*  Key files: made private, loaded back, racing creators agree, bad ones refused. */
static void test_files(void)
{
    char path[300], err[GIMPI_KEY_ERRLEN];
    gimpi_key_t a, b;
    snprintf(path, sizeof path, "%s/k1", s_tmp);
    cmp_ok(gimpi_key_load_or_create(&a, path, err, sizeof err), "==", 0, "created a key file");
    struct stat st;
    memset(&st, 0, sizeof st);
    int src = stat(path, &st);
    ok(src == 0 && (st.st_mode & 0777) == 0600, "mode 0600 (%04o)",
       (unsigned)(st.st_mode & 0777));
    ok(st.st_size == GIMPI_KEY_HEXLEN + 1, "64 hex digits and a newline");
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", 0, "loads back");
    ok(memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0, "the same key");

    /* eight processes race to create one file: all end up with the same key */
    snprintf(path, sizeof path, "%s/race", s_tmp);
    int fds[8][2];
    for (int i = 0; i < 8; i++) {
        if (pipe(fds[i]) < 0)
            BAIL_OUT("pipe");
        if (fork() == 0) {
            gimpi_key_t k;
            int rc = gimpi_key_load_or_create(&k, path, err, sizeof err);
            if (rc == 0 && write(fds[i][1], k.bytes, sizeof k.bytes) < 0)
                rc = -1;
            _exit(rc ? 1 : 0);
        }
        close(fds[i][1]);
    }
    int same = 0, status, failed = 0;
    for (int i = 0; i < 8; i++) {
        gimpi_key_t k;
        if (read(fds[i][0], k.bytes, sizeof k.bytes) == (ssize_t)sizeof k.bytes
            && (i == 0 ? (a = k, 1) : memcmp(k.bytes, a.bytes, sizeof a.bytes) == 0))
            same++;
        close(fds[i][0]);
    }
    while (wait(&status) > 0)
        failed += !WIFEXITED(status) || WEXITSTATUS(status);
    ok(same == 8 && failed == 0, "8 racing creators: one key (%d agree, %d failed)", same, failed);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls %s | grep -c race) = 1", s_tmp);
    ok(system(cmd) == 0, "and no temporary file left behind");

    snprintf(path, sizeof path, "%s/open", s_tmp);
    s_write(path, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n", 0644);
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", -1, "mode 0644: refused");
    ok(strstr(err, "open to other users") && strstr(err, "chmod 600"), "saying so: %s", err);

    snprintf(path, sizeof path, "%s/short", s_tmp);
    s_write(path, "0011\n", 0600);
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", -1, "short key: refused");
    ok(strstr(err, "does not hold a key") != NULL, "saying so: %s", err);
    s_write(path, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeffXX", 0600);
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", -1, "trailing junk: refused");
    s_write(path, "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 0600);
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", -1, "not hex: refused");
    s_write(path, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 0600);
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", 0, "no newline is fine");

    char link_path[320];
    snprintf(link_path, sizeof link_path, "%s/link", s_tmp);
    if (symlink(path, link_path) < 0)
        perror("symlink");
    cmp_ok(gimpi_key_load(&b, link_path, err, sizeof err), "==", -1, "a symbolic link: refused");
    cmp_ok(gimpi_key_load(&b, s_tmp, err, sizeof err), "==", -1, "a directory: refused");
    ok(strstr(err, "not a regular file") != NULL, "saying so: %s", err);
    snprintf(path, sizeof path, "%s/none", s_tmp);
    cmp_ok(gimpi_key_load(&b, path, err, sizeof err), "==", -1, "a missing file: refused");
    ok(strstr(err, "No such file") != NULL, "saying so: %s", err);
}

/*  Where a task finds its key. */
/*  Three checks that fd holds the key's text sealed and read-only: no write through it,
 *  nor through a read-write reopening of it; its seals cover write, size and seals. */
static void s_sealed(int fd, const char *what)
{
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    int want = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL;
    ok(seals >= 0 && (seals & want) == want, "%s is sealed (seals 0x%x)", what, seals);
    ok(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY && write(fd, "x", 1) < 0,
       "%s is read-only", what);
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rw = open(path, O_RDWR);
    ok(rw < 0 || (pwrite(rw, "0", 1, 0) < 0 && errno == EPERM),
       "%s cannot be changed through a read-write reopening either", what);
    if (rw >= 0)
        close(rw);
}

static void test_default(void)
{
    char dir[300], home[300], path[400], from[GIMPI_KEY_PATHLEN], err[GIMPI_KEY_ERRLEN];
    char cmd_out[200];
    snprintf(dir, sizeof dir, "%s/xdg", s_tmp);
    snprintf(home, sizeof home, "%s/home", s_tmp);
    mkdir(dir, 0700);
    mkdir(home, 0700);
    setenv("XDG_RUNTIME_DIR", dir, 1);
    setenv("HOME", home, 1);
    unsetenv(GIMPI_ENV_KEY_FILE);
    unsetenv(GIMPI_ENV_KEY_FD);
    gimpi_key_t a, b;
    cmp_ok(gimpi_key_default(&a, from, sizeof from, err, sizeof err), "==", 0,
           "default: made in the runtime directory");
    snprintf(path, sizeof path, "%s/gimpi/key", dir);
    is(from, path, "at $XDG_RUNTIME_DIR/gimpi/key");
    struct stat st;
    ok(stat(dir, &st) == 0, "runtime dir exists");
    snprintf(path, sizeof path, "%s/gimpi", dir);
    ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700, "its gimpi directory is 0700");
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", 0, "second call");
    ok(memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0, "finds the same key");

    /* ~/.gimpi/key wins over the runtime directory */
    snprintf(path, sizeof path, "%s/.gimpi", home);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/.gimpi/key", home);
    s_write(path, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n", 0600);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", 0, "~/.gimpi/key");
    ok(b.bytes[0] == 0x00 && b.bytes[1] == 0x11 && b.bytes[31] == 0xff, "is used when present");
    chmod(path, 0640);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", -1,
           "~/.gimpi/key open to the group: refused, not skipped");
    unlink(path);

    /* GIMPI_KEY_FILE wins over both */
    snprintf(path, sizeof path, "%s/named", s_tmp);
    s_write(path, "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n", 0600);
    setenv(GIMPI_ENV_KEY_FILE, path, 1);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", 0, "GIMPI_KEY_FILE");
    ok(b.bytes[0] == 0xff && !strcmp(from, path), "is used");
    setenv(GIMPI_ENV_KEY_FILE, "/nonexistent/key", 1);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", -1,
           "GIMPI_KEY_FILE missing: an error, no silent fallback");

    /* GIMPI_KEY_FD wins over all, and is consumed */
    int p[2];
    if (pipe(p) < 0)
        BAIL_OUT("pipe");
    gimpi_key_write_fd(&a, p[1]);
    close(p[1]);
    char num[16];
    snprintf(num, sizeof num, "%d", p[0]);
    setenv(GIMPI_ENV_KEY_FD, num, 1);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", 0, "GIMPI_KEY_FD");
    ok(memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0, "reads the key from the descriptor");
    struct stat kst;
    const char *now = getenv(GIMPI_ENV_KEY_FD);
    ok(now && fstat(atoi(now), &kst) == 0 && S_ISREG(kst.st_mode),
       "the pipe is read and closed, and GIMPI_KEY_FD names a memfd instead (fd %s)",
       now ? now : "-");
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", 0,
           "a second load in the process");
    ok(memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0, "finds the same key");
    s_sealed(atoi(now ? now : "-1"), "the memfd GIMPI_KEY_FD names");
    close(atoi(getenv(GIMPI_ENV_KEY_FD) ? getenv(GIMPI_ENV_KEY_FD) : "-1"));
    int sfd = gimpi_key_memfd(&a, 1);
    s_sealed(sfd, "gimpi_key_memfd's descriptor (the agent's)");
    ok(sfd >= 0 && (fcntl(sfd, F_GETFD) & FD_CLOEXEC), "... close-on-exec when asked");
    close(sfd);
    /* a memfd (as a launcher makes one) is read from its start and left for children */
    int mfd = memfd_create("gimpi-key", 0);
    gimpi_key_write_fd(&a, mfd);
    snprintf(num, sizeof num, "%d", mfd);
    setenv(GIMPI_ENV_KEY_FD, num, 1);
    int n_ok = 0;
    for (int i = 0; i < 2; i++)
        n_ok += gimpi_key_default(&b, from, sizeof from, err, sizeof err) == 0
                && memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0;
    cmp_ok(n_ok, "==", 2, "GIMPI_KEY_FD a memfd: read twice, the same key");
    ok(getenv(GIMPI_ENV_KEY_FD) && fcntl(mfd, F_GETFD) >= 0, "left open and in the environment");
    snprintf(cmd_out, sizeof cmd_out, "sh -c 'test -n \"$%s\" && head -c 64 /proc/self/fd/%d'",
             GIMPI_ENV_KEY_FD, mfd);
    FILE *f = popen(cmd_out, "r");
    char child[80] = "";
    if (f) {
        if (!fgets(child, sizeof child, f))
            child[0] = 0;
        pclose(f);
    }
    ok(strlen(child) == 64, "a child process inherits it");
    close(mfd);
    /* a pipe whose writer keeps it open: an error after GIMPI_KEY_READ_MS, not a hang */
    int q[2];
    if (pipe(q) < 0)
        BAIL_OUT("pipe");
    gimpi_key_write_fd(&a, q[1]);
    snprintf(num, sizeof num, "%d", q[0]);
    setenv(GIMPI_ENV_KEY_FD, num, 1);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", -1,
           "GIMPI_KEY_FD a pipe left open: an error, no hang");
    ok(strstr(err, "its writer must close it") != NULL, "saying so: %s", err);
    close(q[1]);
    setenv(GIMPI_ENV_KEY_FD, "12x", 1);
    cmp_ok(gimpi_key_default(&b, from, sizeof from, err, sizeof err), "==", -1,
           "GIMPI_KEY_FD not a number: an error");
    unsetenv(GIMPI_ENV_KEY_FILE);
}

/*  Runs cmd (through sh) and returns its exit status, its stderr in out. */
static int s_run(const char *cmd, char *out, size_t size)
{
    char full[1200];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    size_t n = f ? fread(out, 1, size - 1, f) : 0;
    out[n] = 0;
    int st = f ? pclose(f) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/*  A runtime directory made first by user nobody (through setpriv) is stepped around into
 *  $HOME/.gimpi/run-HOST; with no home to go to, it is refused, saying whose it is. */
static void test_squat(void)
{
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
        tap_skip(12, "squatting needs root and setpriv");
        return;
    }
    char dir[300], cmd[900], out[2048], err[GIMPI_KEY_ERRLEN], buf[512], home[400];
    snprintf(dir, sizeof dir, "%s/shared", s_tmp);
    mkdir(dir, 01777);
    chmod(dir, 01777);
    chmod(s_tmp, 0755);
    snprintf(cmd, sizeof cmd,
             "setpriv --reuid=nobody --regid=nogroup --clear-groups mkdir -m 777 %s/gimpi", dir);
    ok(system(cmd) == 0, "nobody makes $XDG_RUNTIME_DIR/gimpi first, mode 0777");
    setenv("XDG_RUNTIME_DIR", dir, 1);
    snprintf(home, sizeof home, "%s/home", s_tmp);
    mkdir(home, 0700);
    setenv("HOME", home, 1);
    int rc = gimpi_rundir(buf, sizeof buf, err, sizeof err);
    ok(rc == 0 && strncmp(buf, home, strlen(home)) == 0 && strstr(buf, "/.gimpi/run-"),
       "the runtime directory steps around it into the home: %s", rc == 0 ? buf : err);
    struct stat st;
    ok(rc == 0 && lstat(buf, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700
       && st.st_uid == getuid(), "made private (0700, ours)");
    char ep[600];
    ok(gd_default_endpoint(ep, sizeof ep, err, sizeof err) != NULL && strstr(ep, "/.gimpi/run-"),
       "groupd's default endpoint is there: %s", ep);
    gimpi_key_t k;
    char from[GIMPI_KEY_PATHLEN];
    ok(gimpi_key_default(&k, from, sizeof from, err, sizeof err) == 0
       && strstr(from, "/.gimpi/run-"), "the key is made there: %s", from);
    snprintf(cmd, sizeof cmd, "unset GIMPI_GROUPD; %s --config 2>&1 >/dev/null",
             tl_prog("programs/gimpi-stat"));
    cmp_ok(s_run(cmd, out, sizeof out), "==", 0, "gimpi-stat works");
    ok(strstr(out, "belongs to uid") == NULL, "without a word about the squat");
    /* nowhere to go: the old refusal, which names the owner */
    unsetenv("HOME");
    ok(gimpi_rundir(buf, sizeof buf, err, sizeof err) < 0, "without a home it is refused");
    ok(strstr(err, "belongs to uid") && strstr(err, "another user"), "saying whose it is: %s",
       err);
    ok(gd_default_endpoint(buf, sizeof buf, err, sizeof err) == NULL, "no groupd endpoint there");
    snprintf(cmd, sizeof cmd, "unset GIMPI_GROUPD HOME; %s", tl_prog("groupd/groupd"));
    cmp_ok(s_run(cmd, out, sizeof out), "!=", 0, "groupd refuses to start");
    ok(strstr(out, "belongs to uid") != NULL, "with the message: %.*s", (int)strcspn(out, "\n"),
       out);
    setenv("HOME", home, 1);
}

/*  gimpi_key_seal / gimpi_key_open: only the same key and context open a box, and a
 *  changed byte is refused. */
static void test_seal(void)
{
    gimpi_key_t a, b;
    gimpi_key_random(&a);
    gimpi_key_random(&b);
    uint8_t secret[32], box[32 + GIMPI_KEY_SEAL_EXTRA], box2[sizeof box], out[32];
    gimpi_key_random_bytes(secret, sizeof secret);
    gimpi_key_seal(&a, "gimpi-js", secret, sizeof secret, box);
    gimpi_key_seal(&a, "gimpi-js", secret, sizeof secret, box2);
    ok(memcmp(box, box2, sizeof box) != 0, "seal: a fresh nonce each time");
    ok(gimpi_key_open(&a, "gimpi-js", box, sizeof box, out) == 0
       && memcmp(out, secret, sizeof out) == 0, "seal: the same key and context open it");
    ok(gimpi_key_open(&b, "gimpi-js", box, sizeof box, out) < 0, "seal: another key does not");
    ok(gimpi_key_open(&a, "gimpi-xx", box, sizeof box, out) < 0, "seal: another context does not");
    box[40] ^= 1;
    ok(gimpi_key_open(&a, "gimpi-js", box, sizeof box, out) < 0, "seal: a changed byte is refused");
    ok(gimpi_key_open(&a, "gimpi-js", box, GIMPI_KEY_SEAL_EXTRA - 1, out) < 0,
       "seal: a short box is refused");
}

int main(void)
{
    plan(NO_PLAN);
    test_seal();
    snprintf(s_tmp, sizeof s_tmp, "/tmp/gimpi-t-key.XXXXXX");
    if (!mkdtemp(s_tmp))
        BAIL_OUT("mkdtemp");
    test_derive();
    test_files();
    test_default();
    test_squat();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", s_tmp);
    if (system(cmd) != 0)
        diag("could not remove %s", s_tmp);
    done_testing();
}
