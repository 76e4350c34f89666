/*  t/gd_proto.c — tests of the group-control codec (libgimpi/groups/gd_proto.c): the table,
 *  headers, every command's request layout round-tripping, refusal of short and extra
 *  frames, oversize names, NULs, wrong versions and unknown commands, replies, events,
 *  the STAT group records and the TASKS task records.
 */
#include "gtap.h"
#include "groups/gd_proto.h"

#include <stdlib.h>
#include <string.h>

/*  Builds a request of `kind` with the given frames after the header. */
static int s_decode(uint8_t kind, const gd_frame_t *args, int nargs, gd_msg_t *msg)
{
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, kind, 77);
    gd_frame_t f[24] = { { hdr, sizeof hdr } };
    for (int k = 0; k < nargs; k++)
        f[1 + k] = args[k];
    return gd_request_decode(f, 1 + nargs, msg);
}

/*  The table: codes unique, names and layouts present. */
static void test_table(void)
{
    ok(gd_command_info(GD_JOIN) && !strcmp(gd_command_info(GD_JOIN)->name, "JOIN"), "JOIN row");
    is(gd_command_info(GD_BARRIER)->request, "ni", "BARRIER takes name + count");
    is(gd_command_info(GD_REGISTER)->request, "paiit", "REGISTER layout");
    ok(gd_command_info(0x7E) == NULL, "unknown code has no row");
    is(gd_kind_name(GD_EV_JOIN), "EV_JOIN", "event name");
    is(gd_kind_name(GD_GSIZE | GD_REPLY_FLAG), "GSIZE", "reply name");
    int unique = 1;
    for (int a = 0; a < 256; a++)
        if (gd_command_info((uint8_t)a) && gd_event_name((uint8_t)a))
            unique = 0;
    ok(unique, "command and event codes do not overlap");
}

/*  Every command decodes from frames built per its layout. */
static void test_roundtrip(void)
{
    static const uint8_t proc[24] = { 1 }, addr[16] = { 2 }, token[GD_TOKEN_SIZE] = { 3 };
    for (int code = 0; code < 256; code++) {
        const gd_command_info_t *info = gd_command_info((uint8_t)code);
        if (!info || strchr(info->request, '*'))
            continue;                   /* (HELLO's optional term: test_reply_event) */
        gd_value_t v[GD_MAX_FRAMES];
        int n = 0;
        for (const char *t = info->request; *t; t++, n++) {
            memset(&v[n], 0, sizeof v[n]);
            switch (*t) {
            case 'i': v[n].i = -5 - n; break;
            case 'q': v[n].q = 1ULL << 40; break;
            case 'p': v[n].data = proc; v[n].len = 24; break;
            case 'a': v[n].data = addr; v[n].len = 16; break;
            case 'k': v[n].data = token; v[n].len = GD_TOKEN_SIZE; break;
            default: v[n].data = (const uint8_t *)"grp"; v[n].len = 3; break;
            }
        }
        uint8_t buf[8 * GD_MAX_FRAMES];
        gd_frame_t frames[GD_MAX_FRAMES];
        int nf = gd_values_encode(info->request, v, n, buf, frames);
        cmp_ok(nf, "==", n, "%s encodes %d frames", info->name, n);
        gd_msg_t msg;
        cmp_ok(s_decode((uint8_t)code, frames, nf, &msg), "==", GD_OK, "%s decodes", info->name);
        ok(msg.kind == code && msg.reqid == 77 && msg.nvalues == n, "%s header and count",
           info->name);
        int same = 1;
        for (int k = 0; k < n; k++)
            if (msg.values[k].type == 'i' && msg.values[k].i != v[k].i)
                same = 0;
        ok(same, "%s integers survive", info->name);
        if (n > 0) {
            cmp_ok(s_decode((uint8_t)code, frames, nf - 1, &msg), "==", GD_ERR_FRAMES,
                   "%s with a frame missing refused", info->name);
        }
        frames[nf] = (gd_frame_t){ (const uint8_t *)"x", 1 };
        cmp_ok(s_decode((uint8_t)code, frames, nf + 1, &msg), "==", GD_ERR_FRAMES,
               "%s with an extra frame refused", info->name);
    }
}

/*  Malformed requests. */
static void test_refusals(void)
{
    gd_msg_t msg;
    char *big = malloc(GD_MAX_NAME + 1);
    memset(big, 'a', GD_MAX_NAME + 1);
    gd_frame_t name = { (const uint8_t *)big, GD_MAX_NAME };
    cmp_ok(s_decode(GD_JOIN, &name, 1, &msg), "==", GD_OK, "name of GD_MAX_NAME bytes ok");
    name.len = GD_MAX_NAME + 1;
    cmp_ok(s_decode(GD_JOIN, &name, 1, &msg), "==", GD_ERR_SIZE, "oversize name refused");
    free(big);
    gd_frame_t nul = { (const uint8_t *)"a\0b", 3 };
    cmp_ok(s_decode(GD_JOIN, &nul, 1, &msg), "==", GD_ERR_TEXT, "NUL inside a name refused");
    gd_frame_t empty = { (const uint8_t *)"", 0 };
    cmp_ok(s_decode(GD_JOIN, &empty, 1, &msg), "==", GD_OK, "empty name decodes (NullGroup later)");
    gd_frame_t args[2] = { { (const uint8_t *)"g", 1 }, { (const uint8_t *)"abc", 3 } };
    cmp_ok(s_decode(GD_GETTID, args, 2, &msg), "==", GD_ERR_SIZE, "3-byte Int4 refused");
    cmp_ok(s_decode(0x7E, NULL, 0, &msg), "==", GD_ERR_COMMAND, "unknown command refused");
    cmp_ok(msg.kind, "==", 0x7E, "unknown command's code kept for the reply");
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_PING, 9);
    hdr[2] = GD_VERSION + 1;
    gd_frame_t f = { hdr, sizeof hdr };
    cmp_ok(gd_request_decode(&f, 1, &msg), "==", GD_ERR_VERSION, "wrong version refused");
    cmp_ok(msg.reqid, "==", 9, "its request id kept for the reply");
    hdr[0] = 'X';
    cmp_ok(gd_request_decode(&f, 1, &msg), "==", GD_ERR_HEADER, "wrong magic refused");
    f.len = 7;
    cmp_ok(gd_request_decode(&f, 1, &msg), "==", GD_ERR_HEADER, "short header refused");
    cmp_ok(gd_request_decode(&f, 0, &msg), "==", GD_ERR_HEADER, "no frames refused");
    gd_value_t bad = { .data = (const uint8_t *)"x\0", .len = 2 };
    uint8_t buf[64];
    gd_frame_t out[4];
    cmp_ok(gd_values_encode("n", &bad, 1, buf, out), "==", GD_ERR_TEXT,
           "encoder refuses a NUL in a name");
}

/*  Replies and events. */
static void test_reply_event(void)
{
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8];
    gd_header_encode(hdr, GD_HELLO | GD_REPLY_FLAG, 3);
    gimpi_be_put32(st, 0);
    gimpi_be_put64(ver, 12);
    uint8_t term[4];
    gimpi_be_put32(term, 2);
    gd_frame_t f[5] = { { hdr, 8 }, { st, 4 }, { ver, 8 }, { (const uint8_t *)"ipc://x", 7 },
                        { term, 4 } };
    gd_msg_t msg;
    cmp_ok(gd_request_decode(f, 1, &msg), "==", GD_ERR_COMMAND, "a reply is no request");
    uint8_t qh[GD_HDR_SIZE];
    gd_header_encode(qh, GD_HELLO, 4);
    gd_frame_t q[2] = { { qh, 8 }, { term, 4 } };
    cmp_ok(gd_request_decode(q, 1, &msg), "==", GD_OK, "HELLO without a term decodes");
    cmp_ok(gd_request_decode(q, 2, &msg), "==", GD_OK, "HELLO with a term decodes");
    ok(msg.nextra == 1 && q[msg.extra_first + 1].len == 4, "... the term is its extra frame");
    cmp_ok(gd_reply_decode(GD_HELLO, f, 5, &msg), "==", GD_OK, "HELLO reply decodes");
    ok(msg.nvalues == 4 && msg.values[1].q == 12 && msg.values[2].len == 7
       && msg.values[3].i == 2, "status, version, text, term");
    cmp_ok(gd_reply_decode(GD_HELLO, f, 3, &msg), "==", GD_ERR_FRAMES, "HELLO reply without text");
    gimpi_be_put32(st, (uint32_t)-17);
    cmp_ok(gd_reply_decode(GD_HELLO, f, 3, &msg), "==", GD_OK, "error reply carries no extras");
    char buf[200];
    is(gd_msg_format(&msg, buf, sizeof buf), "reply HELLO #3 -17 v12", "reply printed");
    cmp_ok(gd_reply_decode(GD_JOIN, f, 3, &msg), "==", GD_ERR_COMMAND, "reply to another command");

    uint8_t eh[GD_HDR_SIZE], q1[8], q2[8], i1[4], i2[4], i3[4];
    gd_header_encode(eh, GD_EV_JOIN, 0);
    gimpi_be_put64(q1, 0);
    gimpi_be_put64(q2, 5);
    gimpi_be_put32(i1, 2);
    gimpi_be_put32(i2, 0x40001);
    gimpi_be_put32(i3, 3);
    gd_frame_t ev[7] = { { (const uint8_t *)"Gg", 2 }, { eh, 8 }, { q1, 8 }, { q2, 8 },
                         { i1, 4 }, { i2, 4 }, { i3, 4 } };
    cmp_ok(gd_event_decode(ev, 7, &msg), "==", GD_OK, "event decodes");
    ok(msg.kind == GD_EV_JOIN && msg.values[1].q == 5 && msg.values[3].i == 0x40001, "event values");
    is(gd_msg_format(&msg, buf, sizeof buf), "EV_JOIN #0 v0 v5 2 262145 3", "event printed");
    cmp_ok(gd_event_decode(ev, 6, &msg), "==", GD_ERR_FRAMES, "short event refused");
    ev[0].data = (const uint8_t *)"Xg";
    cmp_ok(gd_event_decode(ev, 7, &msg), "==", GD_ERR_HEADER, "bad topic refused");
}

/*  STAT records round-trip; truncations refused. */
static void test_groupstat(void)
{
    gd_member_t m[2] = { { 0, 0x40001, 100, "hostA" }, { 2, 0x40003, 101, "hostB" } };
    int32_t bw[1] = { 0x40001 };
    gd_groupstat_t st = { .name = (char *)"grp", .size = 2, .version = 1ULL << 33,
                          .bar_count = 3, .bar_arrived = 1, .nmembers = 2, .nbar_waiters = 1,
                          .members = m, .bar_waiters = bw };
    uint8_t *buf;
    size_t len = gd_groupstat_encode(&st, &buf);
    ok(len > 0, "record encodes");
    gd_groupstat_t back;
    cmp_ok(gd_groupstat_decode(buf, len, &back), "==", GD_OK, "record decodes");
    ok(!strcmp(back.name, "grp") && back.size == 2 && back.version == 1ULL << 33
       && back.members[1].inst == 2 && !strcmp(back.members[1].host, "hostB")
       && back.bar_waiters[0] == 0x40001 && back.nfrz_waiters == 0, "record fields survive");
    gd_groupstat_clear(&back);
    int all_refused = 1;
    for (size_t cut = 0; cut < len; cut++)
        if (gd_groupstat_decode(buf, cut, &back) == GD_OK)
            all_refused = 0;
    ok(all_refused, "every truncation refused");
    gimpi_be_put32(buf + 2 + 3 + 9 * 4, 0x7FFFFFFF);      /* nmembers */
    cmp_ok(gd_groupstat_decode(buf, len, &back), "==", GD_ERR_SIZE, "lying count refused");
    free(buf);
}

/*  TASKS records: round trip, empty, truncations, lying lengths, NULs. */
static void test_tasks(void)
{
    gd_vmtask_t in[2] = { { .tid = 0x40001, .ptid = 0, .ospid = 77, .host = "node1",
                            .name = "master" },
                          { .tid = 0x40002, .ptid = 0x40001, .ospid = 78, .flags = 0,
                            .host = "node2", .name = "" } };
    uint8_t *buf = NULL;
    size_t len = gd_tasks_encode(in, 2, &buf);
    cmp_ok(len, "==", 2 * GD_TASKREC_MIN + 5 + 6 + 5, "two records encode (%zu bytes)", len);
    gd_vmtask_t *out = NULL;
    int n = -1;
    cmp_ok(gd_tasks_decode(buf, len, &out, &n), "==", GD_OK, "and decode");
    ok(n == 2 && out && out[0].tid == 0x40001 && out[1].ptid == 0x40001 && out[1].ospid == 78
       && !strcmp(out[0].name, "master") && !strcmp(out[1].host, "node2")
       && !strcmp(out[1].name, ""), "the same records");
    free(out);
    int all_refused = 1;
    for (size_t cut = 1; cut < len; cut++)
        if (cut != len - (GD_TASKREC_MIN + 5) && gd_tasks_decode(buf, cut, &out, &n) != GD_ERR_SIZE)
            all_refused = 0;
    ok(all_refused, "every truncation inside a record refused");
    ok(out == NULL && n == 0, "leaving nothing allocated");
    gimpi_be_put32(buf + 16, 0x7FFFFFF0);             /* the first host's length */
    cmp_ok(gd_tasks_decode(buf, len, &out, &n), "==", GD_ERR_SIZE, "a lying length refused");
    gimpi_be_put32(buf + 16, 256);
    cmp_ok(gd_tasks_decode(buf, len, &out, &n), "==", GD_ERR_SIZE, "a text over 255 refused");
    gimpi_be_put32(buf + 16, 5);
    buf[20] = 0;
    cmp_ok(gd_tasks_decode(buf, len, &out, &n), "==", GD_ERR_TEXT, "a NUL in a text refused");
    free(buf);
    len = gd_tasks_encode(NULL, 0, &buf);
    ok(len == 0 && buf, "no records: an empty blob");
    cmp_ok(gd_tasks_decode(buf, 0, &out, &n), "==", GD_OK, "decodes to none");
    ok(out && n == 0, "an empty array");
    free(out);
    free(buf);
}

int main(void)
{
    plan(NO_PLAN);
    test_tasks();
    test_table();
    test_roundtrip();
    test_refusals();
    test_reply_event();
    test_groupstat();
    done_testing();
}
