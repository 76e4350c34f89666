/*  run_pvmabi.c — gimpirun -pvm-abi (run_pvmabi.h): finding the folder of PVM's ABI
 *  libraries and putting it first on LD_LIBRARY_PATH, for gimpirun's tasks on this host
 *  and for gimpi-agent's on the others.
 */
#include "programs/run_pvmabi.h"
#include "base/gimpi_findprog.h"
#include "base/gimpi_tunables.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GIMPI_PVMABIDIR
#define GIMPI_PVMABIDIR "/usr/local/lib/gimpi/pvm3"
#endif

/*  The folder that holds libpvm3.so.3 (0), or -1 with the places looked in err. */
static int s_find(char *out, size_t size, char *err, size_t errsize)
{
    char parent[PATH_MAX], tried[1024], lib[PATH_MAX + 32];
    snprintf(parent, sizeof parent, "%s", GIMPI_PVMABIDIR);
    char *slash = strrchr(parent, '/');
    if (slash)
        *slash = 0;                         /* gimpi_findprog joins it with "pvm3" */
    if (gimpi_findprog("pvm3", NULL, ".libs/gimpi", parent, out, size, tried,
                       sizeof tried) == 0) {
        snprintf(lib, sizeof lib, "%s/libpvm3.so.3", out);
        if (access(lib, R_OK) == 0)
            return 0;
        snprintf(tried, sizeof tried, "%.900s (no libpvm3.so.3 there)", out);
    }
    snprintf(err, errsize, "no folder of PVM's ABI libraries (pvm3/libpvm3.so.3): looked "
             "at %s", tried);
    return -1;
}

/*  run_pvmabi.h */
int run_pvmabi_env(char *err, size_t errsize)
{
    char dir[PATH_MAX];
    if (s_find(dir, sizeof dir, err, errsize) < 0)
        return -1;
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t n = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(n);
    if (!path) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    snprintf(path, n, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv("LD_LIBRARY_PATH", path, 1) || setenv("GIMPI_PVM_ABI", "1", 1);
    free(path);
    if (rc)
        snprintf(err, errsize, "cannot set LD_LIBRARY_PATH");
    return rc ? -1 : 0;
}

/*  run_pvmabi.h */
int run_pvmabi_env_if_asked(char *err, size_t errsize)
{
    const char *v = gimpi_env("GIMPI_PVM_ABI");
    return v && !strcmp(v, "1") ? run_pvmabi_env(err, errsize) : 0;
}
