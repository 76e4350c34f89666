/*  trace_merge.h — the merger of a job's trace (trace_merge.c): it reads the per-task
 *  files a traced job wrote into one directory (base/gimpi_tev.h, DIR/<tid>.gtev), puts
 *  them on the job's reference clock, and writes one Chrome trace-event JSON file that
 *  Perfetto (ui.perfetto.dev) and chrome://tracing open: a process per host, a thread per
 *  task, a slice per library call and per stretch of computing between calls, a flow
 *  arrow per message, a counter of each task's queue, instants for group, spawn, exit and
 *  host events.  gimpirun -trace calls trace_merge when its job ends; `gimpi-trace merge`
 *  (trace_merge_main) does it for tasks started by hand with GIMPI_TRACE set.  The JSON's
 *  conventions are in doc/tracing.md.
 */
#ifndef GIMPI_TRACE_MERGE_H
#define GIMPI_TRACE_MERGE_H

#include <stddef.h>

/*  Merges every *.gtev file of dir into json_out ("-": standard output), written to a
 *  temporary name first and renamed, so that a failed merge leaves no half file.  Every
 *  file is checked (magic, version, header strings, each record's length and kind); the
 *  first that is truncated or not a trace is named in err.  0, or -1 with err set. */
int trace_merge(const char *dir, const char *json_out, char *err, size_t errlen);

enum {
    TRACE_MERGE_PARTIAL = 1,    /* files still being written, or cut short by a task's
                                   death: a header not all there skips the file, a last
                                   record not all there ends it (otherData counts both) */
};

/*  trace_merge with flags (TRACE_MERGE_PARTIAL).  The number of files cut short or
 *  skipped (0 without the flag), or -1 with err set. */
int trace_merge_flags(const char *dir, const char *json_out, int flags, char *err,
                      size_t errlen);

/*  `gimpi-trace merge DIR [-o FILE.json] [--partial]` (argv[0] is the program or the word "merge";
 *  a "merge" that follows the program is skipped too).  The output defaults to DIR.json.
 *  Returns the exit status: 0, 1 on a failed merge, 2 on a usage error. */
int trace_merge_main(int argc, char **argv);

#endif
