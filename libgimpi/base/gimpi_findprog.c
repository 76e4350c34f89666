/*  gimpi_findprog.c — finding programs (gimpi_findprog.h): one of gimpi's own (the
 *  variable that names it, beside the running program, the build tree, the bindir, PATH)
 *  and a program to spawn (GIMPI_PATH, the spawner's folder, PVM's default ep; never
 *  PATH); the places looked are kept for the message when none has it.
 */
#include "base/gimpi_findprog.h"
#include "base/gimpi_tunables.h"
#include "base/gimpi_vmwire.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*  The search's state: the answer and the places looked so far. */
typedef struct {
    char *out;
    size_t size;
    char *tried;
    size_t triedsize, used;
} look_t;

/*  Adds a place looked to the list (once: PATH, or GIMPI_PATH and the spawner's folder,
 *  may name a folder twice; the first reason stays). */
static void s_note(look_t *l, const char *place, const char *why)
{
    if (!l->tried || l->used + 1 >= l->triedsize)
        return;
    size_t n = strlen(place);
    for (const char *p = l->tried; (p = strstr(p, place)) != NULL; p++)
        if ((p == l->tried || p[-1] == ' ') && (p[n] == 0 || p[n] == ',' || p[n] == ' '))
            return;
    int w = snprintf(l->tried + l->used, l->triedsize - l->used, "%s%s%s%s%s",
                     l->used ? ", " : "", place, why ? " (" : "", why ? why : "", why ? ")" : "");
    if (w > 0)
        l->used += (size_t)w;
    if (l->used >= l->triedsize)
        l->used = l->triedsize - 1;
}

/*  Looks at path: true when it is a program we may run (copied to out); else it joins
 *  the places looked, with why it was looked at. */
static bool s_try(look_t *l, const char *path, const char *why)
{
    if (access(path, X_OK) == 0) {
        snprintf(l->out, l->size, "%s", path);
        return true;
    }
    s_note(l, path, why);
    return false;
}

/*  Beside the running program, then the build tree's folder sub beside its folder. */
static bool s_try_mine(look_t *l, const char *name, const char *sub)
{
    char me[PATH_MAX], path[PATH_MAX + 256];
    ssize_t n = readlink("/proc/self/exe", me, sizeof me - 1);
    char *slash = n > 0 ? (me[n] = 0, strrchr(me, '/')) : NULL;
    if (!slash)
        return false;
    *slash = 0;
    snprintf(path, sizeof path, "%s/%s", me, name);
    if (s_try(l, path, "beside the running program"))
        return true;
    size_t len = strlen(me);
    if (len >= 6 && !strcmp(me + len - 6, "/.libs"))
        me[len - 6] = 0;                    /* a libtool program of the build tree */
    slash = strrchr(me, '/');
    if (!slash || !sub)
        return false;
    *slash = 0;
    snprintf(path, sizeof path, "%s/%s/%s", me[0] ? me : "", sub, name);
    return s_try(l, path, "the build tree");
}

/*  Every folder of PATH. */
static bool s_try_path(look_t *l, const char *name)
{
    const char *p = getenv("PATH");
    char path[PATH_MAX + 256];
    if (!p || !*p)
        s_note(l, "PATH", "empty");
    while (p && *p) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        snprintf(path, sizeof path, "%.*s/%s", (int)n, n ? p : ".", name);
        if (s_try(l, path, "PATH"))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

/*  Finds program name (gimpi_findprog.h). */
int gimpi_findprog(const char *name, const char *env, const char *sub, const char *bindir,
                   char *out, size_t size, char *tried, size_t triedsize)
{
    look_t l = { .out = out, .size = size, .tried = tried, .triedsize = triedsize };
    if (tried && triedsize)
        tried[0] = 0;
    const char *given = env ? gimpi_env(env) : NULL;
    if (given && *given && strchr(given, '/'))
        return s_try(&l, given, env) ? 0 : -1;
    if (given && *given)                    /* a bare name: on PATH */
        return s_try_path(&l, given) ? 0 : -1;
    if (s_try_mine(&l, name, sub))
        return 0;
    if (bindir) {
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", bindir, name);
        if (s_try(&l, path, "the bindir"))
            return 0;
    }
    return s_try_path(&l, name) ? 0 : -1;
}

/*  Looks for name in each folder of the colon-separated list (empty entries skipped),
 *  as a regular file we may run; each folder looked joins the list with why. */
static bool s_try_list(look_t *l, const char *list, const char *name, const char *why)
{
    char path[PATH_MAX + 256];
    struct stat st;
    while (list && *list) {
        const char *c = strchr(list, ':');
        size_t n = c ? (size_t)(c - list) : strlen(list);
        int w = n ? snprintf(path, sizeof path, "%.*s/%s", (int)n, list, name) : -1;
        if (w > 0 && (size_t)w < sizeof path) {
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0) {
                snprintf(l->out, l->size, "%s", path);
                return true;
            }
            s_note(l, path, why);
        }
        list = c ? c + 1 : NULL;
    }
    return false;
}

/*  Finds a program to spawn by its bare name (gimpi_findprog.h). */
int gimpi_findspawn(const char *name, const char *dir, char *out, size_t size, char *tried,
                    size_t triedsize)
{
    look_t l = { .out = out, .size = size, .tried = tried, .triedsize = triedsize };
    if (tried && triedsize)
        tried[0] = 0;
    if (!name || !*name || strchr(name, '/'))
        return -1;
    const char *gp = gimpi_env("GIMPI_PATH");
    if (!gp || !*gp)
        s_note(&l, "GIMPI_PATH", "unset");
    else if (s_try_list(&l, gp, name, "GIMPI_PATH"))
        return 0;
    if (dir && *dir && s_try_list(&l, dir, name, "the spawner's folder"))
        return 0;
    const char *home = getenv("HOME");
    char ep[PATH_MAX];
    if (home && *home && (size_t)snprintf(ep, sizeof ep, "%s/pvm3/bin/%s", home, vmw_arch())
                             < sizeof ep
        && !strchr(ep, ':') && s_try_list(&l, ep, name, "PVM's default ep"))
        return 0;
    return -1;
}
