/*  gimpi_hostaddr.c — the host set's questions about this machine: the address of an
 *  interface or network given with -if, whether a host name or address is this machine
 *  (its names, loopback, the addresses of its interfaces, a name resolved within a
 *  bound: the lookup runs in a thread of its own that the caller stops waiting for), the
 *  local address of the route to a host, and the address that other hosts most likely
 *  reach this machine at when none of them is known yet (a job that may grow).
 */
#include "base/gimpi_hostset.h"
#include "base/hostset_internal.h"
#include "base/gimpi_err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*  Parses "a.b.c.d/len" into a network and its mask (host order). */
static bool s_cidr(const char *spec, uint32_t *net, uint32_t *mask)
{
    const char *slash = strchr(spec, '/');
    char buf[INET_ADDRSTRLEN];
    long len;
    struct in_addr a;
    if (!slash || (size_t)(slash - spec) >= sizeof buf
        || !hostset_number(slash + 1, strlen(slash + 1), 0, 32, &len))
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
                              hostset_short(spec).s);
        mode = BY_NET;
    } else if (inet_pton(AF_INET, spec, &one) == 1) {
        net = ntohl(one.s_addr);
        mode = BY_NET;
    } else if (strlen(spec) >= IFNAMSIZ) {
        return gimpi_fail(err, errsize, "-if %s: no such interface (names are shorter than %d)",
                          hostset_short(spec).s, IFNAMSIZ);
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
    if (!name || !*name || hostset_hostname(name, bare, sizeof bare, "host", NULL, 0) < 0)
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

/*  The IPv4 address of the interface named ifname that is up (dotted text into addr), or
 *  of the first interface that is up and not a loopback one when ifname is NULL.  0 or -1. */
static int s_iface_addr(const char *ifname, char *addr, size_t size)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return -1;
    int rc = -1;
    for (struct ifaddrs *i = ifs; i && rc < 0; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)
            || (i->ifa_flags & IFF_LOOPBACK) || (ifname && strcmp(i->ifa_name, ifname) != 0))
            continue;
        const struct in_addr *a = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
        if ((ntohl(a->s_addr) >> 24) != 127 && inet_ntop(AF_INET, a, addr, (socklen_t)size))
            rc = 0;
    }
    freeifaddrs(ifs);
    return rc;
}

/*  The interface of the default IPv4 route with the lowest metric (/proc/net/route) into
 *  name.  0, or -1 when there is no default route. */
static int s_default_iface(char name[IFNAMSIZ])
{
    FILE *f = fopen("/proc/net/route", "re");
    if (!f)
        return -1;
    char line[256], ifn[IFNAMSIZ + 8];
    unsigned long dest, gw, flags, mask, best = ~0UL;
    int refcnt, use;
    unsigned long metric;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%23s %lx %lx %lx %d %d %lu %lx", ifn, &dest, &gw, &flags, &refcnt, &use,
                   &metric, &mask) == 8
            && dest == 0 && mask == 0 && (flags & 1) && metric < best && strlen(ifn) < IFNAMSIZ) {
            best = metric;                      /* flags & 1: RTF_UP */
            snprintf(name, IFNAMSIZ, "%s", ifn);
        }
    fclose(f);
    return best == ~0UL ? -1 : 0;
}

/*  The address other hosts most likely reach this machine at (gimpi_hostset.h). */
int gimpi_hostset_lan_addr(char *addr, size_t size)
{
    char ifn[IFNAMSIZ];
    if (!addr || size < INET_ADDRSTRLEN)
        return -1;
    if (s_default_iface(ifn) == 0 && s_iface_addr(ifn, addr, size) == 0)
        return 0;
    return s_iface_addr(NULL, addr, size);
}
