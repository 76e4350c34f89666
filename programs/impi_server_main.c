/*  impi_server_main.c — the impi-server program: IMPI's startup rendezvous server with the
 *  standard command line `impi-server -server N [-port P] [-auth none,key,gimpi] [-host ADDR]`
 *  and gimpi's additions (-bind, -handshake, -timeout, -v, -print-key).
 *
 *  It parses IMPI's single-dash options, works out the enabled authentication methods
 *  (from -auth, else from the IMPI_AUTH_NONE / IMPI_AUTH_KEY environment convention, else
 *  GIMPI: a fresh challenge per connection that gimpi's clients answer under the user's
 *  key; the derived KEY, the same for every job, only when -auth key asks for it; a key
 *  never comes from the command line that ps shows), warns when NONE is enabled on an
 *  address other hosts can reach, creates
 *  an impi_server_t, prints the endpoint clients must use ("A.B.C.D:PORT") as the first
 *  line on stdout and serves the job.  Exit status: 0 when all clients sent FINI, 1 when
 *  the job failed, 2 for a bad command line or environment.
 */
#include "server/impi_server.h"
#include "impi/impi_wire.h"
#include "base/gimpi_key.h"
#include "base/gimpi_tunables.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  Prints the usage message on stderr and returns 2. */
static int s_usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "impi-server: %s\n", msg);
    fprintf(stderr,
            "usage: impi-server -server N [-port P] [-auth LIST] [-host ADDR] [-bind ADDR]\n"
            "                   [-handshake S] [-timeout S] [-v]     impi-server -print-key\n"
            "  -server N     number of IMPI clients in the job (1..32)\n"
            "  -port P       TCP port to listen on (default 0: any free port)\n"
            "  -auth LIST    enabled authentication methods, comma-separated: none, key,\n"
            "                gimpi (default: from IMPI_AUTH_NONE / IMPI_AUTH_KEY; when neither\n"
            "                is set, gimpi: gimpi's clients prove your gimpi key afresh; key\n"
            "                without IMPI_AUTH_KEY: the KEY derived from your gimpi key file)\n"
            "  -host ADDR    print this IPv4 address (and, without -bind, listen only on it;\n"
            "                default: listen on all, print the first non-loopback address)\n"
            "  -bind ADDR    listen only on this IPv4 address (0.0.0.0: every interface)\n"
            "  -handshake S  close a connection not joined after S seconds (default %d)\n"
            "  -timeout S    drop a joined client the startup waits on after S silent\n"
            "                seconds (default %d; 0: never)\n"
            "  -v            trace every command on stderr\n"
            "  -print-key    print the derived KEY, signed decimal (for LAM's IMPI_AUTH_KEY)\n"
            "Prints A.B.C.D:PORT on stdout, then serves until every client sent FINI.\n",
            IMPI_SERVER_HANDSHAKE_MS / 1000, IMPI_SERVER_SILENCE_MS / 1000);
    return 2;
}

/*  Parses a decimal integer within [lo, hi]; 0 or -1. */
static int s_parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/*  The IMPI key derived from the user's gimpi key (gimpi_key_impi).  0, or -1 with a
 *  message on stderr. */
static int s_derived_key(uint64_t *key)
{
    gimpi_key_t gk;
    char why[GIMPI_KEY_ERRLEN];
    if (gimpi_key_default(&gk, NULL, 0, why, sizeof why) < 0) {
        fprintf(stderr, "impi-server: no key for authentication KEY: %s (or export "
                "IMPI_AUTH_KEY=<decimal 64-bit key>, or use -auth none)\n", why);
        return -1;
    }
    *key = gimpi_key_impi(&gk);
    gimpi_key_wipe(&gk, sizeof gk);
    return 0;
}
/*  Parses "none,key,gimpi" into a mask; 0 or -1. */
static int s_parse_auth(const char *list, uint32_t *mask)
{
    *mask = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == 4 && strncmp(p, "none", 4) == 0)
            *mask |= IMPI_SERVER_AUTH_NONE;
        else if (n == 3 && strncmp(p, "key", 3) == 0)
            *mask |= IMPI_SERVER_AUTH_KEY;
        else if (n == 5 && strncmp(p, "gimpi", 5) == 0)
            *mask |= IMPI_SERVER_AUTH_GIMPI;
        else
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    return *mask ? 0 : -1;
}

/*  True when addr (dotted IPv4, NULL = every interface) is in 127.0.0.0/8. */
static bool s_is_loopback(const char *addr)
{
    struct in_addr a;
    return addr && inet_pton(AF_INET, addr, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/*  Parses the command line and the environment, then serves one job. */
int main(int argc, char **argv)
{
    long nclients = -1, port = 0;
    long handshake_s = IMPI_SERVER_HANDSHAKE_MS / 1000, silence_s = IMPI_SERVER_SILENCE_MS / 1000;
    const char *auth = NULL, *host = NULL, *bind_addr = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
            s_usage(NULL);
            return 0;
        }
        if (strcmp(a, "-v") == 0) {
            verbose = 1;
            continue;
        }
        if (strcmp(a, "-print-key") == 0) {     /* for IMPI clients of other implementations */
            uint64_t k;
            char text[21];
            if (s_derived_key(&k) < 0)
                return 2;
            /* signed: LAM reads IMPI_AUTH_KEY with atoll(), which clamps 2^63 and above */
            printf("%s\n", impi_auth_key_format(k, text));
            return 0;
        }
        if (i + 1 >= argc)
            return s_usage("missing value after an option, or unknown option");
        const char *v = argv[++i];
        if (strcmp(a, "-server") == 0) {
            if (s_parse_int(v, 1, 32, &nclients) < 0)
                return s_usage("-server needs a number of clients in 1..32");
        } else if (strcmp(a, "-port") == 0) {
            if (s_parse_int(v, 0, 65535, &port) < 0)
                return s_usage("-port needs a port number in 0..65535");
        } else if (strcmp(a, "-auth") == 0) {
            auth = v;
        } else if (strcmp(a, "-host") == 0) {
            host = v;
        } else if (strcmp(a, "-bind") == 0) {
            bind_addr = v;
        } else if (strcmp(a, "-handshake") == 0) {
            if (s_parse_int(v, 1, 86400, &handshake_s) < 0)
                return s_usage("-handshake needs a number of seconds in 1..86400");
        } else if (strcmp(a, "-timeout") == 0) {
            if (s_parse_int(v, 0, 86400, &silence_s) < 0)
                return s_usage("-timeout needs a number of seconds in 0..86400");
        } else {
            char msg[128];
            snprintf(msg, sizeof msg, "unknown option '%s'", a);
            return s_usage(msg);
        }
    }
    if (nclients < 0)
        return s_usage("-server N is required");

    uint32_t mask = 0;
    uint64_t key = 0;
    const char *keytext = gimpi_env("IMPI_AUTH_KEY");
    if (auth) {
        if (s_parse_auth(auth, &mask) < 0)
            return s_usage("-auth takes a comma-separated list of: none, key, gimpi");
    } else {
        if (gimpi_env("IMPI_AUTH_NONE"))
            mask |= IMPI_SERVER_AUTH_NONE;
        if (keytext && *keytext)
            mask |= IMPI_SERVER_AUTH_KEY;
        if (!mask)      /* secure by default: a proof of the user's key, new per connection */
            mask = IMPI_SERVER_AUTH_GIMPI;
    }
    if (mask & IMPI_SERVER_AUTH_KEY) {
        if (!keytext || !*keytext) {
            if (s_derived_key(&key) < 0)
                return 2;
        } else if (impi_auth_key_parse(keytext, &key) < 0) {
            fprintf(stderr, "impi-server: IMPI_AUTH_KEY='%s' is not a decimal 64-bit integer\n",
                    keytext);
            return 2;
        }
    }

    struct in_addr shown;
    if (host && bind_addr && inet_pton(AF_INET, host, &shown) != 1) {
        fprintf(stderr, "impi-server: -host '%s' is not a dotted IPv4 address\n", host);
        return 2;
    }
    const char *listen_on = bind_addr ? bind_addr : host;
    impi_server_t *server = impi_server_new((int)nclients, listen_on, (int)port, mask, key,
                                            stderr);
    if (!server)
        return 2;
    impi_server_set_verbose(server, verbose);
    impi_server_set_join_timeout(server, (int)handshake_s * 1000);
    impi_server_set_silence_timeout(server, (int)silence_s * 1000);
    if ((mask & IMPI_SERVER_AUTH_NONE) && !s_is_loopback(listen_on))
        fprintf(stderr, "impi-server: warning: authentication NONE is enabled and the server "
                "listens on %s:%d: anyone who can reach it can take a client's rank and break "
                "the job; export IMPI_AUTH_KEY=<random 64-bit number> for the server and "
                "every client (see impi-server(1))\n", listen_on ? listen_on : "0.0.0.0",
                impi_server_port(server));
    if (host && bind_addr)
        printf("%s:%d\n", host, impi_server_port(server));
    else
        printf("%s\n", impi_server_endpoint(server));
    fflush(stdout);
    int rc = impi_server_run(server);
    impi_server_destroy(&server);
    return rc == 0 ? 0 : 1;
}
