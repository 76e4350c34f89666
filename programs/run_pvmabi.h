/*  run_pvmabi.h — gimpirun -pvm-abi: existing PVM binaries run on gimpi through PVM's ABI
 *  libraries (libpvm3.so.3 ... in $(libdir)/gimpi/pvm3, see libgimpi/Makemodule.am).
 */
#ifndef RUN_PVMABI_H
#define RUN_PVMABI_H
#include <stddef.h>

/*  Puts the folder of PVM's ABI libraries first on this process's LD_LIBRARY_PATH (what
 *  it starts inherits it) and sets GIMPI_PVM_ABI=1 (gimpirun hands GIMPI_* variables to
 *  the tasks it starts on other hosts, whose gimpi-agent then does the same there).  The
 *  folder is looked for as gimpi's programs are (base/gimpi_findprog.h): beside the
 *  running program, the build tree's .libs/gimpi/pvm3, then $(libdir)/gimpi/pvm3.  0, or
 *  -1 with the places looked in err. */
int run_pvmabi_env(char *err, size_t errsize);

/*  run_pvmabi_env when GIMPI_PVM_ABI is 1 (gimpi-agent, for a task it starts); 0 else. */
int run_pvmabi_env_if_asked(char *err, size_t errsize);
#endif
