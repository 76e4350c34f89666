/*  pvm_buf.h — one PVM message buffer: typed packing and unpacking in PVM's three
 *  encodings, independent of how the bytes travel.
 *
 *  PvmDataDefault packs a portable form: every element big-endian with a fixed size
 *  (byte 1, short 2, int 4, float 4, double 8, long 8 — all 64 bits of a long, sign
 *  kept, unlike PVM's XDR which truncates to 32), complex as two floats/doubles,
 *  strings as Uint4 length (with the NUL) then the bytes.  PvmDataRaw packs native bytes.
 *  PvmDataInPlace records where contiguous user data lives and copies it only when the
 *  message is sent (pvm_buf_bytes), so later changes to that data before the send are
 *  sent, as PVM does; the receiver sees it as raw.  Unpacking past the end is
 *  GIMPI_ENODATA and leaves the buffer as it was.
 */
#ifndef GIMPI_PVM_BUF_H
#define GIMPI_PVM_BUF_H

#include <stddef.h>
#include <stdint.h>

enum { PVM_BUF_DEFAULT = 0, PVM_BUF_RAW = 1, PVM_BUF_INPLACE = 2 };

/*  Room a packing buffer keeps in front of its bytes for a transport header
 *  (pvm_buf_frame), so that header and body leave as one message without a copy. */
#define PVM_BUF_HEADROOM 16

typedef struct pvm_buf_t pvm_buf_t;

/*  An empty buffer for packing in `encoding` (NULL for an unknown encoding). */
pvm_buf_t *pvm_buf_new(int encoding);
/*  A buffer holding received bytes (copied) for unpacking; encoding as sent. */
pvm_buf_t *pvm_buf_from_bytes(int encoding, const void *bytes, size_t len);
/*  A buffer that takes ownership of malloc'd bytes. */
pvm_buf_t *pvm_buf_adopt(int encoding, void *bytes, size_t len);
/*  The same for a malloc'd block whose len message bytes start at off (a received
 *  message with its transport header still in front: no copy to strip it). */
pvm_buf_t *pvm_buf_adopt_at(int encoding, void *block, size_t off, size_t len);
/*  Takes a pending body off its transport: into dst (len bytes), or discarded when dst is
 *  NULL; the token is forgotten either way.  0 or < 0. */
typedef int (*pvm_body_take_fn)(void *impl, void *token, void *dst);
/*  A received buffer whose len bytes are still on the transport (token, taken with take):
 *  the first unpack that asks for all of them at once, in a form that needs no conversion
 *  (raw data, or bytes), receives them straight into the caller's memory and the buffer
 *  keeps no copy (asking it for its bytes later, to send it on, gives NULL / ENODATA);
 *  anything else takes them into the buffer first.  Destroying it discards them. */
pvm_buf_t *pvm_buf_pending(int encoding, size_t len, pvm_body_take_fn take, void *impl,
                           void *token);
/*  Forgets a pending body without touching its transport (which is going away); the
 *  buffer then has no bytes to give (unpack: GIMPI_ENODATA). */
void pvm_buf_orphan(pvm_buf_t *self);
/*  Frees the buffer and nulls the pointer. */
void pvm_buf_destroy(pvm_buf_t **self_p);
/*  The same, but hands the buffer's memory to the caller instead of freeing it (for the
 *  next buffer to pack into): *mem (malloc'd) and its size, or NULL and 0 when it has
 *  none of its own. */
void pvm_buf_destroy_keep(pvm_buf_t **self_p, void **mem, size_t *size);
/*  An empty buffer for packing in `encoding` that packs into mem (malloc'd, size bytes,
 *  taken over; mem NULL: as pvm_buf_new).  NULL for an unknown encoding or ENOMEM, and
 *  then mem is still the caller's. */
pvm_buf_t *pvm_buf_new_in(int encoding, void *mem, size_t size);

/*  The encoding the bytes are in (InPlace buffers report PVM_BUF_RAW once sent). */
int pvm_buf_encoding(const pvm_buf_t *self);

/*  Appends n elements of `datatype` (PVM_BYTE .. PVM_ULONG) taken every `stride`
 *  elements from data.  Returns 0, or GIMPI_EBADPARAM (unknown type, n < 0, stride < 1,
 *  NULL data with n > 0) or GIMPI_ENOMEM. */
int pvm_buf_pack(pvm_buf_t *self, int datatype, const void *data, int n, int stride);
/*  Appends a NUL-terminated string. */
int pvm_buf_pack_str(pvm_buf_t *self, const char *s);

/*  Takes the next n elements into data every `stride` elements.  Returns 0, or
 *  GIMPI_ENODATA when the buffer holds fewer, GIMPI_EBADPARAM for bad arguments. */
int pvm_buf_unpack(pvm_buf_t *self, int datatype, void *data, int n, int stride);
/*  Takes the next string into s (which must be large enough, as in PVM); max bounds the
 *  copy when > 0.  GIMPI_ENODATA past the end, GIMPI_EBADMSG when it is not a string. */
int pvm_buf_unpack_str(pvm_buf_t *self, char *s, size_t max);

/*  The bytes to send (InPlace data is gathered now) and their number; NULL on ENOMEM. */
const uint8_t *pvm_buf_bytes(pvm_buf_t *self, size_t *len);
/*  The same for a send that copies the bytes before returning: a buffer made of one
 *  InPlace segment gives the caller's memory itself (no gathering copy). */
const uint8_t *pvm_buf_send_bytes(pvm_buf_t *self, size_t *len);
/*  The bytes to send, PVM_BUF_HEADROOM writable bytes in front of them: returns the start
 *  of that headroom (the bytes follow it), *len = the bytes' number; NULL on ENOMEM.  A
 *  buffer without headroom (a received one) is moved into a block that has it. */
uint8_t *pvm_buf_frame(pvm_buf_t *self, size_t *len);
/*  Bytes one element of datatype takes in this buffer's encoding (0 if unknown). */
size_t pvm_buf_elem_size(const pvm_buf_t *self, int datatype);
/*  Bytes not yet unpacked. */
size_t pvm_buf_left(const pvm_buf_t *self);
/*  Bytes packed so far (InPlace segments included). */
size_t pvm_buf_len(const pvm_buf_t *self);
/*  Restarts unpacking from the beginning. */
void pvm_buf_rewind(pvm_buf_t *self);

#endif
