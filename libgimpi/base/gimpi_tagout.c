/*  gimpi_tagout.c — the copy loop of a spawned task's output tagger (gimpi_tagout.h):
 *  whole lines, the tag before each, one write per line (other taggers write to the same
 *  file), lines a tagger below already tagged for the launcher passed on unchanged.
 */
#include "base/gimpi_tagout.h"
#include "base/gimpi_vmwire.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#define TAGOUT_LINE 4096        /* longer lines are cut into several */

/*  Writes the prefix (none for a line already marked), len bytes of text and a newline in
 *  one write, through line (room for 64 + TAGOUT_LINE bytes). */
static void s_write_line(int fd, const char *prefix, size_t plen, const char *text,
                         size_t len, char *line)
{
    if (len && text[0] == GIMPI_TAGOUT_MARK)
        plen = 0;
    memcpy(line, prefix, plen);
    memcpy(line + plen, text, len);
    line[plen + len] = '\n';
    vmw_write_all(fd, line, plen + len + 1);     /* async-signal-safe */
}

/*  Writes the whole lines of buf[0..*have) to fd (all of it when flush, or when the
 *  buffer is full without a newline) and keeps the rest at the front. */
static void s_lines(int fd, const char *prefix, size_t plen, char *buf, size_t *have,
                    bool flush, char *line)
{
    size_t start = 0;
    for (size_t j = 0; j < *have; j++)
        if (buf[j] == '\n') {
            s_write_line(fd, prefix, plen, buf + start, j - start, line);
            start = j + 1;
        }
    if (start < *have && (flush || (start == 0 && *have == TAGOUT_LINE))) {
        s_write_line(fd, prefix, plen, buf + start, *have - start, line);
        start = *have;
    }
    memmove(buf, buf + start, *have - start);
    *have -= start;
}

/*  Copies both streams, tagged, until both end (gimpi_tagout.h). */
void gimpi_tagout_copy(int in_out, int in_err, const char *prefix)
{
    char buf[2][TAGOUT_LINE];
    char line[TAGOUT_LINE + 64];
    size_t have[2] = { 0, 0 };
    int in[2] = { in_out, in_err };
    bool open_[2] = { in_out >= 0, in_err >= 0 };
    size_t plen = strlen(prefix);
    if (plen >= 64)
        plen = 63;
    while (open_[0] || open_[1]) {
        struct pollfd p[2];
        int np = 0, map[2];
        for (int k = 0; k < 2; k++)
            if (open_[k]) {
                p[np] = (struct pollfd){ .fd = in[k], .events = POLLIN };
                map[np++] = k;
            }
        if (poll(p, (nfds_t)np, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (int i = 0; i < np; i++) {
            int k = map[i];
            if (!p[i].revents)
                continue;
            ssize_t r = read(in[k], buf[k] + have[k], sizeof buf[k] - have[k]);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                open_[k] = false;
            else
                have[k] += (size_t)r;
            s_lines(1 + k, prefix, plen, buf[k], &have[k], !open_[k], line);
        }
    }
}
