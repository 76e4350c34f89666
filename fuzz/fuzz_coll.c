/*  fuzz/fuzz_coll.c — libFuzzer target for a client's COLL payload (impi_coll_decode) and
 *  the table-driven check of a contribution (impi_coll_validate) under EVERY label of the
 *  table, plus one unknown label and label 0.  Input: the payload (Int4 label, elements);
 *  its first byte also picks the host/proc count handed to the validator.  Invariants: the
 *  decoded data lies inside the input; whatever the validator accepts really has the
 *  label's shape (element size divides the length, one element for client scope, the
 *  given count for host/proc scope, ascending versions from 0.0) and every integer element
 *  lies in the label's range; every accepted element formats into a bounded buffer.
 */
#include "fuzz_check.h"
#include "impi/impi_wire.h"

#include <string.h>

/*  Checks what impi_coll_validate promised for an accepted contribution. */
static void s_check_accepted(const impi_label_info_t *info, const uint8_t *data, size_t len,
                             long count)
{
    CHECK(info->elem_size > 0 && len % info->elem_size == 0);
    size_t n = len / info->elem_size;
    if (info->type == IMPI_ELEM_VERSION) {
        CHECK(n >= 1 && gimpi_be_get64(data) == 0);
        for (size_t i = 1; i < n; i++)
            CHECK(gimpi_be_get64(data + 8 * i) > gimpi_be_get64(data + 8 * (i - 1)));
    } else if (info->scope == IMPI_SCOPE_CLIENT) {
        CHECK(n == 1);
    } else if (count >= 0) {
        CHECK(n == (size_t)count);
    }
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        if (info->type != IMPI_ELEM_VERSION && info->type != IMPI_ELEM_ADDR16) {
            int64_t v = impi_elem_int(info, data, i);
            CHECK(v >= info->min && v <= info->max);
        }
        /* a deliberately tight buffer some of the time: output must stay inside it */
        size_t size = 1 + (i * 7 + len) % sizeof buf;
        const char *s = impi_elem_format(info, data + i * info->elem_size, buf, size);
        CHECK(s == buf && strlen(s) < size);
    }
}

/*  Validates the payload's data under one label with a few counts. */
static void s_validate(const impi_label_info_t *info, int32_t label, const uint8_t *data,
                       size_t len, long count)
{
    const long counts[] = { -1, count, info ? (long)(len / info->elem_size) : 0 };
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int rc = impi_coll_validate(label, data, len, counts[k]);
        if (!info) {
            CHECK(rc == (label == IMPI_NO_LABEL ? IMPI_ERR_LABEL : IMPI_OK));
            continue;
        }
        if (rc == IMPI_OK)
            s_check_accepted(info, data, len, counts[k]);
        else
            CHECK(rc == IMPI_ERR_LENGTH || rc == IMPI_ERR_VALUE || rc == IMPI_ERR_VERSION);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    impi_coll_t coll;
    int rc = impi_coll_decode(data, size, &coll);
    if (rc != IMPI_OK) {
        CHECK(size < 4 || gimpi_be_get32(data) == 0);
        if (size < 4)
            return 0;
    } else {
        CHECK(coll.label != IMPI_NO_LABEL && coll.label == (int32_t)gimpi_be_get32(data));
    }
    const uint8_t *elems = data + 4;
    size_t len = size - 4;
    CHECK(rc != IMPI_OK || (coll.data == elems && coll.len == len));
    long count = (long)(data[0] % 8);

    /* the label the input names, then every row of the table, then two that are not */
    s_validate(impi_label_info((int32_t)gimpi_be_get32(data)), (int32_t)gimpi_be_get32(data),
               elems, len, count);
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        const impi_label_info_t *info = impi_label_at(i);
        CHECK(info != NULL && impi_label_info(info->value) == info);
        s_validate(info, info->value, elems, len, count);
    }
    CHECK(impi_label_at(IMPI_LABEL_COUNT) == NULL && impi_label_at(-1) == NULL);
    s_validate(NULL, 0x7777, elems, len, count);
    s_validate(NULL, IMPI_NO_LABEL, elems, len, count);
    return 0;
}
