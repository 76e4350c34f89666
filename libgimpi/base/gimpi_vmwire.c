/*  gimpi_vmwire.c — encoding, decoding and stream framing of the virtual machine's
 *  protocols (launcher <-> host agent, task -> manager), all driven by the AGENT_FRAMES
 *  table (gimpi_vmwire.h).
 */
#include "base/gimpi_vmwire.h"
#include "base/gimpi_bytes.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  The row of a type. */
typedef struct {
    int code;
    const char *name;
    const char *fields;
} row_t;

#define AGENT_X_ROW(name, code, fields) { code, #name, fields },
static const row_t s_rows[] = { AGENT_FRAMES(AGENT_X_ROW) };
#undef AGENT_X_ROW

/*  The row of type, or NULL. */
static const row_t *s_row(int type)
{
    for (size_t k = 0; k < sizeof s_rows / sizeof *s_rows; k++)
        if (s_rows[k].code == type)
            return &s_rows[k];
    return NULL;
}

const char *vmw_fields(int type)
{
    const row_t *r = s_row(type);
    return r ? r->fields : NULL;
}

const char *vmw_name(int type)
{
    const row_t *r = s_row(type);
    return r ? r->name : "?";
}

/* ------------------------------------------------------------------ encoding */

/*  Appends a length-prefixed string. */
static void s_put_str(gimpi_bytes_t *o, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    gimpi_bytes_put32(o, (uint32_t)n);
    gimpi_bytes_put(o, s, n);
}

uint8_t *vmw_encode(size_t *len, int type, ...)
{
    const row_t *r = s_row(type);
    gimpi_bytes_t *o = r ? gimpi_bytes_new((size_t)AGENT_MAX_FRAME + 4) : NULL;
    if (!o)
        return NULL;
    gimpi_bytes_put32(o, 0);            /* the length, filled in below */
    uint8_t t = (uint8_t)type;
    gimpi_bytes_put(o, &t, 1);
    va_list ap;
    va_start(ap, type);
    for (const char *f = r->fields; *f; f++) {
        if (*f == 'i')
            gimpi_bytes_put32(o, (uint32_t)va_arg(ap, int));
        else if (*f == 's')
            s_put_str(o, va_arg(ap, const char *));
        else if (*f == 'b') {
            const void *p = va_arg(ap, const void *);
            size_t n = va_arg(ap, size_t);
            gimpi_bytes_put32(o, (uint32_t)n);
            gimpi_bytes_put(o, p, n);
        } else {
            char *const *v = va_arg(ap, char *const *);
            uint32_t n = 0;
            while (v && v[n])
                n++;
            gimpi_bytes_put32(o, n);
            for (uint32_t k = 0; k < n; k++)
                s_put_str(o, v[k]);
        }
    }
    va_end(ap);
    size_t n;
    uint8_t *data = gimpi_bytes_take(o, &n);
    gimpi_bytes_destroy(&o);
    if (!data)
        return NULL;
    uint32_t body = (uint32_t)(n - 4);
    data[0] = (uint8_t)(body >> 24);
    data[1] = (uint8_t)(body >> 16);
    data[2] = (uint8_t)(body >> 8);
    data[3] = (uint8_t)body;
    *len = n;
    return data;
}

size_t vmw_frame_len(const uint8_t *frame)
{
    return 4 + ((size_t)frame[0] << 24 | (size_t)frame[1] << 16 | (size_t)frame[2] << 8
                | frame[3]);
}

/* ------------------------------------------------------------------ decoding */

/*  A cursor over a frame's bytes. */
typedef struct {
    const uint8_t *p;
    size_t left;
} in_t;

/*  Reads a Uint4; -1 when the frame is too short. */
static int s_get32(in_t *in, uint32_t *v)
{
    if (in->left < 4)
        return -1;
    *v = (uint32_t)in->p[0] << 24 | (uint32_t)in->p[1] << 16 | (uint32_t)in->p[2] << 8
         | in->p[3];
    in->p += 4;
    in->left -= 4;
    return 0;
}

/*  Reads a length-prefixed byte string as a NUL-terminated copy; text refuses NULs. */
static int s_get_bytes(in_t *in, uint8_t **out, size_t *len, int text)
{
    uint32_t n;
    if (s_get32(in, &n) < 0 || n > in->left)
        return -1;
    if (text && memchr(in->p, 0, n))
        return -1;
    uint8_t *c = malloc((size_t)n + 1);
    if (!c)
        return -1;
    memcpy(c, in->p, n);
    c[n] = 0;
    in->p += n;
    in->left -= n;
    *out = c;
    if (len)
        *len = n;
    return 0;
}

/*  Reads a string vector. */
static int s_get_vec(in_t *in, char ***out)
{
    uint32_t n;
    if (s_get32(in, &n) < 0 || n > AGENT_MAX_VECTOR || (size_t)n * 4 > in->left)
        return -1;
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return -1;
    *out = v;
    for (uint32_t k = 0; k < n; k++)
        if (s_get_bytes(in, (uint8_t **)&v[k], NULL, 1) < 0)
            return -1;
    return 0;
}

void vmw_msg_free(vmw_msg_t *msg)
{
    if (!msg)
        return;
    for (int k = 0; k < AGENT_MAX_FIELDS; k++) {
        free(msg->s[k]);
        free(msg->b[k]);
        for (char **v = msg->v[k]; v && *v; v++)
            free(*v);
        free(msg->v[k]);
    }
    memset(msg, 0, sizeof *msg);
}

int vmw_decode(const uint8_t *buf, size_t len, vmw_msg_t *msg, char *err, size_t errsize)
{
    memset(msg, 0, sizeof *msg);
    in_t in = { buf, len };
    uint32_t body;
    if (s_get32(&in, &body) < 0 || body != in.left || body < 1) {
        snprintf(err, errsize, "frame length does not match its bytes");
        return -1;
    }
    msg->type = *in.p;
    in.p++, in.left--;
    const row_t *r = s_row(msg->type);
    if (!r) {
        snprintf(err, errsize, "unknown frame type 0x%02x", msg->type);
        return -1;
    }
    int k = 0;
    for (const char *f = r->fields; *f; f++, k++) {
        int rc;
        if (*f == 'i') {
            uint32_t v = 0;
            rc = s_get32(&in, &v);
            msg->i[k] = (int32_t)v;
        } else if (*f == 's')
            rc = s_get_bytes(&in, (uint8_t **)&msg->s[k], NULL, 1);
        else if (*f == 'b')
            rc = s_get_bytes(&in, &msg->b[k], &msg->blen[k], 0);
        else
            rc = s_get_vec(&in, &msg->v[k]);
        if (rc < 0) {
            snprintf(err, errsize, "%s frame: field %d ('%c') is malformed", r->name, k + 1, *f);
            vmw_msg_free(msg);
            return -1;
        }
    }
    msg->nfields = k;
    if (in.left) {
        snprintf(err, errsize, "%s frame: %zu bytes too many", r->name, in.left);
        vmw_msg_free(msg);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ stream framing */

struct vmw_reader_t {
    uint8_t *buf;
    size_t len, cap;
};

vmw_reader_t *vmw_reader_new(void)
{
    return calloc(1, sizeof(vmw_reader_t));
}

void vmw_reader_destroy(vmw_reader_t **self_p)
{
    assert(self_p);
    if (*self_p) {
        free((*self_p)->buf);
        free(*self_p);
        *self_p = NULL;
    }
}

int vmw_reader_fill(vmw_reader_t *self, int fd)
{
    assert(self);
    if (self->cap - self->len < 65536) {
        size_t cap = self->cap ? self->cap * 2 : 131072;
        if (cap > (size_t)AGENT_MAX_FRAME + 65536 + 4)
            cap = (size_t)AGENT_MAX_FRAME + 65536 + 4;
        if (cap > self->cap) {
            uint8_t *b = realloc(self->buf, cap);
            if (!b)
                return -1;
            self->buf = b;
            self->cap = cap;
        }
    }
    if (self->cap == self->len)
        return 1;                       /* full: the caller takes frames first */
    ssize_t r;
    do
        r = read(fd, self->buf + self->len, self->cap - self->len);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return errno == EAGAIN ? 1 : -1;
    if (r == 0)
        return 0;
    self->len += (size_t)r;
    return 1;
}

int vmw_reader_next(vmw_reader_t *self, vmw_msg_t *msg, char *err, size_t errsize)
{
    assert(self);
    if (self->len < 4)
        return 0;
    uint32_t body = (uint32_t)self->buf[0] << 24 | (uint32_t)self->buf[1] << 16
                    | (uint32_t)self->buf[2] << 8 | self->buf[3];
    if (body > AGENT_MAX_FRAME || body < 1) {
        snprintf(err, errsize, "frame of %u bytes (at most %d)", body, AGENT_MAX_FRAME);
        return -1;
    }
    if (self->len < (size_t)body + 4)
        return 0;
    int rc = vmw_decode(self->buf, (size_t)body + 4, msg, err, errsize);
    memmove(self->buf, self->buf + body + 4, self->len - body - 4);
    self->len -= (size_t)body + 4;
    return rc < 0 ? -1 : 1;
}

int vmw_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* ------------------------------------------------------------------ architecture */

const char *vmw_arch(void)
{
#if defined(__x86_64__)
    return "LINUX64";
#elif defined(__i386__)
    return "LINUX";
#elif defined(__aarch64__)
    return "LINUXAARCH64";
#elif defined(__powerpc64__)
    return "LINUXPPC64";
#else
    return "LINUXOTHER";
#endif
}

/* ------------------------------------------------------------------ self-test */

int vmw_selftest(void)
{
    char *argv[] = { "prog", "a b", "", NULL };
    char *env[] = { "X=1", NULL };
    size_t len;
    uint8_t *f = vmw_encode(&len, AGENT_START, 7, AGENT_START_STATIC, "10.0.0.1", "/tmp",
                              argv, env, 2, 3);
    vmw_msg_t m;
    char err[128];
    int bad = !f || vmw_decode(f, len, &m, err, sizeof err) < 0 || m.type != AGENT_START
              || m.i[0] != 7 || m.i[1] != 1 || strcmp(m.s[2], "10.0.0.1") || strcmp(m.s[3], "/tmp")
              || strcmp(m.v[4][1], "a b") || m.v[4][2][0] || m.v[4][3] || strcmp(m.v[5][0], "X=1")
              || m.i[6] != 2 || m.i[7] != 3;
    vmw_msg_free(&m);
    /* every truncation is refused */
    for (size_t cut = 0; f && cut < len; cut++) {
        uint8_t *g = malloc(len);
        memcpy(g, f, len);
        uint32_t body = (uint32_t)cut >= 4 ? (uint32_t)cut - 4 : 0;
        if (cut >= 4) {
            g[0] = (uint8_t)(body >> 24), g[1] = (uint8_t)(body >> 16);
            g[2] = (uint8_t)(body >> 8), g[3] = (uint8_t)body;
        }
        if (vmw_decode(g, cut, &m, err, sizeof err) == 0)
            bad = 1;
        vmw_msg_free(&m);
        free(g);
    }
    free(f);
    return bad ? -1 : 0;
}
