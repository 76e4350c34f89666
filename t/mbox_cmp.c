/*  t/mbox_cmp.c — a scripted sequence of PVM message-box calls (pvm_putinfo, pvm_recvinfo,
 *  pvm_delinfo, pvm_getmboxinfo, pvm_insert, pvm_lookup, pvm_delete) whose results are
 *  printed one per line, tid-free, so that its output under PVM 3.4.6 and under gimpi
 *  can be compared line by line (t/pvm_mbox_cmp.sh).  The parent spawns itself as a
 *  second task for ownership, an owner's exit, and a waiting pvm_recvinfo.
 */
#include <pvm3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int pvm_errno;

/*  Packs one int into a fresh send buffer of the given encoding; returns the buffer. */
static int s_msg(int enc, int value)
{
    int b = pvm_initsend(enc);
    pvm_pkint(&value, 1, 1);
    return b;
}

/*  Puts value under name with flags from a fresh buffer (freed after). */
static int s_put(const char *name, int value, int flags)
{
    int b = s_msg(PvmDataDefault, value);
    int rc = pvm_putinfo((char *)name, b, flags);
    pvm_freebuf(b);
    return rc;
}

/*  recvinfo and the int it holds (-999 when none) */
static int s_get(const char *name, int index, int flags, int *value)
{
    *value = -999;
    int b = pvm_recvinfo((char *)name, index, flags);
    if (b >= 0 && pvm_getrbuf() == b)
        pvm_upkint(value, 1, 1);
    return b;
}

/*  Prints what getmboxinfo reports for a pattern, owners relative to me / other. */
static void s_info(const char *pattern, int me, int other)
{
    int n = -1;
    struct pvmmboxinfo *ci = NULL;
    int rc = pvm_getmboxinfo((char *)pattern, &n, &ci);
    printf("getmboxinfo '%s' rc=%d n=%d", pattern ? pattern : "(null)", rc, n);
    for (int k = 0; rc >= 0 && k < n; k++) {
        printf(" [%s:", ci[k].mi_name);
        for (int j = 0; j < ci[k].mi_nentries; j++)
            printf(" %d/%s/%d", ci[k].mi_indices[j],
                   ci[k].mi_owners[j] == me ? "me" : ci[k].mi_owners[j] == other ? "other"
                   : ci[k].mi_owners[j] == 0 ? "0" : "?", ci[k].mi_flags[j]);
        printf("]");
    }
    printf("\n");
}

/*  The child's part: acts as another task on the parent's entries. */
static int s_child(const char *mode)
{
    int parent = pvm_parent();
    int v, rc;
    char out[1024] = "";
    size_t o = 0;
#define SAY(...) (o += (size_t)snprintf(out + o, sizeof out - o, __VA_ARGS__))
    if (!strcmp(mode, "other")) {
        SAY("other put a default %d\n", s_put("a", 5, PvmMboxDefault));
        SAY("other put a multi %d\n", s_put("a", 5, PvmMboxMultiInstance));
        SAY("other put o default %d\n", s_put("o", 6, PvmMboxDefault));
        SAY("other put o again %d\n", s_put("o", 7, PvmMboxDefault));
        SAY("other del a 0 %d\n", pvm_delinfo("a", 0, 0));
        rc = s_get("a", 0, PvmMboxReadAndDelete, &v);
        SAY("other recv a readdel %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
        rc = s_get("a", 0, 0, &v);
        SAY("other recv a %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
        SAY("other put m multi %d\n", s_put("m", 8, PvmMboxMultiInstance));
        SAY("other put c default %d\n", s_put("c", 9, PvmMboxDefault));
        SAY("other put cp persistent %d\n", s_put("cp", 10, PvmMboxPersistent));
        SAY("other put cm multi %d\n", s_put("cp", 11, PvmMboxMultiInstance));
        SAY("other insert i -1 %d\n", pvm_insert("i", -1, 12));
        SAY("other delete i 0 %d\n", pvm_delete("i", 0));
    } else if (!strcmp(mode, "waiter")) {
        pvm_initsend(PvmDataDefault);
        pvm_send(parent, 2);
        rc = s_get("w", 0, PvmMboxWaitForInfo, &v);
        SAY("waiter recv w %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
        rc = s_get("w", 3, PvmMboxWaitForInfo | PvmMboxFirstAvail | PvmMboxReadAndDelete, &v);
        SAY("waiter recv w 3 firstavail readdel %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(out);
    pvm_send(parent, 1);
    pvm_exit();
    return 0;
}

/*  Spawns this program as mode, returns its tid. */
static int s_spawn(const char *self, const char *mode)
{
    char *argv[] = { (char *)mode, NULL };
    int tid = 0;
    int n = pvm_spawn((char *)self, argv, PvmTaskDefault, "", 1, &tid);
    return n == 1 ? tid : -1;
}

/*  Receives the child's report and prints it. */
static void s_report(int tid)
{
    char out[1024];
    if (pvm_recv(tid, 1) >= 0 && pvm_upkstr(out) >= 0)
        fputs(out, stdout);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pvm_setopt(PvmAutoErr, 0);
    int me = pvm_mytid();
    if (me < 0)
        return 1;
    if (argc > 1 && strcmp(argv[1], "main"))
        return s_child(argv[1]);
    const char *self = argc > 2 ? argv[2] : argv[0];
    int v, rc;
    /* puts */
    printf("put a default %d\n", s_put("a", 1, PvmMboxDefault));
    printf("put a again %d\n", s_put("a", 2, PvmMboxDefault));
    printf("put a multi %d\n", s_put("a", 3, PvmMboxMultiInstance));
    printf("put a overwritable %d\n", s_put("a", 2, PvmMboxOverWritable));
    printf("put a default again %d\n", s_put("a", 1, PvmMboxDefault));
    for (int k = 0; k < 3; k++)
        printf("put m multi %d\n", s_put("m", 100 + k, PvmMboxMultiInstance));
    printf("put o overwritable %d\n", s_put("o", 4, PvmMboxOverWritable));
    printf("put p persistent %d\n", s_put("p", 5, PvmMboxPersistent));
    printf("put d direct 5 %d\n", s_put("d", 6, PvmMboxMultiInstance | PvmMboxOverWritable
                                        | PvmMboxDirectIndex(5)));
    printf("put d direct 5 again %d\n", s_put("d", 7, PvmMboxOverWritable | PvmMboxDirectIndex(5)));
    printf("put d direct 2 default %d\n", s_put("d", 8, PvmMboxDirectIndex(2)));
    printf("put null %d\n", pvm_putinfo(NULL, pvm_getsbuf(), 0));
    printf("put empty %d\n", pvm_putinfo("", pvm_getsbuf(), 0));
    printf("put weird flags %d\n", s_put("wf", 1, PvmMboxWaitForInfo | PvmMboxFirstAvail | PvmMboxReadAndDelete));
    printf("errno after put weird %d\n", pvm_errno);
    {
        int b = pvm_initsend(PvmDataRaw);
        double d = 2.5;
        pvm_pkdouble(&d, 1, 1);
        pvm_pkstr("raw");
        printf("put raw %d\n", pvm_putinfo("raw", b, 0));
        printf("sbuf still %d\n", pvm_getsbuf() == b);
        pvm_freebuf(b);
    }
    /* gets */
    rc = s_get("a", 0, 0, &v);
    printf("recv a 0 %s %d active %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc, pvm_getrbuf() == rc);
    {
        int old = pvm_mkbuf(PvmDataDefault);
        pvm_setrbuf(old);
        rc = s_get("a", 0, 0, &v);
        int bytes, tag, src;
        printf("old rbuf freed by recvinfo %d\n", rc == old || pvm_bufinfo(old, &bytes, &tag, &src) < 0);
        printf("recvinfo buf tag/src %d %d\n", pvm_bufinfo(rc, &bytes, &tag, &src), tag);
        pvm_setrbuf(old = pvm_mkbuf(PvmDataDefault));
        rc = s_get("nope", 0, 0, &v);
        printf("recv nope %d old rbuf after failed recvinfo %d\n", rc,
               pvm_bufinfo(old, &bytes, &tag, &src));
    }
    rc = pvm_recvinfo("raw", 0, 0);
    {
        double d = 0;
        char s[8] = "";
        pvm_upkdouble(&d, 1, 1);
        pvm_upkstr(s);
        printf("recv raw %s %g %s\n", rc >= 0 ? "buf" : "err", d, s);
    }
    rc = s_get("a", 1, 0, &v);
    printf("recv a 1 %s\n", rc > 0 ? "buf" : "err");
    rc = s_get("m", 1, 0, &v);
    printf("recv m 1 %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
    rc = s_get("m", 3, PvmMboxFirstAvail, &v);
    printf("recv m 3 firstavail %d\n", rc);
    rc = s_get("d", 0, PvmMboxFirstAvail, &v);
    printf("recv d 0 firstavail %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
    rc = s_get("m", -1, 0, &v);
    printf("recv m -1 %d\n", rc);
    rc = s_get(NULL, 0, 0, &v);
    printf("recv null %d\n", rc);
    rc = s_get("", 0, 0, &v);
    printf("recv empty %d\n", rc);
    printf("del m 1 %d\n", pvm_delinfo("m", 1, 0));
    printf("del m 1 again %d\n", pvm_delinfo("m", 1, 0));
    printf("del m 2 %d\n", pvm_delinfo("m", 2, 0));
    printf("del m -1 %d\n", pvm_delinfo("m", -1, 0));
    printf("del null %d\n", pvm_delinfo(NULL, 0, 0));
    printf("del nope %d\n", pvm_delinfo("nope", 0, 0));
    printf("errno %d\n", pvm_errno);
    printf("put m multi after dels %d\n", s_put("m", 103, PvmMboxMultiInstance));
    rc = s_get("m", 1, PvmMboxFirstAvail | PvmMboxReadAndDelete, &v);
    printf("recv m 1 firstavail readdel %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
    s_info("*", me, 0);
    s_info("", me, 0);
    s_info(NULL, me, 0);
    s_info("m", me, 0);
    s_info("a*", me, 0);
    s_info("*a", me, 0);
    s_info("x*", me, 0);
    s_info("r*w", me, 0);
    /* another task */
    int other = s_spawn(self, "other");
    printf("spawned other %d\n", other > 0);
    pvm_notify(PvmTaskExit, 9, 1, &other);
    s_report(other);
    pvm_recv(-1, 9);
    s_info("*", me, other);
    printf("put cp by me %d\n", s_put("cp", 20, PvmMboxDefault));
    printf("del cp by me %d\n", pvm_delinfo("cp", 0, 0));
    rc = s_get("cp", 0, 0, &v);
    printf("recv cp %s %d\n", rc >= 0 ? "buf" : "err", rc >= 0 ? v : rc);
    /* insert / lookup / delete */
    printf("insert i -1 %d\n", pvm_insert("i", -1, 42));
    printf("insert i -1 %d\n", pvm_insert("i", -1, 43));
    printf("insert i 0 %d\n", pvm_insert("i", 0, 44));
    printf("insert i 7 %d\n", pvm_insert("i", 7, 45));
    printf("insert i -2 %d\n", pvm_insert("i", -2, 45));
    printf("insert null %d\n", pvm_insert(NULL, -1, 45));
    v = -1;
    printf("lookup i -1 %d", pvm_lookup("i", -1, &v));
    printf(" %d\n", v);
    v = -1;
    printf("lookup i 7 %d", pvm_lookup("i", 7, &v));
    printf(" %d\n", v);
    printf("lookup i 5 %d\n", pvm_lookup("i", 5, &v));
    printf("lookup i -2 %d\n", pvm_lookup("i", -2, &v));
    printf("lookup i 1 null %d\n", pvm_lookup("i", 1, NULL));
    printf("delete i 0 %d\n", pvm_delete("i", 0));
    printf("delete i 0 again %d\n", pvm_delete("i", 0));
    printf("delete i -1 %d\n", pvm_delete("i", -1));
    printf("errno %d\n", pvm_errno);
    v = -1;
    printf("lookup i -1 %d", pvm_lookup("i", -1, &v));
    printf(" %d\n", v);
    s_info("i", me, other);
    /* waiting */
    int waiter = s_spawn(self, "waiter");
    pvm_recv(waiter, 2);
    printf("put w %d\n", s_put("w", 77, PvmMboxMultiInstance));
    printf("put w %d\n", s_put("w", 78, PvmMboxMultiInstance));
    printf("put w %d\n", s_put("w", 79, PvmMboxMultiInstance));
    printf("put w %d\n", s_put("w", 80, PvmMboxMultiInstance));
    s_report(waiter);
    s_info("w", me, waiter);
    pvm_exit();
    return 0;
}
