/*  pvm_export.c — PVM's pvm_export and pvm_unexport: they edit the environment variable
 *  PVM_EXPORT, the colon-separated names of the variables a task's spawns pass to its
 *  children (gimpi_spawn reads it at each spawn, and sends those variables with their
 *  values of that moment to children on other hosts; children on this host get the whole
 *  environment).  As PVM's: a name already listed is not added again, an empty name or
 *  one not listed changes nothing, and unexporting removes the first listing only, with
 *  one of its colons.  PVM has no error for them; gimpi answers a NULL name (PVM's
 *  crash) or a name with '=' or ':' (which no list entry can be) with PvmBadParam.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "base/gimpi_tunables.h"

#include <stdlib.h>
#include <string.h>

/*  Where name is listed in list: the entry's start, or NULL. */
static const char *s_find(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ':')
            p++;
        const char *q = p;
        while (*q && *q != ':')
            q++;
        if ((size_t)(q - p) == len && !strncmp(p, name, len))
            return p;
        p = q;
    }
    return NULL;
}

/*  0 when name may be (un)exported (1 for the empty name, a no-op), else PvmBadParam. */
static int s_check(const char *fn, const char *name)
{
    if (!name || strpbrk(name, "=:"))
        return pvm_ctx_fail(pvm_ctx_current(), fn, PvmBadParam);
    return *name ? 0 : 1;
}

/*  Adds name to PVM_EXPORT unless it is there.  0, PvmBadParam or PvmNoMem. */
int pvm_export(char *name)
{
    int rc = s_check("pvm_export", name);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    const char *e = gimpi_env("PVM_EXPORT");
    if (e && s_find(e, name))
        return 0;
    size_t n = (e ? strlen(e) : 0) + strlen(name) + 2;
    char *v = malloc(n);
    if (!v)
        return pvm_ctx_fail(pvm_ctx_current(), "pvm_export", PvmNoMem);
    strcpy(v, e ? e : "");
    if (e && *e)
        strcat(v, ":");
    strcat(v, name);
    rc = setenv("PVM_EXPORT", v, 1);
    free(v);
    return rc < 0 ? pvm_ctx_fail(pvm_ctx_current(), "pvm_export", PvmNoMem) : 0;
}

/*  Removes name's first listing from PVM_EXPORT.  0, PvmBadParam or PvmNoMem. */
int pvm_unexport(char *name)
{
    int rc = s_check("pvm_unexport", name);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    const char *e = gimpi_env("PVM_EXPORT");
    const char *p = e ? s_find(e, name) : NULL;
    if (!p)
        return 0;
    const char *q = p + strlen(name);
    if (*q == ':')
        q++;                    /* the colon after it goes, else the one before */
    else if (p > e && p[-1] == ':')
        p--;
    char *v = malloc(strlen(e) + 1);
    if (!v)
        return pvm_ctx_fail(pvm_ctx_current(), "pvm_unexport", PvmNoMem);
    memcpy(v, e, (size_t)(p - e));
    strcpy(v + (p - e), q);
    rc = setenv("PVM_EXPORT", v, 1);
    free(v);
    return rc < 0 ? pvm_ctx_fail(pvm_ctx_current(), "pvm_unexport", PvmNoMem) : 0;
}
