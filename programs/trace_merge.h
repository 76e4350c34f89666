/*  trace_merge.h — `gimpi-trace merge`: merges the per-task trace record files that a
 *  traced job leaves in a folder into one Chrome trace-event JSON file (the input of
 *  gimpi-trace's HTML view, of Perfetto and of chrome://tracing).
 */
#ifndef TRACE_MERGE_H
#define TRACE_MERGE_H

/*  The `merge` subcommand: argv[0] is "merge", the rest its arguments.  The exit status
 *  (0 done, 1 failed, 2 usage). */
int trace_merge_main(int argc, char **argv);
#endif
