/*  gimpi_hostset.c — the host set: -H lists, PVM hostfiles, Slurm allocations, placement
 *  in slot order, and two questions about this machine (-if, is this host local).
 *
 *  Every way in becomes one "host line" (a host or defaults with the options it states)
 *  that one function merges into the set, so that -H, hostfiles, pvm_addhosts and Slurm
 *  follow the same rules: a new name is appended with the current defaults under its
 *  options; a name already there adds its slots (options stated both times must agree);
 *  a plain line naming a '&' host starts it.  Calls that add many hosts keep a copy of the
 *  set and put it back on error, so that a bad line leaves nothing half done.  Input is
 *  bounded everywhere: line length, hosts, slots, and a Slurm range is counted before
 *  anything is expanded.  gimpi_hostset.h states the promises.
 */
#include "base/gimpi_hostset.h"
#include "base/gimpi_err.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*  The longest Slurm variable looked at: hostlists are compressed, so this is generous. */
#define S_MAX_SLURM_TEXT (1 << 20)
/*  Bracket groups in one element of a Slurm hostlist ("a[1-2]b[3-4]" has two). */
#define S_MAX_GROUPS 8
/*  Digits of one number in a range or count: keeps every value far from overflow. */
#define S_MAX_DIGITS 9

/*  The options a line may state, as bits of a mask. */
enum {
    OPT_LO = 1 << 0, OPT_WD = 1 << 1, OPT_EP = 1 << 2, OPT_SO = 1 << 3, OPT_DX = 1 << 4,
    OPT_IP = 1 << 5, OPT_ARCH = 1 << 6, OPT_SLOTS = 1 << 7, OPT_SP = 1 << 8,
    OPT_BX = 1 << 9, OPT_ID = 1 << 10,
};

/*  How an option's value is checked and stored. */
typedef enum { K_LOGIN, K_PATH, K_HOST, K_ARCH, K_SO, K_INT, K_IGNORED } s_kind_t;

/*  The option table: name, bit, kind, where it goes (string field or int field), range. */
static const struct {
    const char *key;
    unsigned bit;
    s_kind_t kind;
    size_t off, size;           /* field of gimpi_hostinfo_t (size: string room) */
    int min, max;               /* K_INT range */
} s_opts[] = {
    { "lo", OPT_LO, K_LOGIN, offsetof(gimpi_hostinfo_t, login), 64, 0, 0 },
    { "wd", OPT_WD, K_PATH, offsetof(gimpi_hostinfo_t, wd), 1024, 0, 0 },
    { "ep", OPT_EP, K_PATH, offsetof(gimpi_hostinfo_t, ep), 1024, 0, 0 },
    { "dx", OPT_DX, K_PATH, offsetof(gimpi_hostinfo_t, dx), 1024, 0, 0 },
    { "so", OPT_SO, K_SO, offsetof(gimpi_hostinfo_t, so), 256, 0, 0 },
    { "ip", OPT_IP, K_HOST, offsetof(gimpi_hostinfo_t, ip), 64, 0, 0 },
    { "arch", OPT_ARCH, K_ARCH, offsetof(gimpi_hostinfo_t, arch), 32, 0, 0 },
    { "slots", OPT_SLOTS, K_INT, offsetof(gimpi_hostinfo_t, slots), 0, 1, GIMPI_HOSTSET_MAX_SLOTS },
    { "sp", OPT_SP, K_INT, offsetof(gimpi_hostinfo_t, speed), 0, 1, GIMPI_HOSTSET_MAX_SPEED },
    { "bx", OPT_BX, K_IGNORED, 0, 0, 0, 0 },
    { "id", OPT_ID, K_IGNORED, 0, 0, 0, 0 },
};
#define S_NOPTS ((int)(sizeof s_opts / sizeof s_opts[0]))

/*  One host of the set, with the options its lines stated (the rest came from defaults). */
typedef struct {
    gimpi_hostinfo_t info;
    unsigned given;
} s_entry_t;

/*  What one line or list entry says: a host, the defaults, or nothing. */
typedef enum { LINE_NONE, LINE_DEFAULTS, LINE_HOST } s_what_t;
typedef struct {
    s_what_t what;
    s_entry_t e;
} s_line_t;

struct gimpi_hostset_t {
    s_entry_t *hosts;
    int size, cap;
    s_entry_t defaults;         /* from the last "*" line (built-ins when none) */
};

/*  A copy of the set taken before a call that adds many hosts. */
typedef struct {
    s_entry_t *hosts;
    int size;
    s_entry_t defaults;
    bool ok;
} s_snap_t;

/*  PVM's built-in defaults: one slot, speed 1000, every string empty. */
static void s_builtin(s_entry_t *e)
{
    memset(e, 0, sizeof *e);
    e->info.slots = 1;
    e->info.speed = GIMPI_HOSTSET_DEF_SPEED;
}

/*  A new, empty set (gimpi_hostset.h). */
gimpi_hostset_t *gimpi_hostset_new(void)
{
    gimpi_hostset_t *self = calloc(1, sizeof *self);
    if (self)
        s_builtin(&self->defaults);
    return self;
}

/*  Frees the set (gimpi_hostset.h). */
void gimpi_hostset_destroy(gimpi_hostset_t **self_p)
{
    assert(self_p);
    if (*self_p) {
        free((*self_p)->hosts);
        free(*self_p);
        *self_p = NULL;
    }
}

/*  Number of hosts (gimpi_hostset.h). */
int gimpi_hostset_size(gimpi_hostset_t *self)
{
    assert(self);
    return self->size;
}

/*  Host i (gimpi_hostset.h). */
const gimpi_hostinfo_t *gimpi_hostset_get(gimpi_hostset_t *self, int i)
{
    assert(self);
    return i >= 0 && i < self->size ? &self->hosts[i].info : NULL;
}

/*  Slots of the started hosts (gimpi_hostset.h). */
int gimpi_hostset_total_slots(gimpi_hostset_t *self)
{
    assert(self);
    int total = 0;
    for (int i = 0; i < self->size; i++)
        if (!self->hosts[i].info.later)
            total += self->hosts[i].info.slots;
    return total;
}

/*  Index of a host by name (gimpi_hostset.h). */
int gimpi_hostset_find(gimpi_hostset_t *self, const char *name)
{
    assert(self);
    if (!name)
        return -1;
    for (int i = 0; i < self->size; i++)
        if (strcasecmp(self->hosts[i].info.name, name) == 0)
            return i;
    return -1;
}

/*  Removes host i (gimpi_hostset.h). */
int gimpi_hostset_remove(gimpi_hostset_t *self, int i)
{
    assert(self);
    if (i < 0 || i >= self->size)
        return -1;
    memmove(&self->hosts[i], &self->hosts[i + 1], (size_t)(self->size - i - 1) * sizeof *self->hosts);
    self->size--;
    return 0;
}

/*  Copies the set before a call that may fail half-way; ok is false when out of memory. */
static s_snap_t s_snap_take(gimpi_hostset_t *self)
{
    s_snap_t snap = { .size = self->size, .defaults = self->defaults, .ok = true };
    if (self->size) {
        snap.hosts = malloc((size_t)self->size * sizeof *snap.hosts);
        if (snap.hosts)
            memcpy(snap.hosts, self->hosts, (size_t)self->size * sizeof *snap.hosts);
        else
            snap.ok = false;
    }
    return snap;
}

/*  Ends a snapshot: puts the copy back when restore, and frees it. */
static void s_snap_end(gimpi_hostset_t *self, s_snap_t *snap, bool restore)
{
    if (restore) {
        if (snap->size)
            memcpy(self->hosts, snap->hosts, (size_t)snap->size * sizeof *snap->hosts);
        self->size = snap->size;
        self->defaults = snap->defaults;
    }
    free(snap->hosts);
    snap->hosts = NULL;
}

/*  A token shortened for a message: at most 60 characters, "..." when cut. */
typedef struct {
    char s[64];
} s_short_t;
static s_short_t s_short(const char *tok)
{
    s_short_t out;
    size_t n = strnlen(tok, 61);
    if (n > 60)
        snprintf(out.s, sizeof out.s, "%.57s...", tok);
    else
        snprintf(out.s, sizeof out.s, "%s", tok);
    for (char *p = out.s; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    return out;
}

/*  A decimal number of at most S_MAX_DIGITS digits in [min, max], the whole of s[0..len). */
static bool s_number(const char *s, size_t len, long min, long max, long *out)
{
    if (len == 0 || len > S_MAX_DIGITS)
        return false;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

/*  Letters, digits, '.', '-' and '_': what host names, logins and arch names are made of. */
static bool s_namechars(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
              || *s == '.' || *s == '-' || *s == '_'))
            return false;
    return true;
}

/*  True for an IPv6 address, with an optional %scope of name characters. */
static bool s_ipv6(const char *s)
{
    char buf[INET6_ADDRSTRLEN + 1];
    const char *pct = strchr(s, '%');
    size_t len = pct ? (size_t)(pct - s) : strlen(s);
    if (len >= sizeof buf || (pct && (!pct[1] || !s_namechars(pct + 1) || strlen(pct + 1) >= IFNAMSIZ)))
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    struct in6_addr a;
    return inet_pton(AF_INET6, buf, &a) == 1;
}

/*  Checks a host name or address as written (brackets around an IPv6 address allowed)
 *  and copies its bare form into out.  A name starts with a letter or digit, so that it
 *  can never pass for an option of ssh. */
static int s_hostname(const char *tok, char *out, size_t outsize, const char *what, char *err,
                      size_t errsize)
{
    size_t len = strnlen(tok, outsize + 2);
    const char *s = tok;
    if (len >= 2 && tok[0] == '[' && tok[len - 1] == ']') {
        s = tok + 1;
        len -= 2;
    }
    if (len == 0)
        return gimpi_fail(err, errsize, "empty %s", what);
    if (len >= outsize)
        return gimpi_fail(err, errsize, "%s '%s' is longer than %zu characters", what,
                          s_short(tok).s, outsize - 1);
    char name[1024];
    memcpy(name, s, len);
    name[len] = '\0';
    if (strchr(name, ':')) {
        if (!s_ipv6(name))
            return gimpi_fail(err, errsize, "%s '%s' is neither a host name nor an IPv6 address%s",
                              what, s_short(tok).s, strchr(name, ':') == strrchr(name, ':')
                                                    ? " (slots are given as slots=N)" : "");
    } else if (!s_namechars(name) || !((name[0] >= 'a' && name[0] <= 'z')
                                       || (name[0] >= 'A' && name[0] <= 'Z')
                                       || (name[0] >= '0' && name[0] <= '9'))) {
        return gimpi_fail(err, errsize, "bad %s '%s': use letters, digits, '.', '-' and '_', "
                          "starting with a letter or digit", what, s_short(tok).s);
    }
    memcpy(out, name, len + 1);
    return 0;
}

/*  Checks one option's value and stores it into e. */
static int s_option_value(int o, const char *tok, const char *val, s_entry_t *e, char *err,
                          size_t errsize)
{
    size_t len = strlen(val);
    char *field = (char *)&e->info + s_opts[o].off;
    if (len == 0)
        return gimpi_fail(err, errsize, "option '%s' has no value", s_short(tok).s);
    switch (s_opts[o].kind) {
    case K_INT: {
        long v;
        if (!s_number(val, len, s_opts[o].min, s_opts[o].max, &v))
            return gimpi_fail(err, errsize, "option '%s': %s= takes a whole number from %d to %d",
                              s_short(tok).s, s_opts[o].key, s_opts[o].min, s_opts[o].max);
        memcpy(field, &(int){ (int)v }, sizeof(int));
        break;
    }
    case K_HOST:
        if (s_hostname(val, field, s_opts[o].size, "ip= address", err, errsize) < 0)
            return -1;
        break;
    case K_LOGIN:
    case K_ARCH:
        if (len >= s_opts[o].size || !s_namechars(val) || val[0] == '-')
            return gimpi_fail(err, errsize, "bad %s= value '%s': at most %zu letters, digits, "
                              "'.', '-' or '_', not starting with '-'", s_opts[o].key,
                              s_short(val).s, s_opts[o].size - 1);
        memcpy(field, val, len + 1);
        break;
    case K_PATH:
        if (len >= s_opts[o].size)
            return gimpi_fail(err, errsize, "%s= value '%s' is longer than %zu characters",
                              s_opts[o].key, s_short(val).s, s_opts[o].size - 1);
        for (const char *p = val; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return gimpi_fail(err, errsize, "%s= value '%s' holds a control character",
                                  s_opts[o].key, s_short(val).s);
        memcpy(field, val, len + 1);
        break;
    case K_SO:
        if (strcmp(val, "pw") == 0)
            return gimpi_fail(err, errsize, "so=pw is not supported: gimpi runs ssh in batch mode "
                              "and cannot ask for a password; give that host an ssh key instead");
        if (strcmp(val, "ms") == 0)
            return gimpi_fail(err, errsize, "so=ms (manual start) is not supported: start "
                              "`gimpirun -client` on that host by hand and leave it out of the "
                              "host set");
        return gimpi_fail(err, errsize, "unknown so= value '%s' (PVM knows only pw and ms, and "
                          "gimpi supports neither)", s_short(val).s);
    case K_IGNORED:
        for (const char *p = val; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return gimpi_fail(err, errsize, "%s= value '%s' holds a control character",
                                  s_opts[o].key, s_short(val).s);
        break;
    }
    e->given |= s_opts[o].bit;
    return 0;
}

/*  Parses one "key=value" token into e. */
static int s_option(const char *tok, s_entry_t *e, char *err, size_t errsize)
{
    const char *eq = strchr(tok, '=');
    if (!eq)
        return gimpi_fail(err, errsize, "'%s' is not an option: options are KEY=VALUE after the "
                          "host name (one host per line)", s_short(tok).s);
    size_t klen = (size_t)(eq - tok);
    for (int o = 0; o < S_NOPTS; o++)
        if (strlen(s_opts[o].key) == klen && strncmp(tok, s_opts[o].key, klen) == 0)
            return s_option_value(o, tok, eq + 1, e, err, errsize);
    return gimpi_fail(err, errsize, "unknown option '%s' (known: lo= wd= ep= dx= ip= sp= slots= "
                      "arch= so= bx= id=)", s_short(tok).s);
}

/*  Parses one hostfile line into out (defaults of self under the line's options). */
static int s_parse_line(gimpi_hostset_t *self, const char *line, s_line_t *out, char *err,
                        size_t errsize)
{
    memset(out, 0, sizeof *out);
    out->what = LINE_NONE;
    if (!line)
        return gimpi_fail(err, errsize, "no line");
    size_t len = strnlen(line, GIMPI_HOSTSET_MAX_LINE + 1);
    if (len > GIMPI_HOSTSET_MAX_LINE)
        return gimpi_fail(err, errsize, "line longer than %d characters", GIMPI_HOSTSET_MAX_LINE);
    char buf[GIMPI_HOSTSET_MAX_LINE + 1];
    memcpy(buf, line, len + 1);
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)buf[i] < 0x20 && !strchr("\t\r\n\v\f", buf[i])) || buf[i] == 0x7f)
            return gimpi_fail(err, errsize, "control character (byte %d) in the line",
                              (unsigned char)buf[i]);
    const char *sep = " \t\r\n\v\f";
    char *save = NULL;
    char *tok = strtok_r(buf, sep, &save);
    if (!tok || tok[0] == '#')
        return 0;
    bool later = false;
    while (*tok == '&' || *tok == '$') {  /* '&': start later; '$': PVM's overloading, moot here */
        later |= *tok == '&';
        if (!*++tok && !(tok = strtok_r(NULL, sep, &save)))
            return gimpi_fail(err, errsize, "'&' or '$' without a host name");
    }
    if (strcmp(tok, "*") == 0) {
        if (later || tok != buf + strspn(buf, sep))
            return gimpi_fail(err, errsize, "'&' or '$' before '*' (a defaults line)");
        s_builtin(&out->e);
        out->what = LINE_DEFAULTS;
    } else {
        out->e = self->defaults;
        out->e.given = 0;
        if (s_hostname(tok, out->e.info.name, sizeof out->e.info.name, "host name", err,
                       errsize) < 0)
            return -1;
        out->e.info.later = later;
        out->what = LINE_HOST;
    }
    while ((tok = strtok_r(NULL, sep, &save)) && tok[0] != '#')
        if (s_option(tok, &out->e, err, errsize) < 0)
            return -1;
    if (out->what == LINE_DEFAULTS && (out->e.given & OPT_IP))
        return gimpi_fail(err, errsize, "ip= cannot be a default: it names one host");
    return 0;
}

/*  The string fields that two lines about one host must agree on, with their bits. */
static const struct {
    unsigned bit;
    size_t off;
    const char *key;
} s_strfields[] = {
    { OPT_LO, offsetof(gimpi_hostinfo_t, login), "lo" },
    { OPT_WD, offsetof(gimpi_hostinfo_t, wd), "wd" },
    { OPT_EP, offsetof(gimpi_hostinfo_t, ep), "ep" },
    { OPT_DX, offsetof(gimpi_hostinfo_t, dx), "dx" },
    { OPT_IP, offsetof(gimpi_hostinfo_t, ip), "ip" },
    { OPT_ARCH, offsetof(gimpi_hostinfo_t, arch), "arch" },
};
#define S_NSTRFIELDS ((int)(sizeof s_strfields / sizeof s_strfields[0]))

/*  Copies the options that n states into h (slots and the 'later' mark excepted). */
static void s_take_given(s_entry_t *h, const s_entry_t *n)
{
    for (int f = 0; f < S_NSTRFIELDS; f++)
        if (n->given & s_strfields[f].bit)
            strcpy((char *)&h->info + s_strfields[f].off, (const char *)&n->info + s_strfields[f].off);
    if (n->given & OPT_SP)
        h->info.speed = n->info.speed;
    h->given |= n->given & ~OPT_SLOTS;
}

/*  Merges a parsed host line into the set (the rules are in the file's head). */
static int s_apply(gimpi_hostset_t *self, const s_line_t *ln, char *err, size_t errsize)
{
    if (ln->what == LINE_DEFAULTS) {
        self->defaults = ln->e;
        return 0;
    }
    if (ln->what != LINE_HOST)
        return 0;
    const s_entry_t *n = &ln->e;
    int i = gimpi_hostset_find(self, n->info.name);
    if (i < 0) {
        if (self->size >= GIMPI_HOSTSET_MAX_HOSTS)
            return gimpi_fail(err, errsize, "more than %d hosts (at '%s')", GIMPI_HOSTSET_MAX_HOSTS,
                              n->info.name);
        if (self->size == self->cap) {
            int cap = self->cap ? self->cap * 2 : 16;
            if (cap > GIMPI_HOSTSET_MAX_HOSTS)
                cap = GIMPI_HOSTSET_MAX_HOSTS;
            s_entry_t *hosts = realloc(self->hosts, (size_t)cap * sizeof *hosts);
            if (!hosts)
                return gimpi_fail(err, errsize, "out of memory");
            self->hosts = hosts;
            self->cap = cap;
        }
        self->hosts[self->size++] = *n;
        return 0;
    }
    s_entry_t *h = &self->hosts[i];
    if (h->info.later && !n->info.later) {          /* pvm_addhosts of a '&' host */
        s_take_given(h, n);
        if (n->given & OPT_SLOTS)
            h->info.slots = n->info.slots;
        h->info.later = false;
        return 0;
    }
    if (!h->info.later && n->info.later)
        return gimpi_fail(err, errsize, "host %s is already in the set as a started host; a "
                          "'&' line cannot add it for later", h->info.name);
    for (int f = 0; f < S_NSTRFIELDS; f++) {
        const char *a = (const char *)&h->info + s_strfields[f].off;
        const char *b = (const char *)&n->info + s_strfields[f].off;
        if ((h->given & n->given & s_strfields[f].bit) && strcmp(a, b) != 0)
            return gimpi_fail(err, errsize, "host %s named again with %s=%s, but %s=%s before",
                              h->info.name, s_strfields[f].key, s_short(b).s, s_strfields[f].key,
                              s_short(a).s);
    }
    if ((h->given & n->given & OPT_SP) && h->info.speed != n->info.speed)
        return gimpi_fail(err, errsize, "host %s named again with sp=%d, but sp=%d before",
                          h->info.name, n->info.speed, h->info.speed);
    if (h->info.slots + n->info.slots > GIMPI_HOSTSET_MAX_SLOTS)
        return gimpi_fail(err, errsize, "host %s would have %d slots, more than %d", h->info.name,
                          h->info.slots + n->info.slots, GIMPI_HOSTSET_MAX_SLOTS);
    s_take_given(h, n);
    h->info.slots += n->info.slots;
    return 0;
}

/*  One hostfile line (gimpi_hostset.h). */
int gimpi_hostset_add_line(gimpi_hostset_t *self, const char *line, char *err, size_t errsize)
{
    assert(self);
    s_line_t ln;
    if (s_parse_line(self, line, &ln, err, errsize) < 0 || s_apply(self, &ln, err, errsize) < 0)
        return -1;
    return ln.what == LINE_HOST;
}

/*  Parses one -H entry ("host", "host:N", "[v6]:N", bare IPv6) into ln. */
static int s_parse_entry(gimpi_hostset_t *self, const char *ent, size_t len, s_line_t *ln,
                         char *err, size_t errsize)
{
    char buf[300];
    if (len >= sizeof buf)
        return gimpi_fail(err, errsize, "longer than %zu characters", sizeof buf - 1);
    memcpy(buf, ent, len);
    buf[len] = '\0';
    memset(ln, 0, sizeof *ln);
    ln->e = self->defaults;
    ln->e.given = 0;
    ln->what = LINE_HOST;
    char *colon = NULL;
    if (buf[0] == '[') {
        char *close = strchr(buf, ']');
        if (close && close[1] == ':')
            colon = close + 1;
        else if (!close || close[1])
            return gimpi_fail(err, errsize, "expected [IPv6] or [IPv6]:slots");
    } else if ((colon = strchr(buf, ':')) && strchr(colon + 1, ':')) {
        colon = NULL;           /* a bare IPv6 address: no slots */
    }
    if (colon) {
        *colon = '\0';
        long v;
        if (!s_number(colon + 1, strlen(colon + 1), 1, GIMPI_HOSTSET_MAX_SLOTS, &v))
            return gimpi_fail(err, errsize, "slots after ':' must be a whole number from 1 to %d",
                              GIMPI_HOSTSET_MAX_SLOTS);
        ln->e.info.slots = (int)v;
        ln->e.given |= OPT_SLOTS;
    }
    return s_hostname(buf, ln->e.info.name, sizeof ln->e.info.name, "host name", err, errsize);
}

/*  A -H list (gimpi_hostset.h). */
int gimpi_hostset_add_list(gimpi_hostset_t *self, const char *list, char *err, size_t errsize)
{
    assert(self);
    if (!list || !*list)
        return gimpi_fail(err, errsize, "empty host list");
    s_snap_t snap = s_snap_take(self);
    if (!snap.ok)
        return gimpi_fail(err, errsize, "out of memory");
    int count = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        char msg[GIMPI_HOSTSET_ERRLEN];
        s_line_t ln;
        if (len == 0) {
            s_snap_end(self, &snap, true);
            return gimpi_fail(err, errsize, "empty entry %d in host list '%s'", count + 1,
                              s_short(list).s);
        }
        if (s_parse_entry(self, p, len, &ln, msg, sizeof msg) < 0
            || s_apply(self, &ln, msg, sizeof msg) < 0) {
            s_snap_end(self, &snap, true);
            return gimpi_fail(err, errsize, "host list entry %d ('%.*s'): %s", count + 1,
                              (int)(len < 60 ? len : 60), p, msg);
        }
        count++;
        if (!end)
            break;
        p = end + 1;
    }
    s_snap_end(self, &snap, false);
    return count;
}

/*  Reads one line of f into buf (without its newline).  Returns its length, -1 at the end
 *  of the file, -2 for a line longer than GIMPI_HOSTSET_MAX_LINE, -3 for a NUL byte (the
 *  rest of such a line is read and dropped). */
static int s_read_line(FILE *f, char *buf)
{
    int c, len = 0;
    bool any = false, nul = false, longer = false;
    while ((c = getc(f)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        if (c == '\0')
            nul = true;
        else if (len < GIMPI_HOSTSET_MAX_LINE)
            buf[len++] = (char)c;
        else
            longer = true;
    }
    buf[len] = '\0';
    if (!any)
        return -1;
    return longer ? -2 : nul ? -3 : len;
}

/*  A hostfile (gimpi_hostset.h). */
int gimpi_hostset_add_file(gimpi_hostset_t *self, const char *path, char *err, size_t errsize)
{
    assert(self);
    if (!path || !*path)
        return gimpi_fail(err, errsize, "no hostfile named");
    FILE *f = fopen(path, "re");
    if (!f)
        return gimpi_fail(err, errsize, "%s: %s", path, strerror(errno));
    s_snap_t snap = s_snap_take(self);
    if (!snap.ok) {
        fclose(f);
        return gimpi_fail(err, errsize, "out of memory");
    }
    char *buf = malloc(GIMPI_HOSTSET_MAX_LINE + 1);
    int hosts = 0, lineno = 0, rc = 0, len;
    char msg[GIMPI_HOSTSET_ERRLEN];
    while (buf && (len = s_read_line(f, buf)) != -1) {
        lineno++;
        if (len == -2)
            rc = gimpi_fail(msg, sizeof msg, "line longer than %d characters",
                            GIMPI_HOSTSET_MAX_LINE);
        else if (len == -3)
            rc = gimpi_fail(msg, sizeof msg, "NUL byte in the line");
        else
            rc = gimpi_hostset_add_line(self, buf, msg, sizeof msg);
        if (rc < 0)
            break;
        hosts += rc;
    }
    if (!buf)
        rc = gimpi_fail(err, errsize, "out of memory");
    else if (rc < 0)
        gimpi_fail(err, errsize, "%s:%d: %s", path, lineno, msg);
    else if (ferror(f))
        rc = gimpi_fail(err, errsize, "%s: %s", path, strerror(errno ? errno : EIO));
    free(buf);
    fclose(f);
    s_snap_end(self, &snap, rc < 0);
    return rc < 0 ? -1 : hosts;
}

/*  Slurm's hostlist syntax: a growing list of expanded names. */
typedef struct {
    char (*names)[256];
    int n, cap;
} s_names_t;

/*  One bracket group of a hostlist element, expanded: its numbers and their widths. */
typedef struct {
    long *vals;
    int *widths;
    int n;
} s_group_t;

/*  Expands the bracket group text g[0..len) ("01-03,7") into grp; at most limit numbers.
 *  The first pass checks and counts, so that nothing is allocated for an enormous range;
 *  the second fills in. */
static int s_group(const char *var, const char *g, size_t len, long limit, s_group_t *grp,
                   char *err, size_t errsize)
{
    long count = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            grp->vals = malloc((size_t)count * sizeof *grp->vals);
            grp->widths = malloc((size_t)count * sizeof *grp->widths);
            if (!grp->vals || !grp->widths)
                return gimpi_fail(err, errsize, "out of memory");
        }
        for (size_t i = 0; i <= len;) {
            size_t j = i;
            while (j < len && g[j] != ',')
                j++;
            const char *dash = memchr(g + i, '-', j - i);
            size_t lolen = dash ? (size_t)(dash - (g + i)) : j - i;
            long lo = 0, hi = 0;
            if (!s_number(g + i, lolen, 0, 999999999, &lo)
                || (dash && !s_number(dash + 1, (size_t)(g + j - dash - 1), 0, 999999999, &hi)))
                return gimpi_fail(err, errsize, "%s: bad range '%.*s' in '[%.*s]' (numbers of at "
                                  "most %d digits, lo-hi)", var, (int)(j - i > 40 ? 40 : j - i),
                                  g + i, (int)(len > 60 ? 60 : len), g, S_MAX_DIGITS);
            if (!dash)
                hi = lo;
            if (hi < lo)
                return gimpi_fail(err, errsize, "%s: range '%.*s' runs backwards", var,
                                  (int)(j - i), g + i);
            if (pass == 0 && hi - lo + 1 > limit - count)
                return gimpi_fail(err, errsize, "%s: '[%.*s]' expands to more than %d hosts", var,
                                  (int)(len > 60 ? 60 : len), g, GIMPI_HOSTSET_MAX_HOSTS);
            for (long v = lo; pass == 1 && v <= hi; v++) {
                grp->vals[grp->n] = v;
                grp->widths[grp->n++] = (int)lolen;     /* zero padding as the low end has it */
            }
            count += pass == 0 ? hi - lo + 1 : 0;
            i = j + 1;
        }
    }
    return 0;
}

/*  Appends the names of one hostlist element e[0..len) ("rack[1-2]-n[3-4]") to out:
 *  every combination, the first group varying slowest. */
static int s_element(const char *var, const char *e, size_t len, s_names_t *out, char *err,
                     size_t errsize)
{
    const char *lit[S_MAX_GROUPS + 1];          /* literal text before each group, and after */
    size_t litlen[S_MAX_GROUPS + 1];
    s_group_t grp[S_MAX_GROUPS];
    int ng = 0, rc = 0;
    long combos = 1, limit = GIMPI_HOSTSET_MAX_HOSTS - out->n;
    size_t i = 0;
    memset(grp, 0, sizeof grp);
    if (len == 0)
        return gimpi_fail(err, errsize, "%s: empty host name", var);
    for (;;) {
        const char *open = memchr(e + i, '[', len - i);
        size_t stop = open ? (size_t)(open - e) : len;
        lit[ng] = e + i;
        litlen[ng] = stop - i;
        if (!open)
            break;
        const char *close = memchr(open, ']', len - stop);
        if (ng == S_MAX_GROUPS) {
            rc = gimpi_fail(err, errsize, "%s: more than %d bracket groups in one name", var,
                            S_MAX_GROUPS);
            goto done;
        }
        /* (the caller has checked that brackets pair up and do not nest) */
        if (s_group(var, open + 1, (size_t)(close - open - 1), limit, &grp[ng], err, errsize) < 0) {
            ng++;
            rc = -1;
            goto done;
        }
        if (combos * grp[ng].n > limit) {
            ng++;
            rc = gimpi_fail(err, errsize, "%s: '%.*s' expands to more than %d hosts", var,
                            (int)(len > 60 ? 60 : len), e, GIMPI_HOSTSET_MAX_HOSTS);
            goto done;
        }
        combos *= grp[ng].n;
        ng++;
        i = (size_t)(close - e) + 1;
    }
    if (combos > limit) {
        rc = gimpi_fail(err, errsize, "%s: more than %d hosts", var, GIMPI_HOSTSET_MAX_HOSTS);
        goto done;
    }
    if (out->n + combos > out->cap) {
        int cap = out->n + (int)combos;
        if (cap < 2 * out->cap)
            cap = 2 * out->cap < GIMPI_HOSTSET_MAX_HOSTS ? 2 * out->cap : GIMPI_HOSTSET_MAX_HOSTS;
        void *names = realloc(out->names, (size_t)cap * sizeof *out->names);
        if (!names) {
            rc = gimpi_fail(err, errsize, "out of memory");
            goto done;
        }
        out->names = names;
        out->cap = cap;
    }
    int idx[S_MAX_GROUPS] = { 0 };
    for (long c = 0; c < combos; c++) {
        char name[sizeof out->names[0]], msg[GIMPI_HOSTSET_ERRLEN];
        size_t n = 0;
        bool toolong = false;
        for (int g = 0; g <= ng && !toolong; g++) {
            toolong = n + litlen[g] >= sizeof name;
            if (toolong)
                break;
            memcpy(name + n, lit[g], litlen[g]);
            n += litlen[g];
            if (g < ng) {
                int w = snprintf(name + n, sizeof name - n, "%0*ld", grp[g].widths[idx[g]],
                                 grp[g].vals[idx[g]]);
                toolong = n + (size_t)w >= sizeof name;
                n += toolong ? 0 : (size_t)w;
            }
        }
        name[n] = '\0';
        if (toolong) {
            rc = gimpi_fail(err, errsize, "%s: a name made from '%s' is longer than %zu characters",
                            var, s_short(e).s, sizeof name - 1);
            goto done;
        }
        if (s_hostname(name, out->names[out->n], sizeof out->names[out->n], "host name", msg,
                       sizeof msg) < 0) {
            rc = gimpi_fail(err, errsize, "%s: %s", var, msg);
            goto done;
        }
        out->n++;
        for (int g = ng - 1; g >= 0; g--) {     /* odometer: the last group turns fastest */
            if (++idx[g] < grp[g].n)
                break;
            idx[g] = 0;
        }
    }
done:
    for (int g = 0; g < ng; g++) {
        free(grp[g].vals);
        free(grp[g].widths);
    }
    return rc;
}

/*  Expands a whole Slurm hostlist ("node[01-03,7],gpu5") into out. */
static int s_hostlist(const char *var, const char *list, s_names_t *out, char *err, size_t errsize)
{
    size_t len = strnlen(list, S_MAX_SLURM_TEXT + 1);
    if (len > S_MAX_SLURM_TEXT)
        return gimpi_fail(err, errsize, "%s is longer than %d characters", var, S_MAX_SLURM_TEXT);
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = list[i];
        if (c == '[') {
            if (depth++)
                return gimpi_fail(err, errsize, "%s: nested '[' in '%s'", var,
                                  s_short(list + start).s);
        } else if (c == ']') {
            if (!depth--)
                return gimpi_fail(err, errsize, "%s: ']' without '[' in '%s'", var,
                                  s_short(list + start).s);
        } else if ((c == ',' && !depth) || c == '\0') {
            if (depth)
                return gimpi_fail(err, errsize, "%s: unterminated '[' in '%s'", var,
                                  s_short(list + start).s);
            if (s_element(var, list + start, i - start, out, err, errsize) < 0)
                return -1;
            start = i + 1;
        }
    }
    return 0;
}

/*  Slurm's per-node counts ("2(x3),1") for exactly n nodes into counts. */
static int s_slurm_counts(const char *var, const char *s, int n, int *counts, char *err,
                          size_t errsize)
{
    int k = 0;
    const char *p = s;
    for (;;) {
        size_t d = strspn(p, "0123456789");
        long c, rep = 1;
        if (!s_number(p, d, 1, GIMPI_HOSTSET_MAX_SLOTS, &c))
            return gimpi_fail(err, errsize,
                              "%s='%s': expected counts like 2(x3),1 (each from 1 to %d)",
                              var, s_short(s).s, GIMPI_HOSTSET_MAX_SLOTS);
        p += d;
        if (p[0] == '(') {
            size_t r = p[1] == 'x' ? strspn(p + 2, "0123456789") : 0;
            if (p[1] != 'x' || !s_number(p + 2, r, 1, GIMPI_HOSTSET_MAX_HOSTS, &rep) || p[2 + r] != ')')
                return gimpi_fail(err, errsize, "%s='%s': bad repeat, expected N(xM)", var,
                                  s_short(s).s);
            p += 3 + r;
        }
        if (rep > n - k)
            return gimpi_fail(err, errsize,
                              "%s='%s' counts more nodes than the %d of the allocation",
                              var, s_short(s).s, n);
        while (rep--)
            counts[k++] = (int)c;
        if (*p == '\0')
            break;
        if (*p++ != ',')
            return gimpi_fail(err, errsize, "%s='%s': expected ',' after a count", var,
                              s_short(s).s);
    }
    if (k != n)
        return gimpi_fail(err, errsize, "%s='%s' counts %d nodes, the allocation has %d", var,
                          s_short(s).s, k, n);
    return 0;
}

/*  getenv, in the shape of a lookup callback. */
static const char *s_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/*  The Slurm allocation (gimpi_hostset.h). */
int gimpi_hostset_add_slurm(gimpi_hostset_t *self, gimpi_hostset_getenv_fn *get, void *arg,
                            char *err, size_t errsize)
{
    assert(self);
    if (!get)
        get = s_getenv;
    const char *var = "SLURM_JOB_NODELIST", *list = get(var, arg);
    if (!list || !*list) {
        var = "SLURM_NODELIST";
        list = get(var, arg);
    }
    if (!list || !*list)
        return 0;
    s_names_t names = { 0 };
    int *counts = NULL, rc = s_hostlist(var, list, &names, err, errsize);
    if (rc == 0 && names.n == 0)
        rc = gimpi_fail(err, errsize, "%s names no host", var);
    if (rc == 0 && !(counts = malloc((size_t)names.n * sizeof *counts)))
        rc = gimpi_fail(err, errsize, "out of memory");
    if (rc == 0) {
        const char *cvar = "SLURM_TASKS_PER_NODE", *cs = get(cvar, arg);
        if (!cs || !*cs) {
            cvar = "SLURM_JOB_CPUS_PER_NODE";
            cs = get(cvar, arg);
        }
        if (cs && *cs) {
            if (strnlen(cs, S_MAX_SLURM_TEXT + 1) > S_MAX_SLURM_TEXT)
                rc = gimpi_fail(err, errsize, "%s is longer than %d characters", cvar,
                                S_MAX_SLURM_TEXT);
            else
                rc = s_slurm_counts(cvar, cs, names.n, counts, err, errsize);
        } else {
            for (int i = 0; i < names.n; i++)
                counts[i] = 1;
        }
    }
    if (rc == 0) {
        s_snap_t snap = s_snap_take(self);
        if (!snap.ok)
            rc = gimpi_fail(err, errsize, "out of memory");
        char msg[GIMPI_HOSTSET_ERRLEN];
        for (int i = 0; rc == 0 && i < names.n; i++) {
            s_line_t ln = { .what = LINE_HOST, .e = self->defaults };
            ln.e.given = OPT_SLOTS;
            snprintf(ln.e.info.name, sizeof ln.e.info.name, "%s", names.names[i]);
            ln.e.info.slots = counts[i];
            if (s_apply(self, &ln, msg, sizeof msg) < 0)
                rc = gimpi_fail(err, errsize, "%s: %s", var, msg);
        }
        if (snap.ok)
            s_snap_end(self, &snap, rc < 0);
    }
    free(names.names);
    free(counts);
    return rc < 0 ? -1 : names.n;
}

/*  Places n tasks in slot order (gimpi_hostset.h). */
int gimpi_hostset_place(gimpi_hostset_t *self, int n, int start, int *out)
{
    assert(self);
    int total = gimpi_hostset_total_slots(self);
    if (n < 0 || start < 0 || total == 0 || (n > 0 && !out))
        return -1;
    int pos = start % total, h = 0;
    for (;; h++) {                      /* the host of slot pos, and the offset in it */
        if (self->hosts[h].info.later)
            continue;
        if (pos < self->hosts[h].info.slots)
            break;
        pos -= self->hosts[h].info.slots;
    }
    for (int k = 0; k < n; k++) {
        out[k] = h;
        if (++pos == self->hosts[h].info.slots) {
            pos = 0;
            do
                h = (h + 1) % self->size;
            while (self->hosts[h].info.later);
        }
    }
    return n;
}

/*  Parses "a.b.c.d/len" into a network and its mask (host order). */
static bool s_cidr(const char *spec, uint32_t *net, uint32_t *mask)
{
    const char *slash = strchr(spec, '/');
    char buf[INET_ADDRSTRLEN];
    long len;
    struct in_addr a;
    if (!slash || (size_t)(slash - spec) >= sizeof buf
        || !s_number(slash + 1, strlen(slash + 1), 0, 32, &len))
        return false;
    memcpy(buf, spec, (size_t)(slash - spec));
    buf[slash - spec] = '\0';
    if (inet_pton(AF_INET, buf, &a) != 1)
        return false;
    *mask = len ? 0xffffffffu << (32 - len) : 0;
    *net = ntohl(a.s_addr) & *mask;
    return true;
}

/*  The local address for -if (gimpi_hostset.h). */
int gimpi_hostset_if_addr(const char *spec, char *addr, size_t size, char *err, size_t errsize)
{
    if (!spec || !*spec)
        return gimpi_fail(err, errsize, "-if needs an interface name or a network a.b.c.d/len");
    if (!addr || size < INET_ADDRSTRLEN)
        return gimpi_fail(err, errsize, "no room for an address");
    uint32_t net = 0, mask = 0xffffffffu;
    struct in_addr one;
    enum { BY_NAME, BY_NET } mode = BY_NAME;
    if (strchr(spec, '/')) {
        if (!s_cidr(spec, &net, &mask))
            return gimpi_fail(err, errsize,
                              "-if %s: not a network (expected a.b.c.d/len, len 0..32)",
                              s_short(spec).s);
        mode = BY_NET;
    } else if (inet_pton(AF_INET, spec, &one) == 1) {
        net = ntohl(one.s_addr);
        mode = BY_NET;
    } else if (strlen(spec) >= IFNAMSIZ) {
        return gimpi_fail(err, errsize, "-if %s: no such interface (names are shorter than %d)",
                          s_short(spec).s, IFNAMSIZ);
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return gimpi_fail(err, errsize, "-if %s: cannot list the interfaces: %s", spec,
                          strerror(errno));
    bool seen = false, down = false, found = false;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (mode == BY_NAME && strcmp(i->ifa_name, spec) != 0)
            continue;
        seen = true;
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        if (!(i->ifa_flags & IFF_UP)) {
            down = true;
            continue;
        }
        struct in_addr a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        if (mode == BY_NET && (ntohl(a.s_addr) & mask) != net)
            continue;
        found = inet_ntop(AF_INET, &a, addr, (socklen_t)size) != NULL;
    }
    freeifaddrs(ifs);
    if (found)
        return 0;
    if (mode == BY_NET)
        return gimpi_fail(err, errsize, "-if %s: no interface of this machine that is up has an "
                          "IPv4 address %s", spec,
                          strchr(spec, '/') ? "in that network" : "equal to it");
    if (!seen)
        return gimpi_fail(err, errsize, "-if %s: no such interface on this machine", spec);
    if (down)
        return gimpi_fail(err, errsize, "-if %s: the interface is down", spec);
    return gimpi_fail(err, errsize, "-if %s: the interface has no IPv4 address", spec);
}

/*  True when the address sa is a loopback address or one of the interfaces in ifs. */
static bool s_addr_local(const struct sockaddr *sa, const struct ifaddrs *ifs)
{
    if (sa->sa_family == AF_INET) {
        const struct in_addr *a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
        if ((ntohl(a->s_addr) >> 24) == 127)
            return true;
        for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET
                && ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr == a->s_addr)
                return true;
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return true;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            struct sockaddr_in v4 = { .sin_family = AF_INET };
            memcpy(&v4.sin_addr, &a->s6_addr[12], 4);
            return s_addr_local((const struct sockaddr *)&v4, ifs);
        }
        for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET6
                && memcmp(&((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr, a,
                          sizeof *a) == 0)
                return true;
    }
    return false;
}

/*  A name resolution shared by the caller and the thread that runs it: whoever of the two
 *  finishes last frees it, so that a caller who stops waiting leaves nothing behind. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    int refs;                   /* 2 while both hold it */
    bool done;
    struct addrinfo *res;
    char name[256];
} s_lookup_t;

/*  Drops one holder's reference; the last one frees the lookup and any unclaimed result. */
static void s_lookup_unref(s_lookup_t *l)
{
    pthread_mutex_lock(&l->lock);
    bool last = --l->refs == 0;
    pthread_mutex_unlock(&l->lock);
    if (last) {
        if (l->res)
            freeaddrinfo(l->res);
        pthread_cond_destroy(&l->done_cv);
        pthread_mutex_destroy(&l->lock);
        free(l);
    }
}

/*  The resolving thread: getaddrinfo, then the result for the caller (if still there). */
static void *s_lookup_run(void *arg)
{
    s_lookup_t *l = arg;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    if (getaddrinfo(l->name, NULL, &hints, &res) != 0)
        res = NULL;
    pthread_mutex_lock(&l->lock);
    l->res = res;
    l->done = true;
    pthread_cond_signal(&l->done_cv);
    pthread_mutex_unlock(&l->lock);
    s_lookup_unref(l);
    return NULL;
}

/*  Resolves name with getaddrinfo in a detached thread and waits at most ms for it.
 *  Returns the addresses (freeaddrinfo them) or NULL (unknown, or too slow). */
static struct addrinfo *s_resolve(const char *name, int ms)
{
    s_lookup_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&l->lock, NULL);
    l->refs = 2;
    snprintf(l->name, sizeof l->name, "%s", name);
    pthread_attr_t ta;
    pthread_t th;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &ta, s_lookup_run, l);
    pthread_attr_destroy(&ta);
    if (rc != 0) {
        l->refs = 1;
        s_lookup_unref(l);
        return NULL;
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L)
        end.tv_sec++, end.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&l->lock);
    while (!l->done && pthread_cond_timedwait(&l->done_cv, &l->lock, &end) != ETIMEDOUT)
        ;
    struct addrinfo *res = l->res;      /* claimed: the last holder frees only what is left */
    l->res = NULL;
    pthread_mutex_unlock(&l->lock);
    s_lookup_unref(l);
    return res;
}

/*  Is this host name or address this machine (gimpi_hostset.h). */
bool gimpi_hostset_is_local(const char *name)
{
    char bare[256];
    if (!name || !*name || s_hostname(name, bare, sizeof bare, "host", NULL, 0) < 0)
        return false;
    if (strcasecmp(bare, "localhost") == 0)
        return true;
    char me[256] = "";
    if (gethostname(me, sizeof me - 1) == 0 && me[0]) {
        size_t dot = strcspn(me, ".");
        if (strcasecmp(bare, me) == 0 || (!strchr(bare, '.') && strlen(bare) == dot
                                          && strncasecmp(bare, me, dot) == 0))
            return true;
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        ifs = NULL;
    bool local = false;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICHOST };
    struct addrinfo *res = NULL;
    if (getaddrinfo(bare, NULL, &hints, &res) != 0)
        res = s_resolve(bare, GIMPI_HOSTSET_RESOLVE_MS);
    for (struct addrinfo *a = res; a && !local; a = a->ai_next)
        local = s_addr_local(a->ai_addr, ifs);
    if (res)
        freeaddrinfo(res);
    if (ifs)
        freeifaddrs(ifs);
    return local;
}

/*  The local address of a route to dest. */
int gimpi_hostset_route_addr(const char *dest, char *addr, size_t size)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
    if (!dest || inet_pton(AF_INET, dest, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof sa;
    int rc = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0
             && getsockname(fd, (struct sockaddr *)&sa, &len) == 0 ? 0 : -1;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && !inet_ntop(AF_INET, &sa.sin_addr, addr, (socklen_t)size))
        rc = -1;
    return rc;
}
