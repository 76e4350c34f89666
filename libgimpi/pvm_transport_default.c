/*  pvm_transport_default.c — where the PVM layer gets its transport when a pvm_* call
 *  first needs one (enrolment).  The data plane and the group daemon are not merged yet,
 *  so there is nothing to connect to: enrolment fails with GIMPI_ESYSERR, which is what
 *  libpvm says when no pvmd runs ("Can't contact local daemon").  The data-plane branch
 *  replaces the body of this one function.
 */
#include "pvm_ctx.h"
#include "gimpi.h"

#include <stddef.h>

/*  No default transport yet. */
int pvm_transport_open_default(const pvm_transport_ops_t **ops, void **impl)
{
    *ops = NULL;
    *impl = NULL;
    return GIMPI_ESYSERR;
}
