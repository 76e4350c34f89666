/*  coll_figures.h — the group-operation figures of bench/gimpi-bench (coll_figures.c). */
#ifndef GIMPI_COLL_FIGURES_H
#define GIMPI_COLL_FIGURES_H

#include "gimpi_msg.h"

/*  1 when figure is barrier, bcast8, bcast1m, reduce1int or reduce1mdbl. */
int coll_figure_known(const char *figure);
/*  Runs that figure in task rank of the job (member 0 prints the line); 0 or 1. */
int coll_figure(gimpi_msg_t *msg, int rank, const char *figure);

#endif
