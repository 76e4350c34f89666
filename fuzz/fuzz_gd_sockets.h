/*  fuzz_gd_sockets.h — the groupd sockets of the fuzz targets that drive its request
 *  handler (fuzz_gd_serve.c, fuzz_gd_journal.c): a ROUTER and an XPUB bound on inproc
 *  endpoints nobody reads (send queues of 16), made once per process, since a context per
 *  input would cost more than the input.
 */
#ifndef GIMPI_FUZZ_GD_SOCKETS_H
#define GIMPI_FUZZ_GD_SOCKETS_H

#include <stdio.h>
#include <zmq.h>

/*  Makes the sockets on first use (name: the endpoints' name) into *router and *xpub. */
static inline void fuzz_gd_sockets(const char *name, void **router, void **xpub)
{
    static void *zctx;
    if (zctx)
        return;
    zctx = zmq_ctx_new();
    *router = zmq_socket(zctx, ZMQ_ROUTER);
    *xpub = zmq_socket(zctx, ZMQ_XPUB);
    int hwm = 16;
    zmq_setsockopt(*router, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(*xpub, ZMQ_SNDHWM, &hwm, sizeof hwm);
    char ep[128];
    snprintf(ep, sizeof ep, "inproc://%s", name);
    zmq_bind(*router, ep);
    snprintf(ep, sizeof ep, "inproc://%s-pub", name);
    zmq_bind(*xpub, ep);
}

#endif
