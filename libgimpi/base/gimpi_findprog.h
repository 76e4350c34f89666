/*  gimpi_findprog.h — where gimpi looks for one of its own programs (groupd,
 *  gimpi-tagger), the same way for the library's auto-start and for gimpirun, and for a
 *  program a task spawns (gimpi_findspawn, the same on every host), and the list of
 *  places it looked when nothing was there.
 *
 *  gimpi's own, in order: the program an environment variable names, when it is set (then the only
 *  place: an explicit choice is never second-guessed); beside the running program (as
 *  installed, and gimpirun beside gimpi-agent); the build tree's folder of the program
 *  beside the running program's folder (DIR/../SUB/NAME, looking through a libtool
 *  ".libs" folder), so that anything run from a build tree finds that tree's program;
 *  the installation's folder (bindir, pkglibexecdir); then every folder of PATH.
 */
#ifndef GIMPI_FINDPROG_H
#define GIMPI_FINDPROG_H

#include <stddef.h>

/*  Where program name can be run from: env names the variable that overrides the search
 *  (e.g. "GIMPI_GROUPD_BIN"), sub the program's folder in the build tree, bindir the
 *  installation's.  0 with the path in out, or -1 with every place looked, comma-separated,
 *  in tried (tried may be NULL). */
int gimpi_findprog(const char *name, const char *env, const char *sub, const char *bindir,
                   char *out, size_t size, char *tried, size_t triedsize);

/*  Where a program to spawn, given by its bare name, is run from, as PVM's daemon looks
 *  on its ep path and never on PATH: each folder of $GIMPI_PATH (the hostfile's ep= on
 *  another host), then the folder dir of the spawning program (NULL: none), then PVM's
 *  default ep $HOME/pvm3/bin/ARCH (ARCH as pvm_config shows it, LINUX64 on x86-64).  Only
 *  regular files we may run count.  0 with the path in out, or -1 with every place
 *  looked, comma-separated, in tried (tried may be NULL). */
int gimpi_findspawn(const char *name, const char *dir, char *out, size_t size, char *tried,
                    size_t triedsize);

#endif
