/*  fuzz_gd_proto.c — libFuzzer target for groupd's request decoder and the rest of the
 *  group-control codec (libgimpi/groups/gd_proto.c): the input is cut into frames (a length
 *  byte pair before each), then decoded as a request, as a reply to every command, as an
 *  event, as a STAT group record, as TASKS task records and as STATUSES records.  Whatever decodes is printed
 *  and re-encoded, and the re-encoded frames must decode to the same values (task records:
 *  to the same bytes).  Built by `make fuzz`, run by
 *  `make fuzz-run`; by hand:
 *      clang -g -fsanitize=fuzzer,address,undefined -Iinclude -Ilibgimpi -I. \
 *          fuzz/fuzz_gd_proto.c libgimpi/groups/gd_proto.c -lzmq -o fuzz_gd_proto
 */
#include "groups/gd_proto.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_IN_FRAMES = 100 };

/*  Checks that a decoded request survives re-encoding. */
static void s_roundtrip(const gd_msg_t *msg)
{
    const gd_command_info_t *info = gd_command_info(msg->kind);
    if (!info)
        return;
    uint8_t hdr[GD_HDR_SIZE], buf[8 * GD_MAX_FRAMES];
    gd_frame_t frames[1 + GD_MAX_FRAMES];
    gd_header_encode(hdr, msg->kind, msg->reqid);
    frames[0] = (gd_frame_t){ hdr, sizeof hdr };
    int n = gd_values_encode(info->request, msg->values, msg->nvalues, buf, frames + 1);
    if (n < 0)
        abort();                        /* what decoded must encode */
    gd_msg_t back;
    if (gd_request_decode(frames, 1 + n, &back) != GD_OK || back.nvalues != msg->nvalues)
        abort();
    for (int k = 0; k < back.nvalues; k++)
        if (back.values[k].i != msg->values[k].i || back.values[k].q != msg->values[k].q
            || back.values[k].len != msg->values[k].len)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gd_frame_t frames[MAX_IN_FRAMES];
    int n = 0;
    size_t off = 0;
    while (off + 2 <= size && n < MAX_IN_FRAMES) {
        size_t len = (size_t)data[off] << 8 | data[off + 1];
        off += 2;
        if (len > size - off)
            len = size - off;
        frames[n].data = data + off;
        frames[n].len = len;
        n++;
        off += len;
    }
    gd_msg_t msg;
    char text[512];
    if (gd_request_decode(frames, n, &msg) == GD_OK) {
        gd_msg_format(&msg, text, sizeof text);
        s_roundtrip(&msg);
    }
    for (int code = 0; code < 256; code++)
        if (gd_command_info((uint8_t)code)
            && gd_reply_decode((uint8_t)code, frames, n, &msg) == GD_OK)
            gd_msg_format(&msg, text, sizeof text);
    if (gd_event_decode(frames, n, &msg) == GD_OK)
        gd_msg_format(&msg, text, sizeof text);
    gd_groupstat_t st;
    if (gd_groupstat_decode(data, size, &st) == GD_OK) {
        uint8_t *out;
        size_t len = gd_groupstat_encode(&st, &out);
        if (len == 0 || len > size + 1)
            abort();
        free(out);
        gd_groupstat_clear(&st);
    }
    gd_vmtask_t *tasks;
    int ntasks;
    if (gd_tasks_decode(data, size, &tasks, &ntasks) == GD_OK) {
        uint8_t *out;
        size_t len = gd_tasks_encode(tasks, ntasks, &out);
        if (!out || len != size || memcmp(out, data, size) != 0)
            abort();                    /* records that decode re-encode to the same bytes */
        free(out);
        free(tasks);
    }
    gd_status_rec_t *recs;
    int nrecs;
    if (gd_statuses_decode(data, size, &recs, &nrecs) == GD_OK) {
        uint8_t *out;
        size_t len = gd_statuses_encode(recs, nrecs, &out);
        if (!out || len != size || memcmp(out, data, size) != 0)
            abort();                    /* STATUSES records re-encode to the same bytes */
        free(out);
        free(recs);
    }
    return 0;
}
