/*  coll_figures.h — the group-operation figures of bench/gimpi-bench (coll_figures.c). */
#ifndef GIMPI_COLL_FIGURES_H
#define GIMPI_COLL_FIGURES_H

#include "gimpi_msg.h"

/*  1 when figure is barrier, bcast8, bcast1m, reduce1int or reduce1mdbl. */
int coll_figure_known(const char *figure);
/*  Runs that figure in task rank of the job (member 0 prints the line); 0 or 1.  With
 *  tidbase >= 0 (a block groupd reserved for the job, the data plane's tids set to it) the
 *  tasks join a group in groupd and use the group-level calls; else a view of all tasks. */
int coll_figure(gimpi_msg_t *msg, int rank, const char *figure, int tidbase);

#endif
