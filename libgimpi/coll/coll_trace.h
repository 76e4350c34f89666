/*  coll_trace.h — how the layer above hands the collectives the task's trace recorder
 *  (base/gimpi_trace.h), so that their own transfers (the tree's and the star's messages,
 *  the shared segment's barriers and reduces) are recorded as GIMPI_TEV_COLL_SEND.
 */
#ifndef GIMPI_COLL_TRACE_H
#define GIMPI_COLL_TRACE_H

#include "gimpi_coll.h"

struct gimpi_trace_t;

/*  Records into rec from now on (NULL: no longer); rec must outlive the recording. */
void gimpi_coll_set_trace(gimpi_coll_t *self, struct gimpi_trace_t *rec);

#endif
