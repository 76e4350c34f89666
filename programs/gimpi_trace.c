/*  gimpi_trace.c — `gimpi-trace`, the trace tool.  `gimpi-trace FILE.json [-o VIEW.html]`
 *  turns a Chrome trace-event JSON file (gimpirun -trace's, or any other) into one
 *  self-contained HTML page with XPVM's views: a space-time diagram and a utilisation
 *  strip (programs/trace_html.c).  A file that is not strict JSON of the trace shape is an
 *  error naming its line and column (exit 1), and then no page is written; the page is
 *  written to a temporary name and renamed, so a failure never leaves half a page.
 *  `gimpi-trace merge ...` merges the per-task record files of a job into that JSON file
 *  (programs/trace_merge.h).  Exit status: 0 done, 1 bad input or a failed write, 2 usage.
 */
#include "config.h"
#include "gimpi.h"
#include "programs/trace_html.h"
#include "programs/trace_merge.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*  The largest trace file read (a page this big would not open in a browser anyway). */
#define TRACE_MAX_BYTES ((size_t)1 << 30)

/*  Prints the usage text to out. */
static void s_usage(FILE *out)
{
    fprintf(out, "usage: gimpi-trace [-o VIEW.html] [--title TEXT] FILE.json\n"
                 "       gimpi-trace merge DIR [-o FILE.json]\n"
                 "  FILE.json  a Chrome trace-event file (- reads standard input)\n"
                 "  -o FILE    the page to write (default FILE.json's name with .html;\n"
                 "             - writes standard output)\n"
                 "  --title T  the page's title (default the input's name)\n");
}

/*  Reads all of f into a new buffer (NUL-terminated); its length in *len.  NULL on a read
 *  error or a file over TRACE_MAX_BYTES (errno EFBIG). */
static char *s_slurp(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= TRACE_MAX_BYTES) {
                free(buf);
                errno = EFBIG;
                return NULL;
            }
            cap *= 2;
            char *more = realloc(buf, cap + 1);
            if (!more)
                break;
            buf = more;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f))
            break;
        if (feof(f)) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
    }
    free(buf);
    return NULL;
}

/*  The default output name: path without a final ".json", plus ".html" (a new string). */
static char *s_default_out(const char *path)
{
    size_t n = strlen(path);
    if (n > 5 && strcmp(path + n - 5, ".json") == 0)
        n -= 5;
    char *out = malloc(n + 6);
    if (out)
        snprintf(out, n + 6, "%.*s.html", (int)n, path);
    return out;
}

/*  Gives path the mode a new file gets (0666 less the umask; mkstemp made it 0600). */
static int s_chmod_umask(const char *path)
{
    mode_t mask = umask(022);
    umask(mask);
    return chmod(path, 0666 & ~mask);
}

/*  Writes the page to path by way of a temporary file in the same folder, renamed at the
 *  end ("-": standard output).  0, or 1 after a message. */
static int s_write_page(const char *path, const char *text, size_t len, const char *title)
{
    if (strcmp(path, "-") == 0) {
        if (trace_html_write(stdout, text, len, title) == 0 && fflush(stdout) == 0)
            return 0;
        fprintf(stderr, "gimpi-trace: writing standard output: %s\n", strerror(errno));
        return 1;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return 1;
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *out = fd < 0 ? NULL : fdopen(fd, "w");
    int rc = 1;
    if (!out) {
        fprintf(stderr, "gimpi-trace: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
    } else {
        int wrc = trace_html_write(out, text, len, title);
        if (fclose(out) != 0 || wrc != 0)
            fprintf(stderr, "gimpi-trace: writing %s: %s\n", path, strerror(errno));
        else if (s_chmod_umask(tmp) != 0 || rename(tmp, path) != 0)
            fprintf(stderr, "gimpi-trace: %s: %s\n", path, strerror(errno));
        else
            rc = 0;
    }
    if (rc != 0 && fd >= 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

/*  The HTML view: options, then read, check and write.  The exit status. */
static int s_view(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "title", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *out_path = NULL, *title = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 't': title = optarg; break;
        case 'h': s_usage(stdout); return 0;
        case 'V': printf("gimpi-trace %s\n", gimpi_version()); return 0;
        default: s_usage(stderr); return 2;
        }
    }
    if (optind != argc - 1 || argv[optind][0] == '\0') {
        s_usage(stderr);
        return 2;
    }
    const char *in_path = argv[optind];
    bool is_stdin = strcmp(in_path, "-") == 0;
    FILE *in = is_stdin ? stdin : fopen(in_path, "rb");
    if (!in) {
        fprintf(stderr, "gimpi-trace: %s: %s\n", in_path, strerror(errno));
        return 1;
    }
    size_t len = 0;
    char *text = s_slurp(in, &len);
    int err = errno;
    if (!is_stdin)
        fclose(in);
    if (!text) {
        fprintf(stderr, "gimpi-trace: reading %s: %s\n", in_path, strerror(err));
        return 1;
    }
    char msg[256];
    int rc = 1;
    char *dflt = NULL;
    if (trace_html_check(text, len, msg, sizeof msg) != 0) {
        fprintf(stderr, "gimpi-trace: %s:%s\n", is_stdin ? "<stdin>" : in_path, msg);
    } else {
        if (!out_path)
            out_path = is_stdin ? "-" : (dflt = s_default_out(in_path));
        if (out_path)
            rc = s_write_page(out_path, text, len, title ? title : in_path);
    }
    free(dflt);
    free(text);
    return rc;
}

/*  Dispatches to `merge` or to the HTML view. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "merge") == 0)
        return trace_merge_main(argc - 1, argv + 1);
    return s_view(argc, argv);
}
