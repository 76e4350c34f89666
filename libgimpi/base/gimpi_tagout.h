/*  gimpi_tagout.h — tagging a spawned task's output lines with its tid (doc/spawn.md,
 *  "Output"): the copy loop that the gimpi-tagger program runs for each tagged child (a
 *  fork of the spawner runs it when that program cannot be found), and the mark that
 *  tells a launcher (gimpirun) that a line carries its task's tag already, so that it
 *  writes it as it is instead of putting the spawner's own tag before it.
 */
#ifndef GIMPI_TAGOUT_H
#define GIMPI_TAGOUT_H

/*  The first byte of a line a tagger wrote for a launcher (ASCII RS): the launcher
 *  removes it and adds no tag of its own; another tagger passes such a line on as it is,
 *  so a grandchild's line keeps the grandchild's tag alone. */
#define GIMPI_TAGOUT_MARK '\x1e'

/*  Copies the lines read from in_out to stdout and those from in_err to stderr, each
 *  prefixed with prefix (shorter than 64 bytes), each line in one write; a line longer
 *  than 4 KiB is cut into several.  Lines that start with GIMPI_TAGOUT_MARK are copied
 *  unchanged.  Returns when both have ended.  Only async-signal-safe calls (it may run
 *  in a fork of a threaded process). */
void gimpi_tagout_copy(int in_out, int in_err, const char *prefix);

#endif
