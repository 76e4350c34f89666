/*  fpvm_msg.c — the Fortran binding's buffer and message calls (fpvm.h): buffers
 *  (pvmfinitsend, pvmfmkbuf, pvmffreebuf, pvmfget/setsbuf, pvmfget/setrbuf, pvmfbufinfo),
 *  packing (pvmfpack, pvmfunpack with fpvm3.h's datatype codes), sending and receiving
 *  (pvmfsend, pvmfmcast, pvmfrecv, pvmfnrecv, pvmfprobe, pvmftrecv, pvmfpsend,
 *  pvmfprecv) and whole messages (pvmfgetminfo, pvmfsetminfo, pvmfpkmesg,
 *  pvmfpkmesgbody, pvmfupkmesg).
 *
 *  fpvm3.h's codes are pvm3.h's: STRING 0 (PVM_STR), BYTE1 1, INTEGER2 2, INTEGER4 3,
 *  REAL4 4, COMPLEX8 5, REAL8 6, COMPLEX16 7, INTEGER8 8 (PVM_LONG: 8 bytes here).  A
 *  STRING is packed as nitem bytes with stride, like BYTE1 (PVM's rule): the count says how
 *  many characters go, not the CHARACTER length gfortran passes after the arguments,
 *  which a count over a CHARACTER array (nitem = its size times the length) must be
 *  allowed to exceed.
 */
#include "fortran/fpvm.h"
#include "fortran/fpvm_str.h"
#include "pvm3.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/time.h>

/*  A new active send buffer. */
void pvmfinitsend_(int *encoding, int *bufid)
{
    *bufid = pvm_initsend(*encoding);
}

/*  A new buffer. */
void pvmfmkbuf_(int *encoding, int *bufid)
{
    *bufid = pvm_mkbuf(*encoding);
}

/*  Frees a buffer. */
void pvmffreebuf_(int *bufid, int *info)
{
    *info = pvm_freebuf(*bufid);
}

/*  The active send buffer. */
void pvmfgetsbuf_(int *bufid)
{
    *bufid = pvm_getsbuf();
}

/*  The active receive buffer. */
void pvmfgetrbuf_(int *bufid)
{
    *bufid = pvm_getrbuf();
}

/*  Makes bufid the active send buffer; oldbuf the previous one. */
void pvmfsetsbuf_(int *bufid, int *oldbuf)
{
    *oldbuf = pvm_setsbuf(*bufid);
}

/*  Makes bufid the active receive buffer; oldbuf the previous one. */
void pvmfsetrbuf_(int *bufid, int *oldbuf)
{
    *oldbuf = pvm_setrbuf(*bufid);
}

/*  Size, tag and source of a buffer. */
void pvmfbufinfo_(int *bufid, int *bytes, int *msgtag, int *tid, int *info)
{
    *info = pvm_bufinfo(*bufid, bytes, msgtag, tid);
}

/*  Packs (unpack false) or unpacks n items of type what at xp, every stride'th. */
static int s_pack(bool unpack, int what, void *xp, int n, int stride)
{
    switch (what) {
    case PVM_STR:
    case PVM_BYTE:
        return unpack ? pvm_upkbyte(xp, n, stride) : pvm_pkbyte(xp, n, stride);
    case PVM_SHORT:
        return unpack ? pvm_upkshort(xp, n, stride) : pvm_pkshort(xp, n, stride);
    case PVM_INT:
        return unpack ? pvm_upkint(xp, n, stride) : pvm_pkint(xp, n, stride);
    case PVM_FLOAT:
        return unpack ? pvm_upkfloat(xp, n, stride) : pvm_pkfloat(xp, n, stride);
    case PVM_CPLX:
        return unpack ? pvm_upkcplx(xp, n, stride) : pvm_pkcplx(xp, n, stride);
    case PVM_DOUBLE:
        return unpack ? pvm_upkdouble(xp, n, stride) : pvm_pkdouble(xp, n, stride);
    case PVM_DCPLX:
        return unpack ? pvm_upkdcplx(xp, n, stride) : pvm_pkdcplx(xp, n, stride);
    case PVM_LONG:
        return unpack ? pvm_upklong(xp, n, stride) : pvm_pklong(xp, n, stride);
    default:
        return fpvm_fail(unpack ? "pvmfunpack" : "pvmfpack", PvmBadParam);
    }
}

/*  Packs nitem items of type what (fpvm3.h's codes) into the active send buffer. */
void pvmfpack_(int *what, void *xp, int *nitem, int *stride, int *info)
{
    *info = s_pack(false, *what, xp, *nitem, *stride);
}

/*  Unpacks nitem items of type what from the active receive buffer. */
void pvmfunpack_(int *what, void *xp, int *nitem, int *stride, int *info)
{
    *info = s_pack(true, *what, xp, *nitem, *stride);
}

/*  Sends the active send buffer. */
void pvmfsend_(int *tid, int *msgtag, int *info)
{
    *info = pvm_send(*tid, *msgtag);
}

/*  Sends the active send buffer to ntask tasks. */
void pvmfmcast_(int *ntask, int *tids, int *msgtag, int *info)
{
    *info = pvm_mcast(tids, *ntask, *msgtag);
}

/*  Waits for a message; bufid its buffer. */
void pvmfrecv_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_recv(*tid, *msgtag);
}

/*  Takes a message if one is there (bufid 0 if not). */
void pvmfnrecv_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_nrecv(*tid, *msgtag);
}

/*  Whether a message is there (bufid 0 if not), without taking it. */
void pvmfprobe_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_probe(*tid, *msgtag);
}

/*  Waits at most sec seconds and usec microseconds (sec -1: no limit, as PVM's). */
void pvmftrecv_(int *tid, int *msgtag, int *sec, int *usec, int *bufid)
{
    struct timeval t = { *sec, *usec };
    *bufid = pvm_trecv(*tid, *msgtag, *sec == -1 ? NULL : &t);
}

/*  Packs and sends len items of datatype at buf in one call. */
void pvmfpsend_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *info)
{
    *info = pvm_psend(*tid, *msgtag, buf, *len, *datatype);
}

/*  Receives and unpacks at most len items of datatype into buf; atid, atag and alen say
 *  what came. */
void pvmfprecv_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *atid,
                int *atag, int *alen, int *info)
{
    *info = pvm_precv(*tid, *msgtag, buf, *len, *datatype, atid, atag, alen);
}

/*  A buffer's header. */
void pvmfgetminfo_(int *bufid, int *len, int *ctx, int *tag, int *wid, int *enc, int *crc,
                   int *src, int *dst, int *info)
{
    struct pvmminfo mi = { 0, 0, 0, 0, 0, 0, 0, 0 };
    *info = pvm_getminfo(*bufid, &mi);
    if (*info >= 0) {
        *len = mi.len, *ctx = mi.ctx, *tag = mi.tag, *wid = mi.wid;
        *enc = mi.enc, *crc = mi.crc, *src = mi.src, *dst = mi.dst;
    }
}

/*  Sets a buffer's context, tag, wait id, source and destination. */
void pvmfsetminfo_(int *bufid, int *ctx, int *tag, int *wid, int *src, int *dst, int *info)
{
    struct pvmminfo mi = { 0, *ctx, *tag, *wid, 0, 0, *src, *dst };
    *info = pvm_setminfo(*bufid, &mi);
}

/*  Packs a whole message (header and body) into the active send buffer. */
void pvmfpkmesg_(int *bufid, int *info)
{
    *info = pvm_pkmesg(*bufid);
}

/*  Packs a message's body into the active send buffer. */
void pvmfpkmesgbody_(int *bufid, int *info)
{
    *info = pvm_pkmesgbody(*bufid);
}

/*  Unpacks a whole message from the active receive buffer into a new buffer (newbufid).
 *  bufid is not used: the manual page names it, the C call has no argument. */
void pvmfupkmesg_(int *bufid, int *newbufid)
{
    (void)bufid;
    *newbufid = pvm_upkmesg();
}
