/*  srvtest.c — server spawning and raw IMPI client helpers for the impi-server tests
 *  (see srvtest.h).  Every read has a deadline; nothing sleeps.
 */
#include "srvtest.h"
#include "base/gimpi_key.h"
#include "server/impi_server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*  Spawns the server and reads its endpoint. */
int st_start(st_server_t *srv, ...)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)tl_prog("programs/impi-server");
    argv[n++] = "-host";
    argv[n++] = "127.0.0.1";
    va_list ap;
    va_start(ap, srv);
    char *a;
    while ((a = va_arg(ap, char *)) != NULL && n < 31)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    memset(srv, 0, sizeof *srv);
    if (tl_spawn(argv, &srv->child) < 0)
        return -1;
    if (tl_read_line(srv->child.out, srv->endpoint, sizeof srv->endpoint, ST_TIMEOUT_MS) < 0 ||
        tl_parse_addr(srv->endpoint, srv->host, sizeof srv->host, &srv->port) < 0) {
        tl_wait(&srv->child, 1000);
        tl_child_close(&srv->child);
        return -1;
    }
    return 0;
}

/*  Exit code of the server, bounded wait. */
int st_finish(st_server_t *srv)
{
    int status = tl_wait(&srv->child, ST_TIMEOUT_MS);
    tl_child_close(&srv->child);
    if (status < 0 || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/*  One stderr line. */
int st_errline(st_server_t *srv, char *buf, size_t size)
{
    return tl_read_line(srv->child.err, buf, size, ST_TIMEOUT_MS);
}

/*  Stderr lines until one contains needle. */
int st_expect_err(st_server_t *srv, const char *needle, char *buf, size_t size)
{
    while (st_errline(srv, buf, size) >= 0) {
        if (strstr(buf, needle))
            return 0;
    }
    buf[0] = '\0';
    return -1;
}

/*  A client socket. */
int st_connect(st_server_t *srv)
{
    return tl_connect(srv->host, srv->port);
}

/*  Header + payload. */
int st_send_cmd(int fd, int32_t cmd, const void *payload, uint32_t len)
{
    uint8_t hdr[IMPI_CMD_HDR_SIZE];
    impi_cmd_encode(hdr, cmd, len);
    if (tl_send_all(fd, hdr, sizeof hdr) < 0)
        return -1;
    return len ? tl_send_all(fd, payload, len) : 0;
}

/*  AUTH exchange. */
int st_auth(int fd, uint32_t mask, uint64_t key)
{
    uint8_t m[IMPI_CMD_INT4_SIZE], reply[IMPI_AUTH_REPLY_SIZE];
    impi_cmd_int4_encode(m, IMPI_CMD_AUTH, (int32_t)mask);
    if (tl_send_all(fd, m, sizeof m) < 0)
        return -1;
    if (tl_recv_exact(fd, reply, sizeof reply, ST_TIMEOUT_MS) != (long)sizeof reply)
        return -1;
    int32_t which, len;
    if (impi_auth_reply_decode(reply, &which, &len) != IMPI_OK)
        return -1;
    if (which == IMPI_AUTH_KEY) {
        uint8_t k[IMPI_AUTH_KEY_SIZE];
        impi_auth_key_encode(k, key);
        if (len != IMPI_AUTH_KEY_SIZE || tl_send_all(fd, k, sizeof k) < 0)
            return -1;
    } else if (which == IMPI_AUTH_GIMPI) {
        /* the challenge, answered under the user's key (as libgimpi's client does) */
        uint8_t nonce[IMPI_AUTH_NONCE_SIZE], mac[IMPI_AUTH_PROOF_SIZE];
        gimpi_key_t gk;
        char err[GIMPI_KEY_ERRLEN];
        if (len != IMPI_AUTH_PROOF_SIZE
            || tl_recv_exact(fd, nonce, sizeof nonce, ST_TIMEOUT_MS) != (long)sizeof nonce
            || gimpi_key_default(&gk, NULL, 0, err, sizeof err) < 0)
            return -1;
        gimpi_key_mac(&gk, IMPI_AUTH_PROOF_CONTEXT, nonce, sizeof nonce, mac);
        if (tl_send_all(fd, mac, sizeof mac) < 0)
            return -1;
    } else if (len != 0) {
        return -1;
    }
    return which;
}

/*  IMPI join. */
int st_join(int fd, int32_t rank)
{
    uint8_t r[IMPI_CMD_INT4_SIZE];
    impi_cmd_int4_encode(r, IMPI_CMD_IMPI, rank);
    return tl_send_all(fd, r, sizeof r);
}

/*  One command from the server. */
int st_recv_cmd(int fd, impi_cmd_t *cmd, uint8_t **payload)
{
    uint8_t hdr[IMPI_CMD_HDR_SIZE];
    *payload = NULL;
    if (tl_recv_exact(fd, hdr, sizeof hdr, ST_TIMEOUT_MS) != (long)sizeof hdr)
        return -1;
    if (impi_cmd_decode(hdr, IMPI_MAX_REPLY_PAYLOAD, cmd) != IMPI_OK)
        return -1;
    if (cmd->len == 0)
        return 0;
    *payload = malloc(cmd->len);
    if (!*payload || tl_recv_exact(fd, *payload, cmd->len, ST_TIMEOUT_MS) != (long)cmd->len) {
        free(*payload);
        *payload = NULL;
        return -1;
    }
    return 0;
}

/*  IMPI reply: the client count. */
int st_recv_impi(int fd)
{
    impi_cmd_t cmd;
    uint8_t *p;
    if (st_recv_cmd(fd, &cmd, &p) < 0)
        return -1;
    int n = cmd.cmd == IMPI_CMD_IMPI && cmd.len == 4 ? (int)impi_cmd_int4_decode(p) : -1;
    free(p);
    return n;
}

/*  COLL label + data. */
int st_coll(int fd, int32_t label, const void *data, uint32_t len)
{
    uint8_t *buf = malloc(4 + (size_t)len);
    if (!buf)
        return -1;
    gimpi_be_put32(buf, (uint32_t)label);
    if (len)
        memcpy(buf + 4, data, len);
    int rc = st_send_cmd(fd, IMPI_CMD_COLL, buf, 4 + len);
    free(buf);
    return rc;
}

/*  A COLL reply. */
int st_recv_coll(int fd, impi_coll_reply_t *reply, uint8_t **raw)
{
    impi_cmd_t cmd;
    if (st_recv_cmd(fd, &cmd, raw) < 0)
        return -1;
    if (cmd.cmd != IMPI_CMD_COLL || impi_coll_reply_decode(*raw, cmd.len, reply) != IMPI_OK) {
        free(*raw);
        *raw = NULL;
        return -1;
    }
    return 0;
}

/*  Exactly these bytes. */
int st_recv_bytes(int fd, const uint8_t *want, size_t len)
{
    uint8_t *got = malloc(len);
    if (!got)
        return 0;
    int same = tl_recv_exact(fd, got, len, ST_TIMEOUT_MS) == (long)len && memcmp(got, want, len) == 0;
    free(got);
    return same;
}

/*  DONE reply. */
int st_recv_done(int fd)
{
    impi_cmd_t cmd;
    uint8_t *p;
    if (st_recv_cmd(fd, &cmd, &p) < 0)
        return -1;
    free(p);
    return cmd.cmd == IMPI_CMD_DONE && cmd.len == 0 ? 0 : -1;
}

/*  Connected, authenticated (NONE) and joined. */
int st_client(st_server_t *srv, int32_t rank)
{
    int fd = st_connect(srv);
    if (fd < 0)
        return -1;
    if (st_auth(fd, 1u << IMPI_AUTH_NONE, 0) != IMPI_AUTH_NONE || st_join(fd, rank) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*  A real client: libgimpi's impi_client through the whole startup and FINI. */
int st_real_client(const char *server, int rank, uint32_t mask, uint64_t key, int timeout_ms,
                   char *err, size_t errsize)
{
    impi_desc_host_t host = { .port = 2000 + rank, .nprocs = 1, .ackmark = 10, .hiwater = 40 };
    impi_addr16_from_ipv4(host.addr, 0x7f000001);
    impi_proc_t proc = { .pid = 100000 + rank };
    memcpy(proc.hostid, host.addr, 16);
    impi_desc_t desc = { .rank = rank, .nversions = 1, .datalen = 4000, .tagub = 0x7fffffff,
                         .xsize = -1, .maxlinear = -1, .nhosts = 1, .hosts = &host,
                         .nprocs = 1, .procs = &proc };
    impi_client_t *cl = impi_client_new(server, timeout_ms);
    if (!cl) {
        snprintf(err, errsize, "out of memory");
        return IMPI_CLIENT_ERR_IO;
    }
    impi_client_set_auth(cl, mask, key);
    int rc = impi_client_start(cl, &desc, err, errsize);
    if (rc == IMPI_CLIENT_OK)
        rc = impi_client_fini(cl, err, errsize);
    impi_client_destroy(&cl);
    return rc;
}

/*  Thread body: runs an embedded server. */
void *st_run_server(void *arg)
{
    st_runner_t *r = arg;
    r->rc = impi_server_run(r->server);
    return NULL;
}

/*  DONE + DONE reply + FINI for the given clients; closes them. */
int st_done_fini(int *fd, int n)
{
    int good = 0;
    for (int c = 0; c < n; c++)
        st_send_cmd(fd[c], IMPI_CMD_DONE, NULL, 0);
    for (int c = 0; c < n; c++)
        good += st_recv_done(fd[c]) == 0;
    for (int c = 0; c < n; c++) {
        st_send_cmd(fd[c], IMPI_CMD_FINI, NULL, 0);
        tl_wait_closed(fd[c], ST_TIMEOUT_MS);
        close(fd[c]);
    }
    return good == n ? 0 : -1;
}
