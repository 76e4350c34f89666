/*  impi_wire.c — the IMPI codec, generated from the tables in impi_wire.h.
 *
 *  Each function here encodes, decodes, validates or prints one wire structure of IMPI
 *  (command header, raw AUTH reply, IMPI_Proc, COLL payloads and replies, IMPI_Packet).
 *  The rows of the label and packet tables are expanded into static arrays once; every
 *  check consults those rows instead of repeating per-label knowledge.  Decoders take the
 *  bound a length must respect from the caller and refuse anything above it before any
 *  allocation happens — the callers allocate only after a successful decode.
 */
#include "impi/impi_wire.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <inttypes.h>
#include <string.h>

/* ------------------------------------------------------------------ the expanded tables */

#define IMPI_X_LABEL_ROW(name, value, scope, type, size, lo, hi) \
    { value, "IMPI_" #name, IMPI_SCOPE_##scope, IMPI_ELEM_##type, size, lo, hi },
static const impi_label_info_t s_labels[] = { IMPI_LABELS(IMPI_X_LABEL_ROW) };
#undef IMPI_X_LABEL_ROW

#define IMPI_X_PK_ROW(name, value, data, counted) { value, "IMPI_PK_" #name, data, counted },
static const impi_packet_info_t s_packets[] = { IMPI_PACKET_TYPES(IMPI_X_PK_ROW) };
#undef IMPI_X_PK_ROW

#define IMPI_X_CMD_ROW(name, value) { (int32_t)value, #name },
static const struct { int32_t value; const char *name; } s_cmds[] = {
    IMPI_COMMANDS(IMPI_X_CMD_ROW)
};
#undef IMPI_X_CMD_ROW

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/*  Text for an impi_err_t. */
const char *impi_strerror(int err)
{
    switch (err) {
    case IMPI_OK: return "ok";
    case IMPI_ERR_SHORT: return "truncated";
    case IMPI_ERR_COMMAND: return "unknown command";
    case IMPI_ERR_LENGTH: return "bad length";
    case IMPI_ERR_LABEL: return "bad label";
    case IMPI_ERR_VALUE: return "value out of range";
    case IMPI_ERR_MASK: return "client mask does not match the data";
    case IMPI_ERR_PACKET: return "bad packet";
    case IMPI_ERR_VERSION: return "bad version list";
    default: return "unknown error";
    }
}

/* ------------------------------------------------------------------ lookups */

/*  Row of a label, or NULL. */
const impi_label_info_t *impi_label_info(int32_t label)
{
    for (size_t i = 0; i < COUNT_OF(s_labels); i++)
        if (s_labels[i].value == label)
            return &s_labels[i];
    return NULL;
}

/*  Row i of the label table. */
const impi_label_info_t *impi_label_at(int i)
{
    if (i < 0 || (size_t)i >= COUNT_OF(s_labels))
        return NULL;
    return &s_labels[i];
}

/*  Name of a label, or a generic name for unknown ones. */
const char *impi_label_name(int32_t label)
{
    const impi_label_info_t *info = impi_label_info(label);
    if (info)
        return info->name;
    return label == IMPI_NO_LABEL ? "IMPI_NO_LABEL" : "(unknown label)";
}

/*  Name of a command, or NULL. */
const char *impi_cmd_name(int32_t cmd)
{
    for (size_t i = 0; i < COUNT_OF(s_cmds); i++)
        if (s_cmds[i].value == cmd)
            return s_cmds[i].name;
    return NULL;
}

/*  Row of a packet type, or NULL. */
const impi_packet_info_t *impi_packet_info(uint32_t type)
{
    for (size_t i = 0; i < COUNT_OF(s_packets); i++)
        if (s_packets[i].value == type)
            return &s_packets[i];
    return NULL;
}

/*  Name of a packet type. */
const char *impi_packet_name(uint32_t type)
{
    const impi_packet_info_t *info = impi_packet_info(type);
    return info ? info->name : "IMPI_PK_?";
}

/* ------------------------------------------------------------------ command framing */

/*  Writes the 8-byte command header. */
void impi_cmd_encode(uint8_t out[IMPI_CMD_HDR_SIZE], int32_t cmd, uint32_t len)
{
    gimpi_be_put32(out, (uint32_t)cmd);
    gimpi_be_put32(out + 4, len);
}

/*  Decodes and validates a command header against the command's own length rule. */
int impi_cmd_decode(const uint8_t in[IMPI_CMD_HDR_SIZE], uint64_t max_payload, impi_cmd_t *cmd)
{
    cmd->cmd = (int32_t)gimpi_be_get32(in);
    cmd->len = gimpi_be_get32(in + 4);
    if (!impi_cmd_name(cmd->cmd))
        return IMPI_ERR_COMMAND;
    if (cmd->len > max_payload)
        return IMPI_ERR_LENGTH;
    switch (cmd->cmd) {
    case IMPI_CMD_AUTH:
    case IMPI_CMD_IMPI:
        return cmd->len == 4 ? IMPI_OK : IMPI_ERR_LENGTH;
    case IMPI_CMD_COLL:
        return cmd->len >= 4 ? IMPI_OK : IMPI_ERR_LENGTH;
    default:                    /* DONE, FINI: a payload is read and discarded */
        return IMPI_OK;
    }
}

/* ------------------------------------------------------------------ AUTH */

/*  Writes the raw 8-byte AUTH reply. */
void impi_auth_reply_encode(uint8_t out[IMPI_AUTH_REPLY_SIZE], int32_t which, int32_t len)
{
    gimpi_be_put32(out, (uint32_t)which);
    gimpi_be_put32(out + 4, (uint32_t)len);
}

/*  Decodes the raw AUTH reply; only NONE, KEY and GIMPI are known methods. */
int impi_auth_reply_decode(const uint8_t in[IMPI_AUTH_REPLY_SIZE], int32_t *which, int32_t *len)
{
    *which = (int32_t)gimpi_be_get32(in);
    *len = (int32_t)gimpi_be_get32(in + 4);
    if (*which != IMPI_AUTH_NONE && *which != IMPI_AUTH_KEY && *which != IMPI_AUTH_GIMPI
        && *which != IMPI_AUTH_GIMPI_JOB)
        return IMPI_ERR_VALUE;
    return IMPI_OK;
}

/*  The strongest method both sides enabled: GIMPI_JOB over GIMPI over KEY over NONE (a
 *  server that enables GIMPI enables GIMPI_JOB); -1 when none is common. */
int impi_auth_choose(uint32_t client_mask, uint32_t server_mask)
{
    if (server_mask & (1u << IMPI_AUTH_GIMPI))
        server_mask |= 1u << IMPI_AUTH_GIMPI_JOB;
    uint32_t common = client_mask & server_mask;
    if (common & (1u << IMPI_AUTH_GIMPI_JOB))
        return IMPI_AUTH_GIMPI_JOB;
    if (common & (1u << IMPI_AUTH_GIMPI))
        return IMPI_AUTH_GIMPI;
    if (common & (1u << IMPI_AUTH_KEY))
        return IMPI_AUTH_KEY;
    if (common & (1u << IMPI_AUTH_NONE))
        return IMPI_AUTH_NONE;
    return -1;
}

/*  The raw key bytes. */
void impi_auth_key_encode(uint8_t out[IMPI_AUTH_KEY_SIZE], uint64_t key)
{
    gimpi_be_put64(out, key);
}

/*  Reads the raw key bytes. */
uint64_t impi_auth_key_decode(const uint8_t in[IMPI_AUTH_KEY_SIZE])
{
    return gimpi_be_get64(in);
}

/*  A KEY's text, signed or unsigned decimal, as its 64 bits. */
int impi_auth_key_parse(const char *text, uint64_t *key)
{
    bool neg = text && text[0] == '-';
    const char *digits = neg ? text + 1 : text;
    if (!digits || *digits < '0' || *digits > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(digits, &end, 10);
    if (*end || errno)
        return -1;
    if (neg && v > (unsigned long long)INT64_MAX + 1)
        return -1;              /* below -2^63 */
    *key = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return 0;
}

/*  A KEY's signed decimal text. */
const char *impi_auth_key_format(uint64_t key, char buf[21])
{
    snprintf(buf, 21, "%" PRId64, (int64_t)key);
    return buf;
}

/* ------------------------------------------------------------------ Int4 commands */

/*  Header {cmd, 4} and one Int4. */
void impi_cmd_int4_encode(uint8_t out[IMPI_CMD_INT4_SIZE], int32_t cmd, int32_t value)
{
    impi_cmd_encode(out, cmd, 4);
    gimpi_be_put32(out + IMPI_CMD_HDR_SIZE, (uint32_t)value);
}

/*  The Int4 after the header. */
int32_t impi_cmd_int4_decode(const uint8_t payload[4])
{
    return (int32_t)gimpi_be_get32(payload);
}

/* ------------------------------------------------------------------ IMPI_Proc */

/*  Writes a 24-byte IMPI_Proc. */
void impi_proc_encode(uint8_t out[IMPI_PROC_SIZE], const impi_proc_t *proc)
{
    memcpy(out, proc->hostid, 16);
    gimpi_be_put64(out + 16, (uint64_t)proc->pid);
}

/*  Reads a 24-byte IMPI_Proc. */
void impi_proc_decode(const uint8_t in[IMPI_PROC_SIZE], impi_proc_t *proc)
{
    memcpy(proc->hostid, in, 16);
    proc->pid = (int64_t)gimpi_be_get64(in + 16);
}

/*  Procs are the same when all 24 bytes are. */
bool impi_proc_equal(const impi_proc_t *a, const impi_proc_t *b)
{
    return a->pid == b->pid && memcmp(a->hostid, b->hostid, 16) == 0;
}

/*  IPv4-compatible form: 12 zero bytes, then the address. */
void impi_addr16_from_ipv4(uint8_t out[16], uint32_t ipv4)
{
    memset(out, 0, 12);
    gimpi_be_put32(out + 12, ipv4);
}

/*  The IPv4 address in the last 4 bytes. */
uint32_t impi_addr16_ipv4(const uint8_t addr[16])
{
    return gimpi_be_get32(addr + 12);
}

/*  Dotted quad for the compatible and mapped forms, else 32 hex digits. */
const char *impi_addr16_format(const uint8_t addr[16], char *buf, size_t size)
{
    static const uint8_t zero[12] = { 0 };
    static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    if (memcmp(addr, zero, 12) == 0 || memcmp(addr, mapped, 12) == 0) {
        snprintf(buf, size, "%u.%u.%u.%u", addr[12], addr[13], addr[14], addr[15]);
    } else {
        size_t off = 0;
        if (size > 0)
            buf[0] = '\0';     /* even when not one digit pair fits */
        for (int i = 0; i < 16 && off + 3 <= size; i++)
            off += (size_t)snprintf(buf + off, size - off, "%02x", addr[i]);
    }
    return buf;
}

/* ------------------------------------------------------------------ COLL */

/*  A client's COLL payload: label then data. */
int impi_coll_decode(const uint8_t *payload, size_t len, impi_coll_t *coll)
{
    if (len < 4)
        return IMPI_ERR_LENGTH;
    coll->label = (int32_t)gimpi_be_get32(payload);
    coll->data = payload + 4;
    coll->len = len - 4;
    return coll->label == IMPI_NO_LABEL ? IMPI_ERR_LABEL : IMPI_OK;
}

/*  Element i of an integer label, sign-extended by its type. */
int64_t impi_elem_int(const impi_label_info_t *info, const uint8_t *data, size_t i)
{
    const uint8_t *p = data + i * info->elem_size;
    switch (info->type) {
    case IMPI_ELEM_INT4: return (int32_t)gimpi_be_get32(p);
    case IMPI_ELEM_UINT4: return gimpi_be_get32(p);
    case IMPI_ELEM_INT8: return (int64_t)gimpi_be_get64(p);
    default: return 0;
    }
}

/*  A version list: >= 1 entries, first {0,0}, strictly ascending. */
static int s_validate_versions(const uint8_t *data, size_t n)
{
    if (n == 0 || gimpi_be_get64(data) != 0)
        return IMPI_ERR_VERSION;
    for (size_t i = 1; i < n; i++)
        if (gimpi_be_get64(data + 8 * i) <= gimpi_be_get64(data + 8 * (i - 1)))
            return IMPI_ERR_VERSION;
    return IMPI_OK;
}

/*  Checks a contribution's shape and every element's range from the label's row. */
int impi_coll_validate(int32_t label, const uint8_t *data, size_t len, long count)
{
    const impi_label_info_t *info = impi_label_info(label);
    if (!info)
        return label == IMPI_NO_LABEL ? IMPI_ERR_LABEL : IMPI_OK;
    if (len % info->elem_size != 0)
        return IMPI_ERR_LENGTH;
    size_t n = len / info->elem_size;
    if (info->type == IMPI_ELEM_VERSION)
        return s_validate_versions(data, n);
    if (info->scope == IMPI_SCOPE_CLIENT && n != 1)
        return IMPI_ERR_LENGTH;
    if (info->scope != IMPI_SCOPE_CLIENT && count >= 0 && n != (size_t)count)
        return IMPI_ERR_LENGTH;
    if (info->type == IMPI_ELEM_ADDR16)
        return IMPI_OK;
    for (size_t i = 0; i < n; i++) {
        int64_t v = impi_elem_int(info, data, i);
        if (v < info->min || v > info->max)
            return IMPI_ERR_VALUE;
    }
    return IMPI_OK;
}

/*  A server reply: label, mask, concatenation. */
int impi_coll_reply_decode(const uint8_t *payload, size_t len, impi_coll_reply_t *reply)
{
    if (len < 8)
        return IMPI_ERR_LENGTH;
    reply->label = (int32_t)gimpi_be_get32(payload);
    reply->mask = gimpi_be_get32(payload + 4);
    reply->data = payload + 8;
    reply->len = len - 8;
    return reply->label == IMPI_NO_LABEL ? IMPI_ERR_LABEL : IMPI_OK;
}

/*  The 16 bytes before a reply's concatenated data. */
void impi_coll_reply_header(uint8_t out[16], int32_t label, uint32_t mask, uint32_t data_len)
{
    impi_cmd_encode(out, IMPI_CMD_COLL, 8 + data_len);
    gimpi_be_put32(out + 8, (uint32_t)label);
    gimpi_be_put32(out + 12, mask);
}

/*  Splits a reply into the contributing clients' slices. */
int impi_coll_reply_split(const impi_coll_reply_t *reply, int nclients,
                          const long *counts, impi_slice_t *slices)
{
    const impi_label_info_t *info = impi_label_info(reply->label);
    if (!info || nclients < 1 || nclients > IMPI_MAX_CLIENTS)
        return IMPI_ERR_LABEL;
    if (nclients < 32 && (reply->mask >> nclients) != 0)
        return IMPI_ERR_MASK;
    size_t off = 0;
    for (int c = 0; c < nclients; c++) {
        memset(&slices[c], 0, sizeof slices[c]);
        if (!(reply->mask & (1u << c)))
            continue;
        size_t n;
        if (info->type == IMPI_ELEM_VERSION) {
            /* this client's list runs to the next {0,0} or the end */
            if (reply->len - off < 8 || gimpi_be_get64(reply->data + off) != 0)
                return IMPI_ERR_MASK;
            n = 1;
            while (off + 8 * (n + 1) <= reply->len && gimpi_be_get64(reply->data + off + 8 * n) != 0)
                n++;
        } else if (info->scope == IMPI_SCOPE_CLIENT) {
            n = 1;
        } else {
            if (!counts || counts[c] < 0)
                return IMPI_ERR_MASK;
            n = (size_t)counts[c];
        }
        if (n > (reply->len - off) / info->elem_size)
            return IMPI_ERR_MASK;
        slices[c].data = reply->data + off;
        slices[c].len = n * info->elem_size;
        slices[c].count = n;
        off += slices[c].len;
    }
    return off == reply->len ? IMPI_OK : IMPI_ERR_MASK;
}

/*  One element as text. */
const char *impi_elem_format(const impi_label_info_t *info, const uint8_t *elem,
                             char *buf, size_t size)
{
    switch (info->type) {
    case IMPI_ELEM_VERSION:
        snprintf(buf, size, "%" PRIu32 ".%" PRIu32, gimpi_be_get32(elem), gimpi_be_get32(elem + 4));
        return buf;
    case IMPI_ELEM_ADDR16:
        return impi_addr16_format(elem, buf, size);
    default:
        snprintf(buf, size, "%" PRId64, impi_elem_int(info, elem, 0));
        return buf;
    }
}

/* ------------------------------------------------------------------ IMPI_Packet */

/*  Writes the 128-byte header, field by field, big-endian. */
void impi_packet_encode(uint8_t out[IMPI_PACKET_SIZE], const impi_packet_t *pk)
{
    gimpi_be_put32(out + 0, pk->type);
    gimpi_be_put32(out + 4, pk->len);
    impi_proc_encode(out + 8, &pk->src);
    impi_proc_encode(out + 32, &pk->dest);
    gimpi_be_put64(out + 56, pk->srqid);
    gimpi_be_put64(out + 64, pk->drqid);
    gimpi_be_put64(out + 72, pk->msglen);
    gimpi_be_put32(out + 80, (uint32_t)pk->lsrank);
    gimpi_be_put32(out + 84, (uint32_t)pk->tag);
    gimpi_be_put64(out + 88, pk->cid);
    gimpi_be_put64(out + 96, pk->seqnum);
    gimpi_be_put64(out + 104, (uint64_t)pk->count);
    gimpi_be_put64(out + 112, pk->dtype);
    gimpi_be_put64(out + 120, pk->reserved);
}

/*  Reads and checks the 128-byte header. */
int impi_packet_decode(const uint8_t in[IMPI_PACKET_SIZE], uint32_t max_data, impi_packet_t *pk)
{
    pk->type = gimpi_be_get32(in + 0);
    pk->len = gimpi_be_get32(in + 4);
    impi_proc_decode(in + 8, &pk->src);
    impi_proc_decode(in + 32, &pk->dest);
    pk->srqid = gimpi_be_get64(in + 56);
    pk->drqid = gimpi_be_get64(in + 64);
    pk->msglen = gimpi_be_get64(in + 72);
    pk->lsrank = (int32_t)gimpi_be_get32(in + 80);
    pk->tag = (int32_t)gimpi_be_get32(in + 84);
    pk->cid = gimpi_be_get64(in + 88);
    pk->seqnum = gimpi_be_get64(in + 96);
    pk->count = (int64_t)gimpi_be_get64(in + 104);
    pk->dtype = gimpi_be_get64(in + 112);
    pk->reserved = gimpi_be_get64(in + 120);
    const impi_packet_info_t *info = impi_packet_info(pk->type);
    if (!info)
        return IMPI_ERR_PACKET;
    if (info->has_data && (pk->len > max_data || pk->len > pk->msglen))
        return IMPI_ERR_LENGTH;
    return IMPI_OK;
}

/*  Bytes after the header: only data packets carry any, whatever pk_len says. */
uint32_t impi_packet_data_len(const impi_packet_t *pk)
{
    const impi_packet_info_t *info = impi_packet_info(pk->type);
    return info && info->has_data ? pk->len : 0;
}

/*  One-line description of a packet. */
const char *impi_packet_format(const impi_packet_t *pk, char *buf, size_t size)
{
    char src[48], dst[48];
    snprintf(buf, size,
             "%s len=%" PRIu32 " src=%s/%" PRId64 " dest=%s/%" PRId64 " srqid=%" PRIu64
             " drqid=%" PRIu64 " msglen=%" PRIu64 " lsrank=%" PRId32 " tag=%" PRId32
             " cid=%" PRIu64 " seq=%" PRIu64,
             impi_packet_name(pk->type), pk->len,
             impi_addr16_format(pk->src.hostid, src, sizeof src), pk->src.pid,
             impi_addr16_format(pk->dest.hostid, dst, sizeof dst), pk->dest.pid,
             pk->srqid, pk->drqid, pk->msglen, pk->lsrank, pk->tag, pk->cid, pk->seqnum);
    return buf;
}

/* ------------------------------------------------------------------ printing */

/*  Prints a command; for COLL also its label and elements (client payload form). */
void impi_cmd_print(FILE *out, const char *prefix, const impi_cmd_t *cmd,
                    const uint8_t *payload, size_t len)
{
    const char *name = impi_cmd_name(cmd->cmd);
    fprintf(out, "%s%s len=%" PRIu32, prefix, name ? name : "?", cmd->len);
    impi_coll_t coll;
    if (cmd->cmd == IMPI_CMD_COLL && impi_coll_decode(payload, len, &coll) == IMPI_OK) {
        const impi_label_info_t *info = impi_label_info(coll.label);
        fprintf(out, " %s", impi_label_name(coll.label));
        if (info) {
            char buf[64];
            size_t n = coll.len / info->elem_size;
            for (size_t i = 0; i < n && i < 16; i++)
                fprintf(out, " %s",
                        impi_elem_format(info, coll.data + i * info->elem_size, buf, sizeof buf));
            if (n > 16)
                fprintf(out, " ... (%zu elements)", n);
        }
    } else if ((cmd->cmd == IMPI_CMD_AUTH || cmd->cmd == IMPI_CMD_IMPI) && len >= 4) {
        fprintf(out, " %" PRId32, (int32_t)gimpi_be_get32(payload));
    }
    fputc('\n', out);
}
