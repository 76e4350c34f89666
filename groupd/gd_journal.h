/*  gd_journal.h — groupd's journal: every change of its state, appended to a file in the
 *  private runtime directory, so that a groupd killed (kill -9, an OOM kill, a crash) is
 *  started again with everything it held (doc/reliability.md).
 *
 *  The journal is a command log: a record holds a request that changed groupd's state
 *  (JOIN, LEAVE, REGISTER, RESERVE, the message box's puts ...) with the routing id of its
 *  sender and the reply groupd sent, a reply that came later (a barrier's release), or the
 *  end of a task whose connection closed.  Replaying the records through the same request
 *  handler (gd_serve.c) rebuilds the same registry, the same versions, the same reserved
 *  blocks and tokens (a RESERVE's token is taken from its recorded reply), and the table
 *  of replies a client may ask for again (gd_dedup.h).  A record is
 *      Uint4 length (of what follows up to the checksum), Uint1 type, the fields, Uint4 CRC-32
 *  with the fields of its type's row in GD_JOURNAL_RECORDS (i: Int4, q: Uint8, b: Uint4
 *  length + bytes).  A short last record (a write cut by the machine's crash) is ignored
 *  and cut off; a record whose checksum or layout is wrong before the end is refused.
 *  Compaction: past a bound (groupd --journal-max) groupd writes the records that rebuild
 *  its state now to a temporary file and renames it over the journal (gd_journal_rewrite).
 *  fsync: none per record (doc/reliability.md says why).
 */
#ifndef GIMPI_GD_JOURNAL_H
#define GIMPI_GD_JOURNAL_H

#include "groups/gd_proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*  The records: X(name, code, fields).  */
#define GD_JOURNAL_RECORDS(X)                                                           \
    X(JR_HEAD,  0x01, "iq")    /* format version, when the journal was begun (ms) */    \
    X(JR_REQ,   0x02, "bbb")   /* routing id, request frames, reply frames ("": none) */ \
    X(JR_REPLY, 0x03, "bb")    /* routing id, a reply sent later (barrier, freeze ...) */ \
    X(JR_GONE,  0x04, "i")     /* tid: its connection ended (the task exited) */       \
    X(JR_TERM,  0x05, "i")     /* the term from here on (a standby that took over) */  \
    /* a compacted journal: the state as it was (gd_record.c writes, groupd.c reads) */   \
    X(JR_COUNTERS, 0x10, "qi")     /* last version handed out, next tid */              \
    X(JR_TASK,  0x11, "bibib")  /* routing id, tid, REGISTER's data, parent, program */  \
    X(JR_GROUP, 0x12, "bqiib")  /* name, version, frozen size, dead, tids by instance */ \
    X(JR_BLOCK, 0x13, "iibbb")  /* base, n, bitmap of tids used, token, RESERVE key */   \
    X(JR_HOSTS, 0x14, "ibibb")  /* hosts, table, 1 manager | 2 token needed, its routing \
                                   id, the launcher token */                             \
    X(JR_MBOX,  0x15, "biiiib") /* class, index, owner, flags, encoding, entry */       \
    X(JR_DEDUP, 0x16, "bib")    /* routing id, request id, its reply */

#define GD_JR_X_ENUM(name, code, fields) GD_##name = code,
enum { GD_JOURNAL_RECORDS(GD_JR_X_ENUM) };
#undef GD_JR_X_ENUM

enum {
    GD_JOURNAL_FORMAT = 1,              /* JR_HEAD's format version */
    GD_JOURNAL_MAX_FIELDS = 6,
    GD_JOURNAL_MAX_RECORD = 1 << 26,    /* longest record accepted (64 MiB) */
    GD_JOURNAL_MAX_PACKED = 64,         /* frames in a packed frame list */
};

/*  Default bound of the journal before it is compacted (groupd --journal-max): a restart
 *  replays some 50 MB a second here, so at most about 0.1 s of the outage is the replay;
 *  4 tasks in a loop of join, barrier, reduce, the message box and leave write some
 *  2.7 kB a round, so they compact every 1,500 rounds. */
#define GD_JOURNAL_DEFAULT_MAX ((size_t)4 << 20)

/*  Errors of the codec and of replay. */
typedef enum {
    GD_JR_OK = 0,
    GD_JR_SHORT = -1,           /* the bytes end inside the record (a cut tail) */
    GD_JR_CRC = -2,             /* the checksum does not match */
    GD_JR_TYPE = -3,            /* an unknown record type */
    GD_JR_LAYOUT = -4,          /* fields do not match the type's layout */
    GD_JR_SIZE = -5,            /* longer than GD_JOURNAL_MAX_RECORD */
} gd_jr_err_t;

const char *gd_journal_strerror(int err);

/*  One field: i, q, or b (data points into the caller's bytes, not owned). */
typedef struct {
    int32_t i;
    uint64_t q;
    const uint8_t *data;
    size_t len;
} gd_jfield_t;

/*  A decoded record. */
typedef struct {
    uint8_t type;
    int nfields;
    gd_jfield_t f[GD_JOURNAL_MAX_FIELDS];
} gd_jrec_t;

/*  Name of a record type ("JR_REQ"), or NULL when unknown. */
const char *gd_journal_type_name(uint8_t type);

/*  Bytes the record needs encoded, 0 when the type is unknown or the fields do not fit. */
size_t gd_journal_encoded_size(uint8_t type, const gd_jfield_t *f, int n);
/*  Encodes a record into out (gd_journal_encoded_size bytes).  Returns its length or 0. */
size_t gd_journal_encode(uint8_t type, const gd_jfield_t *f, int n, uint8_t *out);
/*  Decodes the record at the start of data; *used gets its length.  Pure; trusts no
 *  length.  GD_JR_OK or a gd_jr_err_t. */
int gd_journal_decode(const uint8_t *data, size_t len, gd_jrec_t *rec, size_t *used);

/*  The records' checksum: CRC-32 (IEEE) of the type byte and the fields. */
uint32_t gd_journal_crc32(const uint8_t *p, size_t n);

/*  Packs frames into one blob (Uint4 count, then Uint4 length + bytes each) in a malloc'ed
 *  buffer; returns its length (0 on failure, *out NULL). */
size_t gd_journal_pack(const gd_frame_t *frames, int n, uint8_t **out);
/*  Unpacks a blob into frames pointing into it; returns their number or -1. */
int gd_journal_unpack(const uint8_t *data, size_t len, gd_frame_t *frames, int max);

/* ------------------------------------------------------------------ the file */

typedef struct gd_journal_t gd_journal_t;

/*  Opens (creating, 0600) the journal file without following a symbolic link; it must be
 *  a regular file of ours.  NULL with the reason in err. */
gd_journal_t *gd_journal_open(const char *path, size_t max_bytes, char *err, size_t errsize);
/*  Closes; with remove, the file is unlinked too (a groupd that ends on purpose). */
void gd_journal_destroy(gd_journal_t **self_p, bool remove);

/*  Called for each record of a replay; returns 0 to go on. */
typedef int (*gd_journal_apply_fn)(void *arg, const gd_jrec_t *rec);

/*  Reads the file and hands every record to fn; a cut last record is cut off the file.
 *  Returns the number of records, or -1 with the reason (and the record's offset) in err. */
long gd_journal_replay(gd_journal_t *self, gd_journal_apply_fn fn, void *arg, char *err,
                       size_t errsize);
/*  Replays a buffer (the file's bytes, for the fuzzer and the tests); *good gets the
 *  length of its whole records.  Number of records or a gd_jr_err_t (< 0). */
long gd_journal_replay_bytes(const uint8_t *data, size_t len, gd_journal_apply_fn fn,
                             void *arg, size_t *good);

/*  Appends one record with one write(2).  0 or -1 (errno). */
int gd_journal_append(gd_journal_t *self, uint8_t type, const gd_jfield_t *f, int n);
/*  Called with the bytes of every record appended (a standby follows them, gd_follow.h). */
typedef void (*gd_journal_tap_fn)(void *arg, const uint8_t *data, size_t len);
void gd_journal_set_tap(gd_journal_t *self, gd_journal_tap_fn fn, void *arg);
/*  A standby's side: appends bytes as they are (whole records, from its primary), or first
 *  empties the file (image: the primary's journal anew).  0 or -1 (errno). */
int gd_journal_write_raw(gd_journal_t *self, const uint8_t *data, size_t len, bool image);
/*  The whole file, malloc'ed (*len its length), or NULL. */
uint8_t *gd_journal_read_all(gd_journal_t *self, size_t *len);
/*  True when the file has grown past its bound: time to compact. */
bool gd_journal_full(const gd_journal_t *self);
/*  Bytes in the file. */
size_t gd_journal_size(const gd_journal_t *self);
const char *gd_journal_path(const gd_journal_t *self);

/*  Compaction: the records written by fn (through gd_journal_append on the journal it is
 *  given) go to PATH.tmp, which is then renamed over PATH; from then on appends go to the
 *  new file.  0, or -1 with the old file kept and the reason in err. */
typedef int (*gd_journal_dump_fn)(void *arg, gd_journal_t *out);
int gd_journal_rewrite(gd_journal_t *self, gd_journal_dump_fn fn, void *arg, char *err,
                       size_t errsize);

#endif
