/*  gimpi_key.h — the job secret, the private runtime directory, and what is made of them.
 *
 *  A virtual machine (one user's groupd and every task that reaches it) shares one secret
 *  of GIMPI_KEY_SIZE random bytes, the key.  It lives in a key file: 64 hex digits and a
 *  newline, in a regular file that belongs to the user and that nobody else may read or
 *  write.  Tasks find it without being told (gimpi_key_default): an inherited descriptor
 *  (GIMPI_KEY_FD: a pipe or a memfd), a named file (GIMPI_KEY_FILE), the user's shared file ~/.gimpi/key
 *  when it exists, or else the file "key" in the private runtime directory, which the
 *  first task of the machine creates from the system's random source.  The key never
 *  appears on a command line.  Everything that proves membership is derived from it
 *  with libsodium: CURVE key pairs for groupd's TCP endpoints (gimpi_key_keypair) and the
 *  MACs of the data plane's introductions (gimpi_key_mac); no cryptography is written
 *  here.  The runtime directory ($XDG_RUNTIME_DIR/gimpi, or /tmp/gimpi-UID) is made 0700
 *  and checked at every use: a directory that another user made first is refused with a
 *  message that says so.  doc/security.md has the threat model.
 */
#ifndef GIMPI_KEY_H
#define GIMPI_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    GIMPI_KEY_SIZE = 32,            /* bytes of secret */
    GIMPI_KEY_HEXLEN = 64,          /* its text form in a key file */
    GIMPI_KEY_MACLEN = 32,          /* HMAC-SHA-256 */
    GIMPI_KEY_SEAL_EXTRA = 40,      /* a sealed box's nonce (24) and tag (16) */
    GIMPI_KEY_PATHLEN = 256,        /* room for any path this file makes */
    GIMPI_KEY_ERRLEN = 512,         /* room for any message this file writes */
    GIMPI_KEY_READ_MS = 5000,       /* longest wait for a GIMPI_KEY_FD pipe's end */
};

/*  Environment variables that choose the key. */
#define GIMPI_ENV_KEY_FD "GIMPI_KEY_FD"       /* an open descriptor holding the key text */
#define GIMPI_ENV_KEY_FILE "GIMPI_KEY_FILE"   /* a key file to use (must exist) */

/*  The secret. */
typedef struct {
    uint8_t bytes[GIMPI_KEY_SIZE];
} gimpi_key_t;

/*  The private runtime directory into buf ($XDG_RUNTIME_DIR/gimpi, else /tmp/gimpi-UID),
 *  made 0700 when missing.  It must be a directory (not a link) owned by this user with no
 *  access for group or others.  Returns 0, or -1 with a message in err (when err is not
 *  NULL) that names the directory and what is wrong with it. */
int gimpi_rundir(char *buf, size_t size, char *err, size_t errsize);

/*  The key's text in a memfd sealed against any change (write, grow, shrink, more seals),
 *  returned as a read-only descriptor (close-on-exec when cloexec) for children to
 *  inherit through GIMPI_KEY_FD: a descendant can read the key, never replace it for the
 *  others.  The descriptor, or -1 with errno set. */
int gimpi_key_memfd(const gimpi_key_t *key, int cloexec);

/*  Fills key with fresh bytes from the system's random source. */
void gimpi_key_random(gimpi_key_t *key);

/*  Fills buf with len fresh bytes from the system's random source (nonces, challenges). */
void gimpi_key_random_bytes(void *buf, size_t len);

/*  Reads a key file.  The file must be a regular file owned by this user, without access
 *  for group or others, holding 64 hex digits (then optional white space).  0, or -1 with
 *  a message. */
int gimpi_key_load(gimpi_key_t *key, const char *path, char *err, size_t errsize);

/*  Reads the key text from an open descriptor (which it closes).  0, or -1 with a message. */
int gimpi_key_load_fd(gimpi_key_t *key, int fd, char *err, size_t errsize);

/*  Loads the key file at path, or, when there is none, creates it (0600, fresh random
 *  bytes, written under another name and linked into place, so that racing creators all
 *  end up with the same key).  0, or -1 with a message. */
int gimpi_key_load_or_create(gimpi_key_t *key, const char *path, char *err, size_t errsize);

/*  Writes the key's text form (64 hex digits and a newline) to fd.  0 or -1 (errno). */
int gimpi_key_write_fd(const gimpi_key_t *key, int fd);

/*  The user's key, found as the file's head says: GIMPI_KEY_FD, GIMPI_KEY_FILE, ~/.gimpi/key,
 *  the runtime directory's "key" (created when missing).  Where it came from goes to from
 *  (may be NULL).  A GIMPI_KEY_FD that is a file (a memfd, as a launcher makes one) is
 *  read from its start and left open, so that children inherit it; one that is a pipe is
 *  read and closed, and GIMPI_KEY_FD then names a memfd holding the key, so that later
 *  loads in this process and children find the same key.  0, or -1 with a message. */
int gimpi_key_default(gimpi_key_t *key, char *from, size_t fromsize, char *err, size_t errsize);

/*  Derives outlen (16..64) bytes for the purpose named by context (exactly 8 characters)
 *  and id: a different key for every use, none of which reveals the secret. */
void gimpi_key_derive(const gimpi_key_t *key, const char context[8], uint64_t id, uint8_t *out,
                      size_t outlen);

/*  A CURVE25519 key pair for role id (so that every holder of the key computes the same
 *  pair): 32-byte public and secret keys, as ZeroMQ's CURVE options take them. */
void gimpi_key_keypair(const gimpi_key_t *key, uint64_t id, uint8_t pub[32], uint8_t sec[32]);

/*  HMAC-SHA-256 over data under a key derived from the secret for context. */
void gimpi_key_mac(const gimpi_key_t *key, const char context[8], const void *data, size_t len,
                   uint8_t mac[GIMPI_KEY_MACLEN]);

/*  Seals len bytes of data under a sub-key for context (XSalsa20-Poly1305, a fresh random
 *  nonce): out gets len + GIMPI_KEY_SEAL_EXTRA bytes that only a holder of the key opens. */
void gimpi_key_seal(const gimpi_key_t *key, const char context[8], const void *data, size_t len,
                    uint8_t *out);
/*  Opens what gimpi_key_seal made (sealed_len bytes) into out (sealed_len -
 *  GIMPI_KEY_SEAL_EXTRA bytes).  0, or -1 when it was not sealed under this key and
 *  context, or was changed. */
int gimpi_key_open(const gimpi_key_t *key, const char context[8], const uint8_t *sealed,
                   size_t sealed_len, void *out);

/*  Checks a MAC made by gimpi_key_mac, in constant time. */
bool gimpi_key_mac_ok(const gimpi_key_t *key, const char context[8], const void *data,
                      size_t len, const uint8_t mac[GIMPI_KEY_MACLEN]);

/*  The 64-bit IMPI KEY (IMPI's own, weak authentication of startup clients) derived from the
 *  secret, so that holders of the same key file agree on it without being told.  It is the
 *  same for every job of the user and travels in clear, so it is used only where the user
 *  asks for it (impi-server -auth key, -print-key for clients of other implementations);
 *  gimpi's own clients prove the key afresh instead (impi_wire.h, IMPI_AUTH_GIMPI). */
uint64_t gimpi_key_impi(const gimpi_key_t *key);

/*  A short public fingerprint of the key (8 hex digits), for logs and gimpi-stat: two
 *  hosts with the same fingerprint hold the same key.  buf needs 9 bytes. */
const char *gimpi_key_fingerprint(const gimpi_key_t *key, char buf[9]);

/*  Erases a key (or any secret) so that the compiler cannot skip it. */
void gimpi_key_wipe(void *p, size_t len);

/*  Self-test (returns 0 when every check holds; prints what failed to stderr). */
int gimpi_key_selftest(void);
#endif
