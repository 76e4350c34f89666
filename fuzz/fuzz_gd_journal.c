/*  fuzz_gd_journal.c — libFuzzer target for groupd's journal (groupd/gd_journal.h) and its
 *  replay (groupd/gd_replay.c): the input is a journal file's bytes.  They are decoded by
 *  gd_journal_replay_bytes and every record is applied to a fresh groupd_t exactly as at
 *  start (requests through gd_serve_request, the compacted state records into the
 *  registry, the relay, the message box and the table of replies), with replies and
 *  events on inproc sockets nobody reads.  Checked: nothing crashes or leaks; a replay
 *  that fails says so (a negative count) and one that succeeds consumed whole records
 *  only (an input of even first byte is records whose framing and checksums are made
 *  here, s_input); the state it leaves is then compacted (gd_record_dump into a memory file) and that
 *  dump replays into another groupd_t without error, to the same numbers of tasks,
 *  groups and message-box entries.  Built by `make fuzz`, run by `make fuzz-run`.
 */
#include "groupd/gd_replay.h"
#include "groupd/gd_record.h"
#include "fuzz_check.h"
#include "fuzz_gd_sockets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

/*  The sockets (fuzz_gd_sockets.h). */
static void *s_router, *s_xpub;

/*  A fresh groupd_t that replays (small limits). */
static void s_new(groupd_t *self)
{
    *self = (groupd_t){ .router = s_router, .xpub = s_xpub, .max_unreg = 20 };
    gd_registry_limits_t lim = { .max_tasks = 8, .max_groups = 8, .max_groups_per_task = 4,
                                 .max_blocks = 4, .reserve_quota = 64 };
    if (gd_serve_init(self, NULL, &lim) < 0 || !(self->dedup = gd_dedup_new()))
        abort();
}

/*  An input whose first byte is even is records without their framing: each a Uint2
 *  length and that many bytes (type and fields), framed here with their length and a
 *  right checksum, so that the fuzzer reaches the replay of records it invents; an odd
 *  first byte: the rest is a journal file's bytes as they are.  *out is malloc'ed. */
static size_t s_input(const uint8_t *data, size_t size, uint8_t **out)
{
    *out = malloc(2 * size + 8);
    if (!*out)
        abort();
    if (size == 0 || data[0] & 1) {
        if (size > 1)
            memcpy(*out, data + 1, size - 1);
        return size ? size - 1 : 0;
    }
    size_t in = 1, len = 0;
    while (in + 2 <= size) {
        size_t l = (size_t)data[in] << 8 | data[in + 1];
        in += 2;
        if (l == 0 || l > size - in)
            break;
        gimpi_be_put32(*out + len, (uint32_t)l);
        memcpy(*out + len + 4, data + in, l);
        gimpi_be_put32(*out + len + 4 + l, gd_journal_crc32(data + in, l));
        len += 8 + l;
        in += l;
    }
    return len;
}

/*  Replays bytes into self as groupd does at start. */
static long s_replay(groupd_t *self, const uint8_t *data, size_t size, size_t *good)
{
    self->replaying = true;
    long n = gd_journal_replay_bytes(data, size, gd_replay_apply, self, good);
    self->replaying = false;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_gd_sockets("fuzz-gd-journal", &s_router, &s_xpub);
    groupd_t a, b;
    s_new(&a);
    size_t good = 0;
    uint8_t *bytes;
    size_t len = s_input(data, size, &bytes);
    long n = s_replay(&a, bytes, len, &good);
    free(bytes);
    CHECK(n < 0 || good <= len);            /* never more than it was given */
    if (n > 0) {
        gd_serve_orphans_begin(&a);
        char path[] = "/tmp/fuzz-gd-journal-XXXXXX", err[256];
        int fd = mkstemp(path);
        if (fd >= 0) {
            close(fd);
            unlink(path);
            gd_journal_t *j = gd_journal_open(path, 0, err, sizeof err);
            CHECK(j != NULL);
            CHECK(gd_journal_rewrite(j, gd_record_dump, &a, err, sizeof err) == 0);
            gd_journal_destroy(&j, false);
            j = gd_journal_open(path, 0, err, sizeof err);
            s_new(&b);
            b.replaying = true;
            long m = gd_journal_replay(j, gd_replay_apply, &b, err, sizeof err);
            b.replaying = false;
            CHECK(m > 0);                   /* the compacted state replays */
            CHECK(gd_registry_ntasks(b.reg) == gd_registry_ntasks(a.reg));
            CHECK(gd_registry_ngroups(b.reg) == gd_registry_ngroups(a.reg));
            CHECK(gd_mbox_nentries(b.mbox) == gd_mbox_nentries(a.mbox));
            gd_journal_destroy(&j, true);
            gd_serve_fini(&b);
        }
    }
    gd_serve_fini(&a);
    return 0;
}
