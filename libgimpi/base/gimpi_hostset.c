/*  gimpi_hostset.c — the host set: -H lists, PVM hostfiles and pvm_addhosts lines, and
 *  placement in slot order.  Slurm allocations are read in gimpi_hostset_slurm.c and
 *  the questions about this machine (-if, is this host local) are answered in
 *  gimpi_hostaddr.c; hostset_internal.h has what the three share.
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
#include "base/hostset_internal.h"
#include "base/gimpi_err.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/*  PVM's built-in defaults: one slot, speed 1000, every string empty. */
static void s_builtin(hostset_entry_t *e)
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
hostset_snap_t hostset_snap_take(gimpi_hostset_t *self)
{
    hostset_snap_t snap = { .size = self->size, .defaults = self->defaults, .ok = true };
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
void hostset_snap_end(gimpi_hostset_t *self, hostset_snap_t *snap, bool restore)
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

hostset_short_t hostset_short(const char *tok)
{
    hostset_short_t out;
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

/*  A decimal number of at most HOSTSET_MAX_DIGITS digits in [min, max], the whole of s[0..len). */
bool hostset_number(const char *s, size_t len, long min, long max, long *out)
{
    if (len == 0 || len > HOSTSET_MAX_DIGITS)
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
int hostset_hostname(const char *tok, char *out, size_t outsize, const char *what, char *err,
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
                          hostset_short(tok).s, outsize - 1);
    char name[1024];
    memcpy(name, s, len);
    name[len] = '\0';
    if (strchr(name, ':')) {
        if (!s_ipv6(name))
            return gimpi_fail(err, errsize, "%s '%s' is neither a host name nor an IPv6 address%s",
                              what, hostset_short(tok).s, strchr(name, ':') == strrchr(name, ':')
                                                    ? " (slots are given as slots=N)" : "");
    } else if (!s_namechars(name) || !((name[0] >= 'a' && name[0] <= 'z')
                                       || (name[0] >= 'A' && name[0] <= 'Z')
                                       || (name[0] >= '0' && name[0] <= '9'))) {
        return gimpi_fail(err, errsize, "bad %s '%s': use letters, digits, '.', '-' and '_', "
                          "starting with a letter or digit", what, hostset_short(tok).s);
    }
    memcpy(out, name, len + 1);
    return 0;
}

/*  Checks one option's value and stores it into e. */
static int s_option_value(int o, const char *tok, const char *val, hostset_entry_t *e, char *err,
                          size_t errsize)
{
    size_t len = strlen(val);
    char *field = (char *)&e->info + s_opts[o].off;
    if (len == 0)
        return gimpi_fail(err, errsize, "option '%s' has no value", hostset_short(tok).s);
    switch (s_opts[o].kind) {
    case K_INT: {
        long v;
        if (!hostset_number(val, len, s_opts[o].min, s_opts[o].max, &v))
            return gimpi_fail(err, errsize, "option '%s': %s= takes a whole number from %d to %d",
                              hostset_short(tok).s, s_opts[o].key, s_opts[o].min, s_opts[o].max);
        memcpy(field, &(int){ (int)v }, sizeof(int));
        break;
    }
    case K_HOST:
        if (hostset_hostname(val, field, s_opts[o].size, "ip= address", err, errsize) < 0)
            return -1;
        break;
    case K_LOGIN:
    case K_ARCH:
        if (len >= s_opts[o].size || !s_namechars(val) || val[0] == '-')
            return gimpi_fail(err, errsize, "bad %s= value '%s': at most %zu letters, digits, "
                              "'.', '-' or '_', not starting with '-'", s_opts[o].key,
                              hostset_short(val).s, s_opts[o].size - 1);
        memcpy(field, val, len + 1);
        break;
    case K_PATH:
        if (len >= s_opts[o].size)
            return gimpi_fail(err, errsize, "%s= value '%s' is longer than %zu characters",
                              s_opts[o].key, hostset_short(val).s, s_opts[o].size - 1);
        for (const char *p = val; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return gimpi_fail(err, errsize, "%s= value '%s' holds a control character",
                                  s_opts[o].key, hostset_short(val).s);
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
                          "gimpi supports neither)", hostset_short(val).s);
    case K_IGNORED:
        for (const char *p = val; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return gimpi_fail(err, errsize, "%s= value '%s' holds a control character",
                                  s_opts[o].key, hostset_short(val).s);
        break;
    }
    e->given |= s_opts[o].bit;
    return 0;
}

/*  Parses one "key=value" token into e. */
static int s_option(const char *tok, hostset_entry_t *e, char *err, size_t errsize)
{
    const char *eq = strchr(tok, '=');
    if (!eq)
        return gimpi_fail(err, errsize, "'%s' is not an option: options are KEY=VALUE after the "
                          "host name (one host per line)", hostset_short(tok).s);
    size_t klen = (size_t)(eq - tok);
    for (int o = 0; o < S_NOPTS; o++)
        if (strlen(s_opts[o].key) == klen && strncmp(tok, s_opts[o].key, klen) == 0)
            return s_option_value(o, tok, eq + 1, e, err, errsize);
    return gimpi_fail(err, errsize, "unknown option '%s' (known: lo= wd= ep= dx= ip= sp= slots= "
                      "arch= so= bx= id=)", hostset_short(tok).s);
}

/*  Parses one hostfile line into out (defaults of self under the line's options). */
static int s_parse_line(gimpi_hostset_t *self, const char *line, hostset_line_t *out, char *err,
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
        if (hostset_hostname(tok, out->e.info.name, sizeof out->e.info.name, "host name", err,
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
static void s_take_given(hostset_entry_t *h, const hostset_entry_t *n)
{
    for (int f = 0; f < S_NSTRFIELDS; f++)
        if (n->given & s_strfields[f].bit)
            strcpy((char *)&h->info + s_strfields[f].off, (const char *)&n->info + s_strfields[f].off);
    if (n->given & OPT_SP)
        h->info.speed = n->info.speed;
    h->given |= n->given & ~OPT_SLOTS;
}

/*  Merges a parsed host line into the set (the rules are in the file's head). */
int hostset_apply(gimpi_hostset_t *self, const hostset_line_t *ln, char *err, size_t errsize)
{
    if (ln->what == LINE_DEFAULTS) {
        self->defaults = ln->e;
        return 0;
    }
    if (ln->what != LINE_HOST)
        return 0;
    const hostset_entry_t *n = &ln->e;
    int i = gimpi_hostset_find(self, n->info.name);
    if (i < 0) {
        if (self->size >= GIMPI_HOSTSET_MAX_HOSTS)
            return gimpi_fail(err, errsize, "more than %d hosts (at '%s')", GIMPI_HOSTSET_MAX_HOSTS,
                              n->info.name);
        if (self->size == self->cap) {
            int cap = self->cap ? self->cap * 2 : 16;
            if (cap > GIMPI_HOSTSET_MAX_HOSTS)
                cap = GIMPI_HOSTSET_MAX_HOSTS;
            hostset_entry_t *hosts = realloc(self->hosts, (size_t)cap * sizeof *hosts);
            if (!hosts)
                return gimpi_fail(err, errsize, "out of memory");
            self->hosts = hosts;
            self->cap = cap;
        }
        self->hosts[self->size++] = *n;
        return 0;
    }
    hostset_entry_t *h = &self->hosts[i];
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
                              h->info.name, s_strfields[f].key, hostset_short(b).s,
                              s_strfields[f].key, hostset_short(a).s);
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
    hostset_line_t ln;
    if (s_parse_line(self, line, &ln, err, errsize) < 0
        || hostset_apply(self, &ln, err, errsize) < 0)
        return -1;
    return ln.what == LINE_HOST;
}

/*  Parses one -H entry ("host", "host:N", "[v6]:N", bare IPv6) into ln. */
static int s_parse_entry(gimpi_hostset_t *self, const char *ent, size_t len, hostset_line_t *ln,
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
        if (!hostset_number(colon + 1, strlen(colon + 1), 1, GIMPI_HOSTSET_MAX_SLOTS, &v))
            return gimpi_fail(err, errsize, "slots after ':' must be a whole number from 1 to %d",
                              GIMPI_HOSTSET_MAX_SLOTS);
        ln->e.info.slots = (int)v;
        ln->e.given |= OPT_SLOTS;
    }
    return hostset_hostname(buf, ln->e.info.name, sizeof ln->e.info.name, "host name", err,
                            errsize);
}

/*  A -H list (gimpi_hostset.h). */
int gimpi_hostset_add_list(gimpi_hostset_t *self, const char *list, char *err, size_t errsize)
{
    assert(self);
    if (!list || !*list)
        return gimpi_fail(err, errsize, "empty host list");
    hostset_snap_t snap = hostset_snap_take(self);
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
        hostset_line_t ln;
        if (len == 0) {
            hostset_snap_end(self, &snap, true);
            return gimpi_fail(err, errsize, "empty entry %d in host list '%s'", count + 1,
                              hostset_short(list).s);
        }
        if (s_parse_entry(self, p, len, &ln, msg, sizeof msg) < 0
            || hostset_apply(self, &ln, msg, sizeof msg) < 0) {
            hostset_snap_end(self, &snap, true);
            return gimpi_fail(err, errsize, "host list entry %d ('%.*s'): %s", count + 1,
                              (int)(len < 60 ? len : 60), p, msg);
        }
        count++;
        if (!end)
            break;
        p = end + 1;
    }
    hostset_snap_end(self, &snap, false);
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
    hostset_snap_t snap = hostset_snap_take(self);
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
    hostset_snap_end(self, &snap, rc < 0);
    return rc < 0 ? -1 : hosts;
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
