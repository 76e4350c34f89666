/*  pvm_buf.c — packing and unpacking of one PVM message buffer (see pvm_buf.h).
 *
 *  The packed bytes live in one growing array.  An InPlace pack reserves room in that
 *  array and remembers the user's pointer; pvm_buf_bytes() copies the user data into the
 *  reserved room just before the send.  Default-encoding conversion runs one loop per
 *  datatype (the type switch outside the loop, so the byte swaps vectorize): bytes are a
 *  plain copy, 2/4/8-byte elements are byte-swapped on little-endian hosts (copied on
 *  big-endian ones); a long narrower than 8 bytes goes element by element (sign extension).
 */
#include "pvm/pvm_buf.h"
#include "gimpi.h"
#include "gimpi_ops.h"
#include "impi/impi_wire.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t off;                 /* where in data */
    const void *ptr;            /* user memory */
    size_t len;
} inplace_t;

struct pvm_buf_t {
    int encoding;
    uint8_t *mem;               /* the allocation: `off` bytes of headroom, then data */
    size_t off;
    uint8_t *data;              /* mem + off (NULL until something is packed) */
    size_t len, cap;
    size_t rpos;                /* unpack position */
    inplace_t *segs;
    size_t nsegs, segcap;
    pvm_body_take_fn take;      /* pending body: still on the transport (token != NULL) */
    void *timpl, *token;
    int gone;                   /* the bytes went to the caller's memory, or were lost */
};

/*  Wire size of one element in the default encoding, 0 for unknown types. */
static size_t s_wire_size(int datatype)
{
    switch (datatype) {
    case GIMPI_BYTE: return 1;
    case GIMPI_SHORT: case GIMPI_USHORT: return 2;
    case GIMPI_INT: case GIMPI_UINT: case GIMPI_FLOAT: return 4;
    case GIMPI_CPLX: case GIMPI_DOUBLE: case GIMPI_LONG: case GIMPI_ULONG: return 8;
    case GIMPI_DCPLX: return 16;
    default: return 0;
    }
}

/*  Element size in the buffer's encoding. */
static size_t s_elem_size(const pvm_buf_t *self, int datatype)
{
    if (datatype <= GIMPI_STR || datatype >= GIMPI_NDATATYPES)
        return 0;
    return self->encoding == PVM_BUF_DEFAULT ? s_wire_size(datatype)
                                             : gimpi_datatype_size(datatype);
}

/*  An empty buffer. */
pvm_buf_t *pvm_buf_new(int encoding)
{
    if (encoding != PVM_BUF_DEFAULT && encoding != PVM_BUF_RAW && encoding != PVM_BUF_INPLACE)
        return NULL;
    pvm_buf_t *self = calloc(1, sizeof *self);
    if (self) {
        self->encoding = encoding;
        self->off = PVM_BUF_HEADROOM;
    }
    return self;
}

/*  An empty buffer packing into memory it is given. */
pvm_buf_t *pvm_buf_new_in(int encoding, void *mem, size_t size)
{
    pvm_buf_t *self = pvm_buf_new(encoding);
    if (self && mem) {
        if (size > self->off) {
            self->mem = mem;
            self->data = self->mem + self->off;
            self->cap = size - self->off;
        } else
            free(mem);
    }
    return self;
}

/*  Takes ownership of received bytes. */
pvm_buf_t *pvm_buf_adopt(int encoding, void *bytes, size_t len)
{
    return pvm_buf_adopt_at(encoding, bytes, 0, len);
}

/*  Takes ownership of a malloc'd block whose message bytes start at off. */
pvm_buf_t *pvm_buf_adopt_at(int encoding, void *block, size_t off, size_t len)
{
    pvm_buf_t *self = pvm_buf_new(encoding == PVM_BUF_INPLACE ? PVM_BUF_RAW : encoding);
    if (!self)
        return NULL;
    self->mem = block;
    self->off = off;
    self->data = (uint8_t *)block + off;
    self->len = self->cap = len;
    return self;
}

/*  A buffer whose bytes are still on the transport. */
pvm_buf_t *pvm_buf_pending(int encoding, size_t len, pvm_body_take_fn take, void *impl,
                           void *token)
{
    assert(take && token);
    pvm_buf_t *self = pvm_buf_new(encoding == PVM_BUF_INPLACE ? PVM_BUF_RAW : encoding);
    if (!self)
        return NULL;
    self->off = 0;
    self->len = len;
    self->take = take;
    self->timpl = impl;
    self->token = token;
    return self;
}

/*  Forgets a pending body. */
void pvm_buf_orphan(pvm_buf_t *self)
{
    assert(self);
    if (self->token) {
        self->token = NULL;
        self->gone = 1;
    }
}

/*  Makes the bytes present (takes a pending body into the buffer): 0, or GIMPI_ENODATA
 *  when they are gone, or the transport's error. */
static int s_ready(pvm_buf_t *self)
{
    if (self->token) {
        uint8_t *mem = malloc(self->len ? self->len : 1);
        if (!mem)
            return GIMPI_ENOMEM;
        void *token = self->token;
        self->token = NULL;
        int rc = self->take(self->timpl, token, mem);
        if (rc < 0) {
            free(mem);
            self->gone = 1;
            return rc;
        }
        self->mem = self->data = mem;
        self->off = 0;
        self->cap = self->len;
    }
    return self->gone ? GIMPI_ENODATA : 0;
}

/*  Copies received bytes. */
pvm_buf_t *pvm_buf_from_bytes(int encoding, const void *bytes, size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (!copy)
        return NULL;
    if (len)
        memcpy(copy, bytes, len);
    pvm_buf_t *self = pvm_buf_adopt(encoding, copy, len);
    if (!self)
        free(copy);
    return self;
}

/*  Frees everything. */
void pvm_buf_destroy(pvm_buf_t **self_p)
{
    assert(self_p);
    pvm_buf_t *self = *self_p;
    if (!self)
        return;
    if (self->token)
        self->take(self->timpl, self->token, NULL);     /* discard what never came in */
    free(self->mem);
    free(self->segs);
    free(self);
    *self_p = NULL;
}

/*  Frees everything but the memory, which goes to the caller. */
void pvm_buf_destroy_keep(pvm_buf_t **self_p, void **mem, size_t *size)
{
    assert(self_p && mem && size);
    pvm_buf_t *self = *self_p;
    *mem = NULL;
    *size = 0;
    if (self && self->mem && !self->token) {
        *mem = self->mem;
        *size = self->off + self->cap;
        self->mem = NULL;
    }
    pvm_buf_destroy(self_p);
}

/*  The encoding. */
int pvm_buf_encoding(const pvm_buf_t *self)
{
    assert(self);
    return self->encoding;
}

/*  Makes room for `more` bytes; returns where they go, or NULL. */
static uint8_t *s_grow(pvm_buf_t *self, size_t more)
{
    if (more > SIZE_MAX / 2 - self->len)
        return NULL;
    if (self->len + more > self->cap) {
        size_t cap = self->cap ? self->cap : 256;
        while (cap < self->len + more)
            cap *= 2;
        if (cap > SIZE_MAX - self->off)
            return NULL;
        uint8_t *mem = realloc(self->mem, self->off + cap);
        if (!mem)
            return NULL;
        self->mem = mem;
        self->data = mem + self->off;
        self->cap = cap;
    }
    uint8_t *p = self->data + self->len;
    self->len += more;
    return p;
}

/*  Writes one element big-endian in its wire size. */
static void s_encode(int datatype, const uint8_t *src, uint8_t *dst)
{
    switch (datatype) {
    case GIMPI_BYTE: dst[0] = src[0]; break;
    case GIMPI_SHORT: case GIMPI_USHORT: {
        unsigned short v; memcpy(&v, src, sizeof v);
        dst[0] = (uint8_t)(v >> 8); dst[1] = (uint8_t)v; break;
    }
    case GIMPI_INT: case GIMPI_UINT: case GIMPI_FLOAT: {
        uint32_t v; memcpy(&v, src, 4); gimpi_be_put32(dst, v); break;
    }
    case GIMPI_LONG: case GIMPI_ULONG: {
        unsigned long v; memcpy(&v, src, sizeof v); gimpi_be_put64(dst, (uint64_t)v); break;
    }
    case GIMPI_DOUBLE: {
        uint64_t v; memcpy(&v, src, 8); gimpi_be_put64(dst, v); break;
    }
    case GIMPI_CPLX:
        s_encode(GIMPI_FLOAT, src, dst);
        s_encode(GIMPI_FLOAT, src + 4, dst + 4);
        break;
    case GIMPI_DCPLX:
        s_encode(GIMPI_DOUBLE, src, dst);
        s_encode(GIMPI_DOUBLE, src + 8, dst + 8);
        break;
    }
}

/*  Reads one element from its big-endian wire form. */
static void s_decode(int datatype, const uint8_t *src, uint8_t *dst)
{
    switch (datatype) {
    case GIMPI_BYTE: dst[0] = src[0]; break;
    case GIMPI_SHORT: case GIMPI_USHORT: {
        unsigned short v = (unsigned short)(src[0] << 8 | src[1]);
        memcpy(dst, &v, sizeof v); break;
    }
    case GIMPI_INT: case GIMPI_UINT: case GIMPI_FLOAT: {
        uint32_t v = gimpi_be_get32(src); memcpy(dst, &v, 4); break;
    }
    case GIMPI_LONG: case GIMPI_ULONG: {
        unsigned long v = (unsigned long)gimpi_be_get64(src); memcpy(dst, &v, sizeof v); break;
    }
    case GIMPI_DOUBLE: {
        uint64_t v = gimpi_be_get64(src); memcpy(dst, &v, 8); break;
    }
    case GIMPI_CPLX:
        s_decode(GIMPI_FLOAT, src, dst);
        s_decode(GIMPI_FLOAT, src + 4, dst + 4);
        break;
    case GIMPI_DCPLX:
        s_decode(GIMPI_DOUBLE, src, dst);
        s_decode(GIMPI_DOUBLE, src + 8, dst + 8);
        break;
    }
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define S_BE16(v) (v)
#define S_BE32(v) (v)
#define S_BE64(v) (v)
#else
#define S_BE16(v) __builtin_bswap16(v)
#define S_BE32(v) __builtin_bswap32(v)
#define S_BE64(v) __builtin_bswap64(v)
#endif

/*  n units of 2, 4 or 8 bytes from src (every sstep bytes) to dst (every dstep bytes),
 *  each swapped between host and big-endian order (the same operation both ways). */
static void s_swap_units(size_t unit, const uint8_t *src, size_t sstep, uint8_t *dst,
                         size_t dstep, size_t n)
{
    if (unit == 2)
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, src + i * sstep, 2);
            v = S_BE16(v);
            memcpy(dst + i * dstep, &v, 2);
        }
    else if (unit == 4)
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, src + i * sstep, 4);
            v = S_BE32(v);
            memcpy(dst + i * dstep, &v, 4);
        }
    else
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, src + i * sstep, 8);
            v = S_BE64(v);
            memcpy(dst + i * dstep, &v, 8);
        }
}

/*  Converts n elements between host form (every ustep bytes) and the default encoding's
 *  wire form (packed); encode 1: host to wire.  Returns 0 when done, -1 when the datatype
 *  needs the element-by-element path (a long narrower than 8 bytes). */
static int s_convert_n(int datatype, const uint8_t *host, size_t ustep, uint8_t *wire, int n,
                       int encode)
{
    size_t un = (size_t)n, unit;
    switch (datatype) {
    case GIMPI_BYTE:
        if (ustep == 1)
            memcpy(encode ? wire : (uint8_t *)host, encode ? host : wire, un);
        else
            for (size_t i = 0; i < un; i++)
                if (encode)
                    wire[i] = host[i * ustep];
                else
                    ((uint8_t *)host)[i * ustep] = wire[i];
        return 0;
    case GIMPI_SHORT: case GIMPI_USHORT:
        if (sizeof(short) != 2)
            return -1;
        unit = 2;
        break;
    case GIMPI_INT: case GIMPI_UINT: case GIMPI_FLOAT: unit = 4; break;
    case GIMPI_DOUBLE: unit = 8; break;
    case GIMPI_LONG: case GIMPI_ULONG:
        if (sizeof(long) != 8)
            return -1;
        unit = 8;
        break;
    case GIMPI_CPLX: case GIMPI_DCPLX: {      /* two reals per element */
        unit = datatype == GIMPI_CPLX ? 4 : 8;
        if (ustep == 2 * unit) {
            un *= 2;
            ustep = unit;
            break;
        }
        for (size_t i = 0; i < un; i++)
            if (encode)
                s_swap_units(unit, host + i * ustep, unit, wire + i * 2 * unit, unit, 2);
            else
                s_swap_units(unit, wire + i * 2 * unit, unit, (uint8_t *)host + i * ustep, unit, 2);
        return 0;
    }
    default:
        return -1;
    }
    if (encode)
        s_swap_units(unit, host, ustep, wire, unit, un);
    else
        s_swap_units(unit, wire, unit, (uint8_t *)host, ustep, un);
    return 0;
}

/*  Typed pack. */
int pvm_buf_pack(pvm_buf_t *self, int datatype, const void *data, int n, int stride)
{
    assert(self);
    size_t esize = s_elem_size(self, datatype);
    size_t usize = gimpi_datatype_size(datatype);
    if (!esize || n < 0 || stride < 1 || (!data && n > 0))
        return GIMPI_EBADPARAM;
    if (n == 0)
        return 0;
    if ((size_t)n > SIZE_MAX / esize / 2)
        return GIMPI_ENOMEM;
    int rc = s_ready(self);
    if (rc < 0)
        return rc;
    const uint8_t *src = data;
    if (self->encoding == PVM_BUF_INPLACE && stride == 1) {
        if (self->nsegs == self->segcap) {
            size_t cap = self->segcap ? 2 * self->segcap : 8;
            inplace_t *segs = realloc(self->segs, cap * sizeof *segs);
            if (!segs)
                return GIMPI_ENOMEM;
            self->segs = segs;
            self->segcap = cap;
        }
        size_t off = self->len;
        if (!s_grow(self, (size_t)n * esize))
            return GIMPI_ENOMEM;
        self->segs[self->nsegs++] = (inplace_t){ off, data, (size_t)n * esize };
        return 0;
    }
    uint8_t *dst = s_grow(self, (size_t)n * esize);
    if (!dst)
        return GIMPI_ENOMEM;
    if (self->encoding != PVM_BUF_DEFAULT && stride == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return 0;
    }
    if (self->encoding == PVM_BUF_DEFAULT
        && s_convert_n(datatype, src, usize * (size_t)stride, dst, n, 1) == 0)
        return 0;
    for (int i = 0; i < n; i++, dst += esize, src += usize * (size_t)stride) {
        if (self->encoding == PVM_BUF_DEFAULT)
            s_encode(datatype, src, dst);
        else
            memcpy(dst, src, esize);
    }
    return 0;
}

/*  Typed unpack. */
int pvm_buf_unpack(pvm_buf_t *self, int datatype, void *data, int n, int stride)
{
    assert(self);
    size_t esize = s_elem_size(self, datatype);
    size_t usize = gimpi_datatype_size(datatype);
    if (!esize || n < 0 || stride < 1 || (!data && n > 0))
        return GIMPI_EBADPARAM;
    if ((size_t)n > (self->len - self->rpos) / esize)
        return GIMPI_ENODATA;
    if (n == 0)
        return 0;               /* an empty message may have no bytes at all */
    if (self->token && self->rpos == 0 && stride == 1 && (size_t)n * esize == self->len
        && (self->encoding != PVM_BUF_DEFAULT || datatype == GIMPI_BYTE)) {
        void *token = self->token;          /* all of it, as it is: straight to the caller */
        self->token = NULL;
        self->gone = 1;
        int rc = self->take(self->timpl, token, data);
        if (rc < 0)
            return rc;
        self->rpos = self->len;
        return 0;
    }
    int rc = s_ready(self);
    if (rc < 0)
        return rc;
    const uint8_t *src = self->data + self->rpos;
    uint8_t *dst = data;
    if (self->encoding != PVM_BUF_DEFAULT && stride == 1)
        memcpy(dst, src, (size_t)n * esize);
    else if (self->encoding == PVM_BUF_DEFAULT
             && s_convert_n(datatype, dst, usize * (size_t)stride, (uint8_t *)src, n, 0) == 0)
        ;
    else
        for (int i = 0; i < n; i++, src += esize, dst += usize * (size_t)stride) {
            if (self->encoding == PVM_BUF_DEFAULT)
                s_decode(datatype, src, dst);
            else
                memcpy(dst, src, esize);
        }
    self->rpos += (size_t)n * esize;
    return 0;
}

/*  A string: Uint4 length including the NUL (big-endian in every encoding), bytes. */
int pvm_buf_pack_str(pvm_buf_t *self, const char *s)
{
    assert(self);
    if (!s)
        return GIMPI_EBADPARAM;
    size_t n = strlen(s) + 1;
    if (n > UINT32_MAX)
        return GIMPI_EBADPARAM;
    int rc = s_ready(self);
    if (rc < 0)
        return rc;
    uint8_t *dst = s_grow(self, 4 + n);
    if (!dst)
        return GIMPI_ENOMEM;
    gimpi_be_put32(dst, (uint32_t)n);
    memcpy(dst + 4, s, n);
    return 0;
}

/*  The next string. */
int pvm_buf_unpack_str(pvm_buf_t *self, char *s, size_t max)
{
    assert(self);
    if (!s)
        return GIMPI_EBADPARAM;
    if (self->len - self->rpos < 4)
        return GIMPI_ENODATA;
    int rc = s_ready(self);
    if (rc < 0)
        return rc;
    uint32_t n = gimpi_be_get32(self->data + self->rpos);
    if (n == 0 || n > self->len - self->rpos - 4)
        return GIMPI_ENODATA;
    const char *src = (const char *)self->data + self->rpos + 4;
    if (src[n - 1] != '\0')
        return GIMPI_EBADMSG;
    size_t copy = max > 0 && n > max ? max : n;
    memcpy(s, src, copy);
    if (copy < n)
        s[copy - 1] = '\0';
    self->rpos += 4 + n;
    return 0;
}

/*  The bytes to send: InPlace segments are copied in now. */
const uint8_t *pvm_buf_bytes(pvm_buf_t *self, size_t *len)
{
    assert(self);
    *len = 0;
    if (s_ready(self) < 0)
        return NULL;
    for (size_t i = 0; i < self->nsegs; i++)
        memcpy(self->data + self->segs[i].off, self->segs[i].ptr, self->segs[i].len);
    *len = self->len;
    static const uint8_t empty[1] = { 0 };
    return self->data ? self->data : empty;
}

/*  The bytes to send (NULL: gone, see pvm_buf_pending, or ENOMEM), without gathering when the buffer is one InPlace segment covering
 *  everything (then the caller's own memory, valid until it changes it). */
const uint8_t *pvm_buf_send_bytes(pvm_buf_t *self, size_t *len)
{
    assert(self);
    if (self->nsegs == 1 && self->segs[0].off == 0 && self->segs[0].len == self->len) {
        *len = self->len;
        return self->segs[0].ptr;
    }
    return pvm_buf_bytes(self, len);
}

/*  The bytes to send preceded by PVM_BUF_HEADROOM bytes the caller may overwrite (for a
 *  transport's header); *len = the bytes after the headroom.  NULL on ENOMEM. */
uint8_t *pvm_buf_frame(pvm_buf_t *self, size_t *len)
{
    assert(self);
    if (!pvm_buf_bytes(self, len))          /* gathers InPlace segments */
        return NULL;
    if (self->off < PVM_BUF_HEADROOM || !self->data) {     /* a received or empty buffer */
        uint8_t *mem = malloc(PVM_BUF_HEADROOM + (self->cap ? self->cap : 1));
        if (!mem)
            return NULL;
        if (self->len)
            memcpy(mem + PVM_BUF_HEADROOM, self->data, self->len);
        free(self->mem);
        self->mem = mem;
        self->off = PVM_BUF_HEADROOM;
        self->data = mem + PVM_BUF_HEADROOM;
        if (!self->cap)
            self->cap = 1;
    }
    *len = self->len;
    return self->data - PVM_BUF_HEADROOM;
}

/*  Element size in this encoding. */
size_t pvm_buf_elem_size(const pvm_buf_t *self, int datatype)
{
    assert(self);
    return s_elem_size(self, datatype);
}

/*  Bytes left to unpack. */
size_t pvm_buf_left(const pvm_buf_t *self)
{
    assert(self);
    return self->len - self->rpos;
}

/*  Bytes packed so far. */
size_t pvm_buf_len(const pvm_buf_t *self)
{
    assert(self);
    return self->len;
}

/*  Unpack from the start again. */
void pvm_buf_rewind(pvm_buf_t *self)
{
    assert(self);
    self->rpos = 0;
}
