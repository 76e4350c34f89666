/*  t/dance_lib.h — what the tests of the hosts' meeting (t/dance_strangers.c,
 *  t/dance_callers.c) share: a TCP call from a chosen source address, as a stranger or a
 *  host played by hand makes it.
 */
#ifndef GIMPI_T_DANCE_LIB_H
#define GIMPI_T_DANCE_LIB_H

/*  A TCP connection to to:port from address from.  With strict, -1 when from cannot be
 *  bound; without, the kernel chooses the source then.  Returns the socket, or -1. */
int dance_call(const char *from, const char *to, int port, int strict);

#endif
