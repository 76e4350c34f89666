/*  t/gd_journal.c — groupd's journal alone (groupd/gd_journal.h, gd_dedup.h): records
 *  encoded and decoded by the table (round trip of every type), frame lists packed, a
 *  file written and replayed, a cut last record ignored and cut off, a torn last record
 *  ignored, a corrupt record before the end refused, compaction by rename, a symbolic
 *  link refused, the table of replies, and a standby's copy (the tap, raw writes, images).
 */
#include "groupd/gd_journal.h"
#include "groupd/gd_dedup.h"
#include "gtap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_dir[256];

/*  Counts records and sums the Int4 fields of JR_GONE (replay callback). */
typedef struct {
    long n;
    long sum;
    int types[8];
} seen_t;

static int s_count(void *arg, const gd_jrec_t *rec)
{
    seen_t *s = arg;
    s->n++;
    if (rec->type < 8)
        s->types[rec->type]++;
    if (rec->type == GD_JR_GONE)
        s->sum += rec->f[0].i;
    return 0;
}

/*  A file's size. */
static long s_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/*  Writes a journal of a head, n GONE records of tids 1..n and one REQ. */
static gd_journal_t *s_write(const char *path, int n)
{
    char err[256];
    unlink(path);
    gd_journal_t *j = gd_journal_open(path, 0, err, sizeof err);
    if (!j)
        return NULL;
    gd_journal_append(j, GD_JR_HEAD, (gd_jfield_t[2]){ { .i = GD_JOURNAL_FORMAT },
                                                       { .q = 42 } }, 2);
    for (int k = 1; k <= n; k++)
        gd_journal_append(j, GD_JR_GONE, &(gd_jfield_t){ .i = k }, 1);
    gd_journal_append(j, GD_JR_REQ, (gd_jfield_t[3]){ { .data = (const uint8_t *)"id", .len = 2 },
                                                      { .data = (const uint8_t *)"req", .len = 3 },
                                                      { .len = 0 } }, 3);
    return j;
}

/*  Codec: every record type round-trips; wrong layouts and sizes are refused. */
static void s_codec(void)
{
    uint8_t buf[256];
    gd_jfield_t f[3] = { { .data = (const uint8_t *)"key", .len = 3 },
                         { .data = (const uint8_t *)"frames", .len = 6 }, { .len = 0 } };
    size_t len = gd_journal_encode(GD_JR_REQ, f, 3, buf);
    gd_jrec_t rec;
    size_t used;
    ok(len > 0 && gd_journal_decode(buf, len, &rec, &used) == GD_JR_OK && used == len
       && rec.type == GD_JR_REQ && rec.nfields == 3 && rec.f[0].len == 3
       && !memcmp(rec.f[1].data, "frames", 6) && rec.f[2].len == 0,
       "JR_REQ round-trips (%zu bytes)", len);
    len = gd_journal_encode(GD_JR_HEAD, (gd_jfield_t[2]){ { .i = -7 }, { .q = 1ULL << 40 } }, 2,
                            buf);
    ok(gd_journal_decode(buf, len, &rec, &used) == GD_JR_OK && rec.f[0].i == -7
       && rec.f[1].q == 1ULL << 40, "JR_HEAD round-trips its Int4 and Uint8");
    ok(gd_journal_encode(GD_JR_GONE, f, 3, buf) == 0, "a record with the wrong field count "
       "is not encoded");
    ok(gd_journal_encode(0x7F, f, 1, buf) == 0 && gd_journal_type_name(0x7F) == NULL
       && !strcmp(gd_journal_type_name(GD_JR_REPLY), "JR_REPLY"), "an unknown type neither");
    len = gd_journal_encode(GD_JR_GONE, &(gd_jfield_t){ .i = 5 }, 1, buf);
    ok(gd_journal_decode(buf, len - 1, &rec, &used) == GD_JR_SHORT, "cut short: GD_JR_SHORT");
    buf[5] ^= 1;
    ok(gd_journal_decode(buf, len, &rec, &used) == GD_JR_CRC, "a flipped bit: GD_JR_CRC");
    buf[5] ^= 1;
    buf[4] = 0x7F;
    ok(gd_journal_decode(buf, len, &rec, &used) == GD_JR_CRC, "another type byte breaks the "
       "checksum too");
    uint8_t huge[8] = { 0x7F, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0 };
    ok(gd_journal_decode(huge, sizeof huge, &rec, &used) == GD_JR_SIZE, "a 2 GiB length is "
       "refused before anything is read");
    gd_frame_t frames[3] = { { (const uint8_t *)"a", 1 }, { (const uint8_t *)"", 0 },
                             { (const uint8_t *)"xyz", 3 } }, back[4];
    uint8_t *packed;
    size_t plen = gd_journal_pack(frames, 3, &packed);
    int n = gd_journal_unpack(packed, plen, back, 4);
    ok(n == 3 && back[1].len == 0 && back[2].len == 3 && !memcmp(back[2].data, "xyz", 3),
       "frame lists pack and unpack");
    ok(gd_journal_unpack(packed, plen - 1, back, 4) < 0 && gd_journal_unpack(packed, plen, back, 2) < 0,
       "a cut list, or one of more frames than room, is refused");
    free(packed);
}

/*  The file: replay, cut tail, torn tail, corruption, compaction, symbolic link. */
static void s_file(void)
{
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/j", s_dir);
    gd_journal_t *j = s_write(path, 100);
    ok(j != NULL, "a journal is made");
    struct stat st;
    ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600");
    long full = s_size(path);
    gd_journal_destroy(&j, false);
    j = gd_journal_open(path, 0, err, sizeof err);
    seen_t s = { 0 };
    long n = gd_journal_replay(j, s_count, &s, err, sizeof err);
    ok(n == 102 && s.sum == 5050 && s.types[GD_JR_REQ] == 1, "replay: 102 records in order "
       "(%ld)", n);
    gd_journal_destroy(&j, false);
    /* a cut last record (a write the machine's crash cut short) */
    ok(truncate(path, full - 3) == 0, "cut 3 bytes off the end");
    j = gd_journal_open(path, 0, err, sizeof err);
    memset(&s, 0, sizeof s);
    n = gd_journal_replay(j, s_count, &s, err, sizeof err);
    ok(n == 101 && s.types[GD_JR_REQ] == 0, "the cut record is ignored (%ld records)", n);
    ok(s_size(path) < full - 3 && gd_journal_size(j) == (size_t)s_size(path),
       "and cut off the file, so appends follow whole records");
    gd_journal_append(j, GD_JR_GONE, &(gd_jfield_t){ .i = 1000 }, 1);
    gd_journal_destroy(&j, false);
    j = gd_journal_open(path, 0, err, sizeof err);
    memset(&s, 0, sizeof s);
    n = gd_journal_replay(j, s_count, &s, err, sizeof err);
    ok(n == 102 && s.sum == 6050, "a record appended after it replays");
    gd_journal_destroy(&j, false);
    /* a torn last record: whole length, garbage inside */
    int fd = open(path, O_RDWR);
    long size = s_size(path);
    uint8_t b = 0xAA;
    ok(fd >= 0 && pwrite(fd, &b, 1, size - 2) == 1, "a byte of the last record changed");
    j = gd_journal_open(path, 0, err, sizeof err);
    memset(&s, 0, sizeof s);
    n = gd_journal_replay(j, s_count, &s, err, sizeof err);
    ok(n == 101, "a torn last record is ignored too (%ld)", n);
    gd_journal_destroy(&j, false);
    /* corruption before the end */
    j = s_write(path, 10);
    gd_journal_destroy(&j, false);
    fd = open(path, O_RDWR);
    ok(fd >= 0 && pwrite(fd, &b, 1, 40) == 1, "a byte in the middle changed");
    close(fd);
    j = gd_journal_open(path, 0, err, sizeof err);
    n = gd_journal_replay(j, s_count, &s, err, sizeof err);
    ok(n < 0 && strstr(err, "checksum"), "a corrupt record before the end is refused: %s", err);
    gd_journal_destroy(&j, false);
    /* a symbolic link is not followed */
    char link[320];
    snprintf(link, sizeof link, "%s/l", s_dir);
    ok(symlink(path, link) == 0 && !gd_journal_open(link, 0, err, sizeof err)
       && strstr(err, "symbolic"), "a symbolic link is refused: %s", err);
}

/*  Compaction: the dump replaces the file whole; appends go on in the new one. */
static int s_dump(void *arg, gd_journal_t *out)
{
    (void)arg;
    return gd_journal_append(out, GD_JR_GONE, &(gd_jfield_t){ .i = 7 }, 1);
}

static int s_dump_fail(void *arg, gd_journal_t *out)
{
    (void)arg, (void)out;
    return -1;
}

static void s_compact(void)
{
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/c", s_dir);
    gd_journal_t *j = s_write(path, 5000);
    gd_journal_t *small = gd_journal_open(path, 4096, err, sizeof err);
    ok(small && gd_journal_full(small), "past its bound the journal says so (%zu bytes)",
       small ? gd_journal_size(small) : 0);
    gd_journal_destroy(&small, false);
    long before = s_size(path);
    ok(gd_journal_rewrite(j, s_dump_fail, NULL, err, sizeof err) < 0 && s_size(path) == before,
       "a dump that fails leaves the journal as it was");
    int rc = gd_journal_rewrite(j, s_dump, NULL, err, sizeof err);
    long after = s_size(path);
    ok(rc == 0 && after < 100, "compaction: %ld bytes became %ld", before, after);
    gd_journal_append(j, GD_JR_GONE, &(gd_jfield_t){ .i = 3 }, 1);
    gd_journal_destroy(&j, false);
    j = gd_journal_open(path, 0, err, sizeof err);
    seen_t s = { 0 };
    ok(gd_journal_replay(j, s_count, &s, err, sizeof err) == 2 && s.sum == 10,
       "the dump then the appends after it replay");
    gd_journal_destroy(&j, true);
    ok(access(path, F_OK) < 0, "a journal closed on purpose is removed");
}

/*  The table of replies. */
static void s_dedup(void)
{
    gd_dedup_t *d = gd_dedup_new();
    const uint8_t *r;
    size_t len;
    gd_dedup_put(d, (const uint8_t *)"k1", 2, 7, (const uint8_t *)"reply", 5);
    gd_dedup_put(d, (const uint8_t *)"k1", 2, 8, NULL, 0);
    ok(gd_dedup_get(d, (const uint8_t *)"k1", 2, 7, &r, &len) == GD_DEDUP_REPLY && len == 5
       && !memcmp(r, "reply", 5), "a reply is found by client and request id");
    ok(gd_dedup_get(d, (const uint8_t *)"k1", 2, 8, &r, &len) == GD_DEDUP_PENDING,
       "a request without its reply yet is pending");
    gd_dedup_put(d, (const uint8_t *)"k1", 2, 8, (const uint8_t *)"late", 4);
    ok(gd_dedup_get(d, (const uint8_t *)"k1", 2, 8, &r, &len) == GD_DEDUP_REPLY && len == 4,
       "its reply fills it in");
    ok(gd_dedup_get(d, (const uint8_t *)"k2", 2, 7, &r, &len) == GD_DEDUP_NONE,
       "another client's request id is another request");
    for (uint32_t k = 100; k < 100 + GD_DEDUP_PER_CLIENT; k++)
        gd_dedup_put(d, (const uint8_t *)"k1", 2, k, (const uint8_t *)"x", 1);
    ok(gd_dedup_get(d, (const uint8_t *)"k1", 2, 7, &r, &len) == GD_DEDUP_NONE
       && gd_dedup_get(d, (const uint8_t *)"k1", 2, 163, &r, &len) == GD_DEDUP_REPLY,
       "a client keeps its last %d", GD_DEDUP_PER_CLIENT);
    gd_dedup_forget(d, (const uint8_t *)"k1", 2);
    ok(gd_dedup_size(d) == 0, "a client forgotten is gone");
    gd_dedup_destroy(&d);
}

/*  The tap sees each record appended (collects their bytes). */
typedef struct {
    uint8_t buf[4096];
    size_t len;
    int calls;
} tap_t;

static void s_tap_cb(void *arg, const uint8_t *data, size_t len)
{
    tap_t *t = arg;
    if (t->len + len <= sizeof t->buf)
        memcpy(t->buf + t->len, data, len);
    t->len += len;
    t->calls++;
}

/*  A standby's copy: what the tap saw, written raw to another file, replays the same; an
 *  image replaces the file; JR_TERM round-trips. */
static void s_standby_copy(void)
{
    char path[300], copy[300], err[700];
    snprintf(path, sizeof path, "%s/primary.journal", s_dir);
    snprintf(copy, sizeof copy, "%s/standby.journal", s_dir);
    gd_journal_t *j = gd_journal_open(path, 0, err, sizeof err);
    gd_journal_t *c = gd_journal_open(copy, 0, err, sizeof err);
    tap_t t = { .len = 0 };
    gd_journal_set_tap(j, s_tap_cb, &t);
    gd_journal_append(j, GD_JR_GONE, &(gd_jfield_t){ .i = 5 }, 1);
    gd_journal_append(j, GD_JR_TERM, &(gd_jfield_t){ .i = 3 }, 1);
    ok(t.calls == 2 && t.len == gd_journal_size(j), "the tap sees every record appended");
    ok(gd_journal_write_raw(c, (const uint8_t *)"junk", 4, false) == 0
       && gd_journal_write_raw(c, t.buf, t.len, true) == 0 && gd_journal_size(c) == t.len,
       "an image replaces what the copy held");
    gd_journal_write_raw(c, t.buf, t.len, false);
    seen_t seen = { 0 };
    ok(gd_journal_replay(c, s_count, &seen, err, sizeof err) == 4 && seen.sum == 10
       && seen.types[GD_JR_TERM] == 2, "the copy replays: records appended raw after it");
    size_t len = 0;
    uint8_t *all = gd_journal_read_all(j, &len);
    ok(all && len == t.len && !memcmp(all, t.buf, len), "the whole file read back (an image)");
    free(all);
    gd_journal_set_tap(j, NULL, NULL);
    gd_journal_append(j, GD_JR_GONE, &(gd_jfield_t){ .i = 1 }, 1);
    ok(t.calls == 2, "no tap: nothing seen");
    gd_journal_destroy(&j, true);
    gd_journal_destroy(&c, true);
}

/*  Runs the groups. */
int main(void)
{
    plan(NO_PLAN);
    snprintf(s_dir, sizeof s_dir, "/tmp/gd_journal.XXXXXX");
    if (!mkdtemp(s_dir))
        return 1;
    s_codec();
    s_file();
    s_compact();
    s_dedup();
    s_standby_copy();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", s_dir);
    if (system(cmd) != 0)
        diag("could not remove %s", s_dir);
    done_testing();
}
