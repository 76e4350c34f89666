/*  trace_prog.c — the traced program of t/trace_pvm_cmp.sh: a child that makes a fixed
 *  series of PVM calls (buffers, packing, formatted packing, a send to and a receive
 *  from its parent, options, masks, the receive matcher, then every pack and unpack
 *  call of t/pvm_api through a message to itself, siblings and perror) and exits, built once against
 *  PVM 3.4.6 and once against gimpi so that the trace events the two libraries send for
 *  it can be compared.
 */
#include <pvm3.h>
#include <pvmtev.h>

#include <stddef.h>

/*  Every pack call then every unpack call (t/pvm_api's families), through a message to
 *  itself, the receive buffer set back with pvm_setrbuf, and pvm_unpackf. */
static void s_every_type(int me)
{
    char c = 'c', str[16];
    short h = -2;
    unsigned short uh = 2;
    int i = -3;
    unsigned ui = 3;
    long l = -4;
    unsigned long ul = 4;
    float f = 0.5f, cx[2] = { 1, 2 };
    double d = 0.25, dz[2] = { 3, 4 };
    pvm_initsend(PvmDataDefault);
    pvm_pkbyte(&c, 1, 1);
    pvm_pkshort(&h, 1, 1);
    pvm_pkushort(&uh, 1, 1);
    pvm_pkuint(&ui, 1, 1);
    pvm_pklong(&l, 1, 1);
    pvm_pkulong(&ul, 1, 1);
    pvm_pkfloat(&f, 1, 1);
    pvm_pkcplx(cx, 1, 1);
    pvm_pkdcplx(dz, 1, 1);
    pvm_pkstr("str");
    pvm_pkint(&i, 1, 1);
    pvm_send(me, 7);
    int b = pvm_recv(me, 7);
    int old = pvm_setrbuf(b);
    pvm_upkbyte(&c, 1, 1);
    pvm_upkshort(&h, 1, 1);
    pvm_upkushort(&uh, 1, 1);
    pvm_upkuint(&ui, 1, 1);
    pvm_upklong(&l, 1, 1);
    pvm_upkulong(&ul, 1, 1);
    pvm_upkfloat(&f, 1, 1);
    pvm_upkcplx(cx, 1, 1);
    pvm_upkdcplx(dz, 1, 1);
    pvm_upkstr(str);
    pvm_unpackf("%d", &i);
    pvm_setrbuf(old);
    pvm_upkdouble(&d, 1, 1);
}

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
    s_every_type(me);
    int *sibs = NULL;
    pvm_siblings(&sibs);
    pvm_perror("trace_prog");
    pvm_exit();
    return 0;
}
