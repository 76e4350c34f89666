/*  fuzz/fuzz_trace_merge.c — libFuzzer target for the merger of a job's trace files
 *  (programs/trace_merge.c: every file of a directory checked, messages matched, clocks
 *  shifted, JSON written).  Input: one byte of flags (bit 0: a partial merge; bits 1-2:
 *  the number of files less one, at most 3), then the files' bytes, each but the last
 *  preceded by its length (2 bytes, little-endian; cut to what is left).  The files are
 *  written as 1.gtev, 2.gtev, 3.gtev in a scratch directory made once, then merged.
 *  Invariants: a merge that fails says why, naming the directory or one of its files,
 *  and leaves no output; one that succeeds leaves a whole document (its first and last
 *  bytes) and no temporary file.
 */
#include "fuzz_check.h"
#include "programs/trace_merge.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*  The scratch directory, made at the first input (the process's only state). */
static char s_dir[64];

/*  Writes len bytes of p as dir/name. */
static void s_write(const char *name, const uint8_t *p, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", s_dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(p, 1, len, f) == len || len == 0);
    CHECK(fclose(f) == 0);
}

/*  The first and last bytes of the file at path: whether it starts with head and ends
 *  with tail. */
static bool s_whole(const char *path, const char *head, const char *tail)
{
    char buf[64];
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t hl = strlen(head), tl = strlen(tail);
    bool ok = fread(buf, 1, hl, f) == hl && !memcmp(buf, head, hl)
              && fseek(f, -(long)tl, SEEK_END) == 0 && fread(buf, 1, tl, f) == tl
              && !memcmp(buf, tail, tl);
    fclose(f);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!s_dir[0]) {
        snprintf(s_dir, sizeof s_dir, "/tmp/fuzz_trace_merge.XXXXXX");
        CHECK(mkdtemp(s_dir) != NULL);
    }
    if (size < 1)
        return 0;
    int flags = data[0] & 1 ? TRACE_MERGE_PARTIAL : 0;
    int nfiles = 1 + (data[0] >> 1) % 3;
    size_t at = 1;
    for (int k = 1; k <= 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "%d.gtev", k);
        if (k > nfiles) {
            char path[128];
            snprintf(path, sizeof path, "%s/%s", s_dir, name);
            unlink(path);
            continue;
        }
        size_t len = size - at;
        if (k < nfiles && size - at >= 2) {
            size_t want = (size_t)data[at] | (size_t)data[at + 1] << 8;
            at += 2;
            len = want < size - at ? want : size - at;
        } else if (k < nfiles)
            len = 0;
        s_write(name, data + at, len);
        at += len;
    }
    char out[128], tmp[160], err[PATH_MAX + 256];
    snprintf(out, sizeof out, "%s/out.json", s_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    unlink(out);
    int rc = trace_merge_flags(s_dir, out, flags, err, sizeof err);
    CHECK(access(tmp, F_OK) != 0);
    if (rc < 0) {
        CHECK(err[0] && strstr(err, s_dir));
        CHECK(access(out, F_OK) != 0);
    } else {
        CHECK(!flags ? rc == 0 : rc <= nfiles);
        CHECK(s_whole(out, "{\"traceEvents\":[", "}}}\n"));
    }
    return 0;
}
