/*  trace_prog.c — the traced program of t/trace_pvm_cmp.sh: a child that makes a fixed
 *  series of PVM calls (buffers, packing, formatted packing, a send to and a receive
 *  from its parent, options, masks, the receive matcher) and exits, built once against
 *  PVM 3.4.6 and once against gimpi so that the trace events the two libraries send for
 *  it can be compared.
 */
#include <pvm3.h>
#include <pvmtev.h>

#include <stddef.h>

/*  The calls, in a fixed order. */
int main(void)
{
    int me = pvm_mytid(), parent = pvm_parent(), v = 7, w = 0, bytes, tag, src;
    char s[32] = "hello", mask[TEV_MASK_LENGTH];
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    pvm_pkstr(s);
    pvm_pkdouble((double[]){ 1.5 }, 1, 1);
    pvm_send(parent, 5);
    pvm_recv(parent, 6);
    pvm_upkint(&w, 1, 1);
    pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &src);
    int b = pvm_mkbuf(PvmDataDefault);
    int old = pvm_setsbuf(b);
    pvm_pkint(&v, 1, 1);
    pvm_setsbuf(old);
    pvm_freebuf(b);
    pvm_getsbuf();
    pvm_getopt(PvmRoute);
    pvm_setopt(PvmRoute, PvmDontRoute);
    pvm_gettmask(PvmTaskSelf, mask);
    pvm_probe(parent, 99);
    pvm_nrecv(parent, 99);
    pvm_recvf(NULL);
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&w, 1, 1);
    pvm_packf("%d %s", 5, "packf");
    pvm_send(parent, 5);
    pvm_exit();
    return 0;
}
