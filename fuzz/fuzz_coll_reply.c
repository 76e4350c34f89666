/*  fuzz/fuzz_coll_reply.c — libFuzzer target for a server's COLL reply
 *  (impi_coll_reply_decode) and its split into per-client slices (impi_coll_reply_split).
 *  Input: byte 0 picks the number of clients (0..33, so out-of-range values are tried too),
 *  byte 1 says whether the per-client counts are passed or NULL, the next nclients bytes are
 *  the counts (0xff is -1, otherwise byte % 8), and the rest is the reply payload (Int4
 *  label, Uint4 client mask, concatenated data).  Invariants: an accepted split only names
 *  clients of the mask, below nclients; its slices lie inside the reply, in client order,
 *  without gaps or overlap, and add up to the whole data; each slice's length is its count
 *  times the element size, and host/proc slices have exactly the count asked for.
 */
#include "fuzz_check.h"
#include "impi/impi_wire.h"

#include <string.h>

/*  Checks every promise of an accepted split. */
static void s_check_split(const impi_coll_reply_t *r, int nclients, const long *counts,
                          const impi_slice_t *slices)
{
    const impi_label_info_t *info = impi_label_info(r->label);
    CHECK(info != NULL && nclients >= 1 && nclients <= IMPI_MAX_CLIENTS);
    size_t off = 0;
    for (int c = 0; c < nclients; c++) {
        const impi_slice_t *s = &slices[c];
        if (!(r->mask & (1u << c))) {
            CHECK(s->data == NULL && s->len == 0 && s->count == 0);
            continue;
        }
        CHECK(s->data == r->data + off);
        CHECK(s->len <= r->len - off);
        CHECK(s->len == s->count * info->elem_size);
        if (info->type == IMPI_ELEM_VERSION)
            CHECK(s->count >= 1 && gimpi_be_get64(s->data) == 0);
        else if (info->scope == IMPI_SCOPE_CLIENT)
            CHECK(s->count == 1);
        else
            CHECK(counts != NULL && (long)s->count == counts[c]);
        off += s->len;
    }
    CHECK(off == r->len);
    if (nclients < 32)
        CHECK((r->mask >> nclients) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int nclients = data[0] % (IMPI_MAX_CLIENTS + 2);
    bool with_counts = data[1] & 1;
    data += 2;
    size -= 2;
    long counts[IMPI_MAX_CLIENTS + 1];
    for (int c = 0; c < nclients; c++)
        counts[c] = (size_t)c < size ? (data[c] == 0xff ? -1 : data[c] % 8) : 1;
    size_t skip = (size_t)nclients < size ? (size_t)nclients : size;
    data += skip;
    size -= skip;

    impi_coll_reply_t r;
    int rc = impi_coll_reply_decode(data, size, &r);
    if (rc != IMPI_OK) {
        CHECK(rc == IMPI_ERR_LENGTH || rc == IMPI_ERR_LABEL);
        CHECK(size < 8 || gimpi_be_get32(data) == 0);
        return 0;
    }
    CHECK(r.data == data + 8 && r.len == size - 8 && r.label != IMPI_NO_LABEL);
    CHECK(r.mask == gimpi_be_get32(data + 4));

    /* the header a server would write for this reply says the same */
    uint8_t hdr[16];
    impi_coll_reply_header(hdr, r.label, r.mask, (uint32_t)r.len);
    impi_cmd_t cmd;
    CHECK(impi_cmd_decode(hdr, IMPI_MAX_REPLY_PAYLOAD, &cmd) == IMPI_OK);
    CHECK(cmd.cmd == IMPI_CMD_COLL && cmd.len == 8 + (uint32_t)r.len);
    CHECK(memcmp(hdr + 8, data, 8) == 0);

    impi_slice_t slices[IMPI_MAX_CLIENTS + 1];
    const long *cp = with_counts ? counts : NULL;
    rc = impi_coll_reply_split(&r, nclients, cp, slices);
    if (rc == IMPI_OK) {
        s_check_split(&r, nclients, cp, slices);
        /* a split the codec accepts, the validator sees slice by slice */
        for (int c = 0; c < nclients; c++)
            if (slices[c].data)
                (void)impi_coll_validate(r.label, slices[c].data, slices[c].len,
                                         (long)slices[c].count);
    } else {
        CHECK(rc == IMPI_ERR_LABEL || rc == IMPI_ERR_MASK);
    }
    return 0;
}
