/*  gimpi_key.c — the job secret: where it lives, how it is checked, what is derived from it.
 *
 *  Files and directories are checked by descriptor (open with O_NOFOLLOW, then fstat), so
 *  that a link planted by someone else is refused rather than followed.  All randomness,
 *  key derivation, key pairs and MACs are libsodium's (randombytes_buf, crypto_kdf,
 *  crypto_box_seed_keypair, crypto_auth_hmacsha256).  gimpi_key.h says what each call
 *  promises; doc/security.md says why.
 */
#include "base/gimpi_key.h"
#include "base/gimpi_err.h"
#include "base/gimpi_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sodium.h>

_Static_assert(GIMPI_KEY_SEAL_EXTRA == crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES,
               "the sealed box's overhead");
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*  libsodium must be initialised once; sodium_init is idempotent and thread-safe. */
static void s_sodium(void)
{
    if (sodium_init() < 0)
        abort();                    /* no random source at all: nothing can be trusted */
}

/*  Checks that st describes something private to this user: owned by us, no group or
 *  other access.  what names it in the message. */
static int s_private(const struct stat *st, const char *path, const char *what, char *err,
                     size_t errsize)
{
    if (st->st_uid != getuid())
        return gimpi_fail(err, errsize,
                          "%s %s belongs to uid %u, not to you (uid %u): another user may have "
                          "made it first; remove it (it is not yours) or set %s",
                          what, path, (unsigned)st->st_uid, (unsigned)getuid(),
                          strcmp(what, "the runtime directory") == 0 ? "XDG_RUNTIME_DIR"
                                                                     : GIMPI_ENV_KEY_FILE);
    if (st->st_mode & 077)
        return gimpi_fail(err, errsize, "%s %s is open to other users (mode %04o); make it "
                          "private: chmod %s %s", what, path, (unsigned)(st->st_mode & 07777),
                          S_ISDIR(st->st_mode) ? "700" : "600", path);
    return 0;
}

/*  Makes (0700 when missing) and checks one candidate runtime directory, path.  0, or -1
 *  with a message; *theirs = 1 when the failure is that someone else made it (another
 *  owner, or not a directory of its own), which the caller may step around. */
static int s_rundir_check(const char *path, int *theirs, char *err, size_t errsize)
{
    *theirs = 0;
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return gimpi_fail(err, errsize, "cannot make the runtime directory %s: %s", path,
                          strerror(errno));
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *theirs = errno == ENOTDIR || errno == ELOOP;
        return gimpi_fail(err, errsize, "the runtime directory %s is not a directory of its "
                          "own: %s; remove it", path, strerror(errno));
    }
    struct stat st;
    int rc = fstat(fd, &st);
    close(fd);
    if (rc < 0)
        return gimpi_fail(err, errsize, "cannot check the runtime directory %s: %s", path,
                          strerror(errno));
    *theirs = st.st_uid != getuid();
    return s_private(&st, path, "the runtime directory", err, errsize);
}

/*  The fallback runtime directory into buf, $HOME/.gimpi/run-HOST (HOST: this machine's
 *  name, for a home shared between hosts): 0, or -1 when there is no home of this user's
 *  or the name is too long for a socket beneath it. */
static int s_rundir_home(char *buf, size_t size)
{
    const char *home = getenv("HOME");
    char host[64] = "";
    if (!home || !*home || gethostname(host, sizeof host - 1) < 0)
        return -1;
    host[strcspn(host, ".")] = 0;
    int n = snprintf(buf, size, "%s/.gimpi", home);
    if (n <= 0 || (size_t)n >= size)
        return -1;
    struct stat st;
    if (mkdir(buf, 0700) < 0 && errno != EEXIST)
        return -1;
    if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
        return -1;
    n = snprintf(buf, size, "%s/.gimpi/run-%s", home, host);
    return n > 0 && (size_t)n < size && (size_t)n < 108 - sizeof "/groupd.pub" ? 0 : -1;
}

/*  The private runtime directory (gimpi_key.h). */
int gimpi_rundir(char *buf, size_t size, char *err, size_t errsize)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n = xdg && *xdg ? snprintf(buf, size, "%s/gimpi", xdg)
                        : snprintf(buf, size, "/tmp/gimpi-%u", (unsigned)getuid());
    if (n <= 0 || (size_t)n >= size || (size_t)n >= 108 - sizeof "/groupd")
        return gimpi_fail(err, errsize, "the runtime directory's name is too long (%s): set "
                          "XDG_RUNTIME_DIR to a shorter path", xdg ? xdg : "");
    int theirs;
    int rc = s_rundir_check(buf, &theirs, err, errsize);
    if (rc == 0 || !theirs)
        return rc;
    /* another user made it first (a shared /tmp is anybody's): step around it into the
     * user's home rather than fail every job of the user (doc/security.md) */
    char alt[256], why[GIMPI_KEY_ERRLEN];
    int alt_theirs;
    if (s_rundir_home(alt, sizeof alt) < 0 || (size_t)snprintf(NULL, 0, "%s", alt) >= size
        || s_rundir_check(alt, &alt_theirs, why, sizeof why) < 0)
        return -1;                      /* err still says what is wrong with the first */
    snprintf(buf, size, "%s", alt);
    return 0;
}

/*  Fresh random bytes (gimpi_key.h). */
void gimpi_key_random(gimpi_key_t *key)
{
    s_sodium();
    randombytes_buf(key->bytes, sizeof key->bytes);
}

/*  Fresh random bytes of any length (gimpi_key.h). */
void gimpi_key_random_bytes(void *buf, size_t len)
{
    s_sodium();
    randombytes_buf(buf, len);
}

/*  Parses the text of a key file: 64 hex digits, then only white space. */
static int s_parse(gimpi_key_t *key, const char *text, size_t len, const char *where,
                   char *err, size_t errsize)
{
    size_t bin_len = 0;
    const char *end = NULL;
    if (len < GIMPI_KEY_HEXLEN
        || sodium_hex2bin(key->bytes, sizeof key->bytes, text, GIMPI_KEY_HEXLEN, NULL, &bin_len,
                          &end) != 0
        || bin_len != GIMPI_KEY_SIZE)
        return gimpi_fail(err, errsize, "%s does not hold a key (want %d hex digits)", where,
                          GIMPI_KEY_HEXLEN);
    for (size_t i = GIMPI_KEY_HEXLEN; i < len; i++)
        if (!strchr(" \t\r\n", text[i]))
            return gimpi_fail(err, errsize, "%s holds more than a key (want %d hex digits)", where,
                              GIMPI_KEY_HEXLEN);
    return 0;
}

/*  Reads all of fd (at most a small key file's worth) and parses it. */
static int s_read_parse(gimpi_key_t *key, int fd, const char *where, char *err, size_t errsize)
{
    char text[GIMPI_KEY_HEXLEN + 64];
    size_t len = 0;
    for (;;) {
        /* a pipe whose writer never closes it must not hold the task forever */
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int ready = poll(&p, 1, GIMPI_KEY_READ_MS);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0)
            return gimpi_fail(err, errsize, "%s: no end of the key within %d ms (its writer must "
                              "close it)", where, GIMPI_KEY_READ_MS);
        ssize_t r = read(fd, text + len, sizeof text - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return gimpi_fail(err, errsize, "cannot read %s: %s", where, strerror(errno));
        if (r == 0)
            break;
        len += (size_t)r;
        if (len == sizeof text)
            return gimpi_fail(err, errsize, "%s is too long for a key file", where);
    }
    int rc = s_parse(key, text, len, where, err, errsize);
    gimpi_key_wipe(text, sizeof text);
    return rc;
}

/*  Reads a key file (gimpi_key.h). */
int gimpi_key_load(gimpi_key_t *key, const char *path, char *err, size_t errsize)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return gimpi_fail(err, errsize, "cannot open the key file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return gimpi_fail(err, errsize, "the key file %s is not a regular file", path);
    }
    char where[GIMPI_KEY_PATHLEN + 16];
    snprintf(where, sizeof where, "the key file %s", path);
    int rc = s_private(&st, path, "the key file", err, errsize);
    if (rc == 0)
        rc = s_read_parse(key, fd, where, err, errsize);
    close(fd);
    return rc;
}

/*  Reads the key from a descriptor (gimpi_key.h). */
int gimpi_key_load_fd(gimpi_key_t *key, int fd, char *err, size_t errsize)
{
    char where[64];
    snprintf(where, sizeof where, "descriptor %d (%s)", fd, GIMPI_ENV_KEY_FD);
    int rc = s_read_parse(key, fd, where, err, errsize);
    close(fd);
    return rc;
}

/*  Reads the key from an open file (a memfd, say) from its start, leaving it open and its
 *  offset alone, so that children that inherit it can read it too.  (A descriptor is had
 *  only by inheritance, so its file's mode is not checked: a memfd's is 0777.) */
static int s_load_file_fd(gimpi_key_t *key, int fd, char *err, size_t errsize)
{
    char where[64], text[GIMPI_KEY_HEXLEN + 64];
    snprintf(where, sizeof where, "descriptor %d (%s)", fd, GIMPI_ENV_KEY_FD);
    ssize_t n = pread(fd, text, sizeof text, 0);
    if (n < 0)
        return gimpi_fail(err, errsize, "cannot read %s: %s", where, strerror(errno));
    int rc = s_parse(key, text, (size_t)n, where, err, errsize);
    gimpi_key_wipe(text, sizeof text);
    return rc;
}

/*  The key in a sealed memfd (gimpi_key.h). */
int gimpi_key_memfd(const gimpi_key_t *key, int cloexec)
{
    int wfd = memfd_create("gimpi-key", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (wfd < 0)
        return -1;
    char self[32];
    snprintf(self, sizeof self, "/proc/self/fd/%d", wfd);
    int rfd = -1;
    if (gimpi_key_write_fd(key, wfd) == 0
        && fcntl(wfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0)
        rfd = open(self, O_RDONLY | (cloexec ? O_CLOEXEC : 0));
    int e = errno;
    close(wfd);
    errno = e;
    return rfd;
}

/*  After a pipe was read: the key goes into a memfd that GIMPI_KEY_FD now names, so that a
 *  later load in this process, and children, find the same key.  Without a memfd the
 *  variable is removed (they then look where the file's head says). */
static void s_keep_in_memfd(const gimpi_key_t *key)
{
    int mfd = gimpi_key_memfd(key, 0);
    char num[16];
    if (mfd >= 0) {
        snprintf(num, sizeof num, "%d", mfd);
        setenv(GIMPI_ENV_KEY_FD, num, 1);
        return;
    }
    unsetenv(GIMPI_ENV_KEY_FD);
}

/*  Writes the key's text (gimpi_key.h). */
int gimpi_key_write_fd(const gimpi_key_t *key, int fd)
{
    char text[GIMPI_KEY_HEXLEN + 2];
    sodium_bin2hex(text, sizeof text, key->bytes, sizeof key->bytes);
    text[GIMPI_KEY_HEXLEN] = '\n';
    size_t off = 0, len = GIMPI_KEY_HEXLEN + 1;
    int rc = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    gimpi_key_wipe(text, sizeof text);
    return rc;
}

/*  Loads or creates a key file (gimpi_key.h). */
int gimpi_key_load_or_create(gimpi_key_t *key, const char *path, char *err, size_t errsize)
{
    if (access(path, F_OK) == 0 || errno != ENOENT)
        return gimpi_key_load(key, path, err, errsize);
    char tmp[GIMPI_KEY_PATHLEN + 32];
    s_sodium();
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.%08x", path, (long)getpid(),
                     (unsigned)randombytes_random());
    if (n <= 0 || (size_t)n >= sizeof tmp)
        return gimpi_fail(err, errsize, "the key file's name is too long: %s", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return gimpi_fail(err, errsize, "cannot create the key file %s: %s", tmp, strerror(errno));
    gimpi_key_t fresh;
    gimpi_key_random(&fresh);
    int rc = gimpi_key_write_fd(&fresh, fd);
    gimpi_key_wipe(&fresh, sizeof fresh);
    if (close(fd) < 0 || rc < 0) {
        unlink(tmp);
        return gimpi_fail(err, errsize, "cannot write the key file %s: %s", tmp, strerror(errno));
    }
    /* link fails with EEXIST when another creator won: then everyone loads the winner's */
    if (link(tmp, path) < 0 && errno != EEXIST) {
        int e = errno;
        unlink(tmp);
        return gimpi_fail(err, errsize, "cannot create the key file %s: %s", path, strerror(e));
    }
    unlink(tmp);
    return gimpi_key_load(key, path, err, errsize);
}

/*  The shared key file in the home directory, when the user has one: 1 (path filled),
 *  0 (none), or -1 with a message when the home directory cannot be found. */
static int s_home_key(char *path, size_t size)
{
    const char *home = getenv("HOME");
    char buf[1024];
    struct passwd pw, *res = NULL;
    if ((!home || !*home) && getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res)
        home = res->pw_dir;
    if (!home || !*home)
        return 0;
    int n = snprintf(path, size, "%s/.gimpi/key", home);
    if (n <= 0 || (size_t)n >= size)
        return 0;
    struct stat st;
    return lstat(path, &st) == 0 ? 1 : 0;
}

/*  The user's key (gimpi_key.h). */
int gimpi_key_default(gimpi_key_t *key, char *from, size_t fromsize, char *err, size_t errsize)
{
    char path[GIMPI_KEY_PATHLEN];
    char dummy[1];
    if (!from) {
        from = dummy;
        fromsize = sizeof dummy;
    }
    const char *fdtext = gimpi_env(GIMPI_ENV_KEY_FD);
    if (fdtext && *fdtext) {
        char *end = NULL;
        long fd = strtol(fdtext, &end, 10);
        if (*end || fd < 0 || fd > 1 << 20) {
            unsetenv(GIMPI_ENV_KEY_FD);
            return gimpi_fail(err, errsize, "%s is not a descriptor number", GIMPI_ENV_KEY_FD);
        }
        snprintf(from, fromsize, "%s=%ld", GIMPI_ENV_KEY_FD, fd);
        struct stat st;
        if (fstat((int)fd, &st) == 0 && S_ISREG(st.st_mode))
            return s_load_file_fd(key, (int)fd, err, errsize);
        if (gimpi_key_load_fd(key, (int)fd, err, errsize) < 0) {
            unsetenv(GIMPI_ENV_KEY_FD);
            return -1;
        }
        s_keep_in_memfd(key);
        return 0;
    }
    const char *file = gimpi_env(GIMPI_ENV_KEY_FILE);
    if (file && *file) {
        snprintf(from, fromsize, "%s", file);
        return gimpi_key_load(key, file, err, errsize);
    }
    if (s_home_key(path, sizeof path) == 1) {
        snprintf(from, fromsize, "%s", path);
        return gimpi_key_load(key, path, err, errsize);
    }
    char dir[GIMPI_KEY_PATHLEN - 8];
    if (gimpi_rundir(dir, sizeof dir, err, errsize) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/key", dir);
    snprintf(from, fromsize, "%s", path);
    return gimpi_key_load_or_create(key, path, err, errsize);
}

/*  A subkey for a purpose (gimpi_key.h). */
void gimpi_key_derive(const gimpi_key_t *key, const char context[8], uint64_t id, uint8_t *out,
                      size_t outlen)
{
    s_sodium();
    if (outlen < crypto_kdf_BYTES_MIN || outlen > crypto_kdf_BYTES_MAX
        || crypto_kdf_derive_from_key(out, outlen, id, context, key->bytes) != 0)
        abort();                    /* a caller's bug: the sizes are compile-time facts */
}

/*  A CURVE key pair for a role (gimpi_key.h). */
void gimpi_key_keypair(const gimpi_key_t *key, uint64_t id, uint8_t pub[32], uint8_t sec[32])
{
    uint8_t seed[crypto_box_SEEDBYTES];
    gimpi_key_derive(key, "gimpi-cv", id, seed, sizeof seed);
    crypto_box_seed_keypair(pub, sec, seed);
    gimpi_key_wipe(seed, sizeof seed);
}

/*  HMAC-SHA-256 under a derived key (gimpi_key.h). */
void gimpi_key_mac(const gimpi_key_t *key, const char context[8], const void *data, size_t len,
                   uint8_t mac[GIMPI_KEY_MACLEN])
{
    uint8_t k[crypto_auth_hmacsha256_KEYBYTES];
    gimpi_key_derive(key, context, 0, k, sizeof k);
    crypto_auth_hmacsha256(mac, data, len, k);
    gimpi_key_wipe(k, sizeof k);
}

/*  Seals data under a derived key (gimpi_key.h). */
void gimpi_key_seal(const gimpi_key_t *key, const char context[8], const void *data, size_t len,
                    uint8_t *out)
{
    uint8_t k[crypto_secretbox_KEYBYTES];
    gimpi_key_derive(key, context, 0, k, sizeof k);
    randombytes_buf(out, crypto_secretbox_NONCEBYTES);
    crypto_secretbox_easy(out + crypto_secretbox_NONCEBYTES, data, len, out, k);
    gimpi_key_wipe(k, sizeof k);
}

/*  Opens a sealed box (gimpi_key.h). */
int gimpi_key_open(const gimpi_key_t *key, const char context[8], const uint8_t *sealed,
                   size_t sealed_len, void *out)
{
    if (sealed_len < GIMPI_KEY_SEAL_EXTRA)
        return -1;
    uint8_t k[crypto_secretbox_KEYBYTES];
    gimpi_key_derive(key, context, 0, k, sizeof k);
    int rc = crypto_secretbox_open_easy(out, sealed + crypto_secretbox_NONCEBYTES,
                                        sealed_len - crypto_secretbox_NONCEBYTES, sealed, k);
    gimpi_key_wipe(k, sizeof k);
    return rc == 0 ? 0 : -1;
}

/*  Checks a MAC in constant time (gimpi_key.h). */
bool gimpi_key_mac_ok(const gimpi_key_t *key, const char context[8], const void *data,
                      size_t len, const uint8_t mac[GIMPI_KEY_MACLEN])
{
    uint8_t k[crypto_auth_hmacsha256_KEYBYTES];
    gimpi_key_derive(key, context, 0, k, sizeof k);
    bool ok = crypto_auth_hmacsha256_verify(mac, data, len, k) == 0;
    gimpi_key_wipe(k, sizeof k);
    return ok;
}

/*  The derived IMPI KEY (gimpi_key.h). */
uint64_t gimpi_key_impi(const gimpi_key_t *key)
{
    uint8_t b[16];
    gimpi_key_derive(key, "gimpi-ik", 0, b, sizeof b);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    gimpi_key_wipe(b, sizeof b);
    return v;
}

/*  A public fingerprint (gimpi_key.h). */
const char *gimpi_key_fingerprint(const gimpi_key_t *key, char buf[9])
{
    uint8_t fp[16];
    gimpi_key_derive(key, "gimpi-fp", 0, fp, sizeof fp);
    sodium_bin2hex(buf, 9, fp, 4);
    return buf;
}

/*  Erases a secret (gimpi_key.h). */
void gimpi_key_wipe(void *p, size_t len)
{
    sodium_memzero(p, len);
}

/*  Self-test (gimpi_key.h). */
int gimpi_key_selftest(void)
{
    int bad = 0;
    gimpi_key_t a, b;
    gimpi_key_random(&a);
    gimpi_key_random(&b);
    bad += sodium_memcmp(a.bytes, b.bytes, GIMPI_KEY_SIZE) == 0;
    uint8_t pa[32], sa[32], pa2[32], sa2[32], pb[32], sb[32];
    gimpi_key_keypair(&a, 1, pa, sa);
    gimpi_key_keypair(&a, 1, pa2, sa2);
    gimpi_key_keypair(&a, 2, pb, sb);
    bad += memcmp(pa, pa2, 32) != 0 || memcmp(sa, sa2, 32) != 0;
    bad += memcmp(pa, pb, 32) == 0;
    uint8_t mac[GIMPI_KEY_MACLEN];
    gimpi_key_mac(&a, "selftest", "abc", 3, mac);
    bad += !gimpi_key_mac_ok(&a, "selftest", "abc", 3, mac);
    bad += gimpi_key_mac_ok(&b, "selftest", "abc", 3, mac);
    bad += gimpi_key_mac_ok(&a, "selftes2", "abc", 3, mac);
    bad += gimpi_key_mac_ok(&a, "selftest", "abd", 3, mac);
    if (bad)
        fprintf(stderr, "gimpi_key_selftest: %d checks failed\n", bad);
    return bad;
}
