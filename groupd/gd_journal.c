/*  gd_journal.c — groupd's journal (see gd_journal.h): the record codec driven by the one
 *  table GD_JOURNAL_RECORDS, packing of frame lists, the file (opened as carefully as the
 *  lock file), replay, appends of one write(2) each, and compaction by rename.
 */
#include "groupd/gd_journal.h"
#include "base/gimpi_be.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ the table */

typedef struct {
    uint8_t code;
    const char *name;
    const char *fields;
} s_rowinfo_t;

#define GD_JR_X_ROW(name, code, fields) { code, #name, fields },
static const s_rowinfo_t s_rows[] = { GD_JOURNAL_RECORDS(GD_JR_X_ROW) };
#undef GD_JR_X_ROW

/*  The row of a record type, or NULL. */
static const s_rowinfo_t *s_row(uint8_t type)
{
    for (size_t k = 0; k < sizeof s_rows / sizeof s_rows[0]; k++)
        if (s_rows[k].code == type)
            return &s_rows[k];
    return NULL;
}

/*  Name of a record type. */
const char *gd_journal_type_name(uint8_t type)
{
    const s_rowinfo_t *r = s_row(type);
    return r ? r->name : NULL;
}

/*  Words for an error. */
const char *gd_journal_strerror(int err)
{
    switch (err) {
    case GD_JR_OK: return "ok";
    case GD_JR_SHORT: return "the record is cut short";
    case GD_JR_CRC: return "checksum mismatch";
    case GD_JR_TYPE: return "unknown record type";
    case GD_JR_LAYOUT: return "fields do not match the record's layout";
    case GD_JR_SIZE: return "record too long";
    default: return "?";
    }
}

/* ------------------------------------------------------------------ codec */

/*  CRC-32 (IEEE, reflected), a nibble at a time from a 16-entry table. */
uint32_t gd_journal_crc32(const uint8_t *p, size_t n)
{
    static const uint32_t t[16] = {
        0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190, 0x6B6B51F4,
        0x4DB26158, 0x5005713C, 0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C,
        0x9B64C2B0, 0x86D3D2D4, 0xA00AE278, 0xBDBDF21C };
    uint32_t c = 0xFFFFFFFFu;
    for (size_t k = 0; k < n; k++) {
        c ^= p[k];
        c = (c >> 4) ^ t[c & 15];
        c = (c >> 4) ^ t[c & 15];
    }
    return ~c;
}

/*  Bytes of the fields per the layout, 0 when they do not match it. */
static size_t s_fields_size(const char *layout, const gd_jfield_t *f, int n)
{
    if ((int)strlen(layout) != n)
        return 0;
    size_t size = 0;
    for (int k = 0; k < n; k++) {
        switch (layout[k]) {
        case 'i': size += 4; break;
        case 'q': size += 8; break;
        default:
            if (f[k].len > GD_JOURNAL_MAX_RECORD)
                return 0;
            size += 4 + f[k].len;
        }
    }
    return size + 1 + 4 <= GD_JOURNAL_MAX_RECORD ? size : 0;
}

/*  Bytes the record needs encoded. */
size_t gd_journal_encoded_size(uint8_t type, const gd_jfield_t *f, int n)
{
    const s_rowinfo_t *r = s_row(type);
    if (!r || n > GD_JOURNAL_MAX_FIELDS)
        return 0;
    size_t size = s_fields_size(r->fields, f, n);
    return size || !*r->fields ? 4 + 1 + size + 4 : 0;
}

/*  Encodes a record. */
size_t gd_journal_encode(uint8_t type, const gd_jfield_t *f, int n, uint8_t *out)
{
    size_t total = gd_journal_encoded_size(type, f, n);
    if (!total)
        return 0;
    const char *layout = s_row(type)->fields;
    gimpi_be_put32(out, (uint32_t)(total - 8));
    uint8_t *p = out + 4;
    *p++ = type;
    for (int k = 0; k < n; k++) {
        switch (layout[k]) {
        case 'i': gimpi_be_put32(p, (uint32_t)f[k].i); p += 4; break;
        case 'q': gimpi_be_put64(p, f[k].q); p += 8; break;
        default:
            gimpi_be_put32(p, (uint32_t)f[k].len);
            if (f[k].len)
                memcpy(p + 4, f[k].data, f[k].len);
            p += 4 + f[k].len;
        }
    }
    gimpi_be_put32(p, gd_journal_crc32(out + 4, total - 8));
    return total;
}

/*  Decodes the record at the start of data. */
int gd_journal_decode(const uint8_t *data, size_t len, gd_jrec_t *rec, size_t *used)
{
    assert(rec && used);
    *used = 0;
    memset(rec, 0, sizeof *rec);
    if (len < 4)
        return GD_JR_SHORT;
    uint32_t body = gimpi_be_get32(data);
    if (body < 1 || body > GD_JOURNAL_MAX_RECORD)
        return body ? GD_JR_SIZE : GD_JR_LAYOUT;
    if (len - 4 < (size_t)body + 4)
        return GD_JR_SHORT;
    const uint8_t *p = data + 4, *end = p + body;
    if (gd_journal_crc32(p, body) != gimpi_be_get32(end))
        return GD_JR_CRC;
    const s_rowinfo_t *r = s_row(*p);
    if (!r)
        return GD_JR_TYPE;
    rec->type = *p++;
    for (const char *c = r->fields; *c; c++) {
        gd_jfield_t *f = &rec->f[rec->nfields++];
        size_t need = *c == 'q' ? 8 : 4;
        if ((size_t)(end - p) < need)
            return GD_JR_LAYOUT;
        if (*c == 'i')
            f->i = (int32_t)gimpi_be_get32(p);
        else if (*c == 'q')
            f->q = gimpi_be_get64(p);
        else {
            f->len = gimpi_be_get32(p);
            if ((size_t)(end - p) - 4 < f->len)
                return GD_JR_LAYOUT;
            f->data = p + 4;
        }
        p += need + (*c == 'b' ? f->len : 0);
    }
    if (p != end)
        return GD_JR_LAYOUT;
    *used = 4 + (size_t)body + 4;
    return GD_JR_OK;
}

/*  Packs frames into one blob. */
size_t gd_journal_pack(const gd_frame_t *frames, int n, uint8_t **out)
{
    size_t size = 4;
    for (int k = 0; k < n; k++)
        size += 4 + frames[k].len;
    *out = malloc(size);
    if (!*out)
        return 0;
    uint8_t *p = *out;
    gimpi_be_put32(p, (uint32_t)n);
    p += 4;
    for (int k = 0; k < n; k++) {
        gimpi_be_put32(p, (uint32_t)frames[k].len);
        if (frames[k].len)
            memcpy(p + 4, frames[k].data, frames[k].len);
        p += 4 + frames[k].len;
    }
    return size;
}

/*  Unpacks a blob into frames. */
int gd_journal_unpack(const uint8_t *data, size_t len, gd_frame_t *frames, int max)
{
    if (len < 4)
        return -1;
    uint32_t n = gimpi_be_get32(data);
    if (n > (uint32_t)max)
        return -1;
    size_t off = 4;
    for (uint32_t k = 0; k < n; k++) {
        if (len - off < 4)
            return -1;
        size_t l = gimpi_be_get32(data + off);
        if (len - off - 4 < l)
            return -1;
        frames[k] = (gd_frame_t){ data + off + 4, l };
        off += 4 + l;
    }
    return off == len ? (int)n : -1;
}

/* ------------------------------------------------------------------ the file */

struct gd_journal_t {
    int fd;
    char *path;
    size_t bytes;               /* in the file */
    size_t max;                 /* compaction bound */
    uint8_t *buf;               /* encoding buffer */
    size_t cap;
    gd_journal_tap_fn tap;      /* told every record appended, or NULL */
    void *tap_arg;
};

/*  Opens path (O_NOFOLLOW, 0600) and checks it is a regular file of ours.  fd or -1. */
static int s_open_file(const char *path, int flags, char *err, size_t errsize)
{
    int fd = open(path, flags | O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_APPEND, 0600);
    if (fd < 0) {
        snprintf(err, errsize, "cannot open journal %s: %s%s", path, strerror(errno),
                 errno == ELOOP ? " (a symbolic link: not followed)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()
        || (st.st_mode & 077)) {
        snprintf(err, errsize, "journal %s is not a private regular file of ours; not using it",
                 path);
        close(fd);
        return -1;
    }
    return fd;
}

/*  Opens the journal. */
gd_journal_t *gd_journal_open(const char *path, size_t max_bytes, char *err, size_t errsize)
{
    assert(path);
    gd_journal_t *self = calloc(1, sizeof *self);
    if (!self || !(self->path = strdup(path))) {
        free(self);
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    self->max = max_bytes ? max_bytes : GD_JOURNAL_DEFAULT_MAX;
    self->fd = s_open_file(path, 0, err, errsize);
    if (self->fd < 0) {
        gd_journal_destroy(&self, false);
        return NULL;
    }
    struct stat st;
    self->bytes = fstat(self->fd, &st) == 0 ? (size_t)st.st_size : 0;
    return self;
}

/*  Closes (and removes). */
void gd_journal_destroy(gd_journal_t **self_p, bool remove)
{
    assert(self_p);
    gd_journal_t *self = *self_p;
    if (!self)
        return;
    if (self->fd >= 0) {
        if (remove)
            unlink(self->path);
        close(self->fd);
    }
    free(self->path);
    free(self->buf);
    free(self);
    *self_p = NULL;
}

/*  Replays bytes. */
long gd_journal_replay_bytes(const uint8_t *data, size_t len, gd_journal_apply_fn fn,
                             void *arg, size_t *good)
{
    size_t off = 0;
    long n = 0;
    *good = 0;
    while (off < len) {
        gd_jrec_t rec;
        size_t used;
        int rc = gd_journal_decode(data + off, len - off, &rec, &used);
        if (rc == GD_JR_SHORT)
            break;                      /* a cut tail: what came before stands */
        if (rc == GD_JR_CRC && off + 8 + gimpi_be_get32(data + off) >= len)
            break;                      /* the last record, torn by a crash */
        if (rc != GD_JR_OK)
            return rc;
        if (fn && fn(arg, &rec) != 0)
            return GD_JR_LAYOUT;
        off += used;
        *good = off;
        n++;
    }
    return n;
}

/*  Replays the file. */
long gd_journal_replay(gd_journal_t *self, gd_journal_apply_fn fn, void *arg, char *err,
                       size_t errsize)
{
    assert(self);
    size_t len = 0;
    uint8_t *data = gd_journal_read_all(self, &len);
    if (!data) {
        snprintf(err, errsize, "cannot read journal %s", self->path);
        return -1;
    }
    size_t good = 0;
    long n = gd_journal_replay_bytes(data, len, fn, arg, &good);
    free(data);
    if (n < 0) {
        snprintf(err, errsize, "journal %s: record at byte %zu: %s", self->path, good,
                 gd_journal_strerror((int)n));
        return -1;
    }
    if (good < len && ftruncate(self->fd, (off_t)good) == 0)
        len = good;                     /* the cut tail goes: appends follow whole records */
    self->bytes = len;
    return n;
}

/*  Writes len bytes (one write(2) unless interrupted).  0 or -1 (errno). */
static int s_write_all(int fd, const uint8_t *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/*  Appends a record. */
int gd_journal_append(gd_journal_t *self, uint8_t type, const gd_jfield_t *f, int n)
{
    assert(self);
    size_t size = gd_journal_encoded_size(type, f, n);
    if (!size) {
        errno = EINVAL;
        return -1;
    }
    if (size > self->cap) {
        size_t cap = size < 4096 ? 4096 : size;
        uint8_t *b = realloc(self->buf, cap);
        if (!b)
            return -1;
        self->buf = b;
        self->cap = cap;
    }
    gd_journal_encode(type, f, n, self->buf);
    if (s_write_all(self->fd, self->buf, size) < 0)
        return -1;
    self->bytes += size;
    if (self->tap)
        self->tap(self->tap_arg, self->buf, size);
    return 0;
}

/*  Sets the tap. */
void gd_journal_set_tap(gd_journal_t *self, gd_journal_tap_fn fn, void *arg)
{
    assert(self);
    self->tap = fn;
    self->tap_arg = arg;
}

/*  Writes bytes as they are (a standby's copy). */
int gd_journal_write_raw(gd_journal_t *self, const uint8_t *data, size_t len, bool image)
{
    assert(self);
    if (image) {
        if (ftruncate(self->fd, 0) < 0)
            return -1;
        self->bytes = 0;
    }
    if (s_write_all(self->fd, data, len) < 0)
        return -1;
    self->bytes += len;
    return 0;
}

/*  Reads the whole file. */
uint8_t *gd_journal_read_all(gd_journal_t *self, size_t *len)
{
    assert(self);
    struct stat st;
    if (fstat(self->fd, &st) < 0)
        return NULL;
    *len = (size_t)st.st_size;
    uint8_t *data = malloc(*len ? *len : 1);
    size_t got = 0;
    while (data && got < *len) {
        ssize_t r = pread(self->fd, data + got, *len - got, (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (data && got < *len) {
        free(data);
        return NULL;
    }
    return data;
}

/*  Past the bound? */
bool gd_journal_full(const gd_journal_t *self)
{
    assert(self);
    return self->bytes > self->max;
}

/*  Bytes in the file. */
size_t gd_journal_size(const gd_journal_t *self)
{
    assert(self);
    return self->bytes;
}

/*  The file's path. */
const char *gd_journal_path(const gd_journal_t *self)
{
    assert(self);
    return self->path;
}

/*  Compaction by rename. */
int gd_journal_rewrite(gd_journal_t *self, gd_journal_dump_fn fn, void *arg, char *err,
                       size_t errsize)
{
    assert(self);
    size_t plen = strlen(self->path) + 5;
    char *tmp = malloc(plen);
    if (!tmp) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    snprintf(tmp, plen, "%s.tmp", self->path);
    unlink(tmp);
    gd_journal_t out = { .path = tmp, .max = self->max };
    out.fd = s_open_file(tmp, O_EXCL, err, errsize);
    int rc = out.fd < 0 ? -1 : fn(arg, &out);
    if (rc == 0 && rename(tmp, self->path) < 0) {
        snprintf(err, errsize, "cannot rename %s: %s", tmp, strerror(errno));
        rc = -1;
    } else if (rc < 0 && out.fd >= 0)
        snprintf(err, errsize, "cannot write %s", tmp);
    if (rc < 0 && out.fd >= 0)
        unlink(tmp);
    if (rc == 0) {
        close(self->fd);
        self->fd = out.fd;
        self->bytes = out.bytes;
    } else if (out.fd >= 0)
        close(out.fd);
    free(out.buf);
    free(tmp);
    return rc;
}
