/*  trace_merge.c — a placeholder for `gimpi-trace merge` in a build without the merger:
 *  it says so and fails with the usage status, so that gimpi-trace links and its HTML
 *  view works on its own.
 */
#include "programs/trace_merge.h"

#include <stdio.h>

int trace_merge_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gimpi-trace: merge: not built\n");
    return 2;
}
