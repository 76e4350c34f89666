/*  hostset_internal.h — what the three files of the host set share: the entries and lines
 *  of a set, the snapshot that undoes a call adding many hosts, and the checks of numbers
 *  and host names.  gimpi_hostset.c (the set, its lines, lists and files, placement) sits
 *  at the bottom; gimpi_hostset_slurm.c (Slurm allocations) and gimpi_hostaddr.c (-if,
 *  is this host local, the route to a host) call into it and never into each other.
 */
#ifndef GIMPI_HOSTSET_INTERNAL_H
#define GIMPI_HOSTSET_INTERNAL_H

#include "base/gimpi_hostset.h"

#include <stdbool.h>
#include <stddef.h>

/*  Digits of one number in a range or count: keeps every value far from overflow. */
#define HOSTSET_MAX_DIGITS 9

/*  The options a line may state, as bits of a mask. */
enum {
    OPT_LO = 1 << 0, OPT_WD = 1 << 1, OPT_EP = 1 << 2, OPT_SO = 1 << 3, OPT_DX = 1 << 4,
    OPT_IP = 1 << 5, OPT_ARCH = 1 << 6, OPT_SLOTS = 1 << 7, OPT_SP = 1 << 8,
    OPT_BX = 1 << 9, OPT_ID = 1 << 10,
};

/*  One host of the set, with the options its lines stated (the rest came from defaults). */
typedef struct {
    gimpi_hostinfo_t info;
    unsigned given;
} hostset_entry_t;

/*  What one line or list entry says: a host, the defaults, or nothing. */
typedef enum { LINE_NONE, LINE_DEFAULTS, LINE_HOST } hostset_what_t;
typedef struct {
    hostset_what_t what;
    hostset_entry_t e;
} hostset_line_t;

/*  The set: its hosts in order and the current defaults. */
struct gimpi_hostset_t {
    hostset_entry_t *hosts;
    int size, cap;
    hostset_entry_t defaults;   /* from the last "*" line (built-ins when none) */
};

/*  A copy of the set taken before a call that adds many hosts. */
typedef struct {
    hostset_entry_t *hosts;
    int size;
    hostset_entry_t defaults;
    bool ok;
} hostset_snap_t;

/*  A token shortened for a message: at most 60 characters, "..." when cut. */
typedef struct {
    char s[64];
} hostset_short_t;

/*  A token shortened for a message: at most 60 characters, "..." when cut. */
hostset_short_t hostset_short(const char *tok);
/*  A decimal number of at most HOSTSET_MAX_DIGITS digits in [min, max], the whole of
 *  s[0..len). */
bool hostset_number(const char *s, size_t len, long min, long max, long *out);
/*  Checks a host name or address as written (brackets around an IPv6 address allowed)
 *  and copies its bare form into out; 0, or -1 with a message naming it as what. */
int hostset_hostname(const char *tok, char *out, size_t outsize, const char *what, char *err,
                     size_t errsize);
/*  Merges one parsed line into the set (gimpi_hostset.c says how); 0, or -1 with a
 *  message. */
int hostset_apply(gimpi_hostset_t *self, const hostset_line_t *ln, char *err, size_t errsize);
/*  Copies the set before a call that may fail half-way; ok is false when out of memory. */
hostset_snap_t hostset_snap_take(gimpi_hostset_t *self);
/*  Ends a snapshot: puts the copy back when restore, and frees it. */
void hostset_snap_end(gimpi_hostset_t *self, hostset_snap_t *snap, bool restore);
#endif
