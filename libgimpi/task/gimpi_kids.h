/*  gimpi_kids.h — the children a task spawned on its own host that have not registered
 *  yet, watched so that one that dies first is reported to groupd (SPAWN_EXIT, with its
 *  block's token): its PvmTaskExit notice then goes out as for any task that ends.
 */
#ifndef GIMPI_KIDS_H
#define GIMPI_KIDS_H

#include "gimpi.h"
#include "gimpi_group.h"

typedef struct gimpi_kids_t gimpi_kids_t;

/*  An empty watch list, or NULL. */
gimpi_kids_t *gimpi_kids_new(void);
/*  Stops the watcher thread; children still watched (alive, not registered yet) go to an
 *  heir process that keeps watching them (gimpi_kids.c); closes every descriptor and
 *  frees. */
void gimpi_kids_destroy(gimpi_kids_t **self_p);
/*  Watches child tid through alive_fd (readable once it has ended; taken over, closed
 *  here) with its block's token (text).  0, or GIMPI_ENOMEM, or GIMPI_EOUTOFRES when
 *  alive_fd lies in the last quarter of the descriptor table (alive_fd closed). */
int gimpi_kids_add(gimpi_kids_t *self, int tid, int alive_fd, const char *token);
/*  1 when this process adopts its children's orphans (the first process of its pid
 *  namespace, or a child subreaper): its spawns' helper processes are then its own to
 *  reap too. */
int gimpi_kids_adopter(gimpi_kids_t *self);
/*  Watches a spawn's helper process (tagger or copier) through alive_fd (taken over), only
 *  to reap it when it ends.  0, GIMPI_EBADPARAM, GIMPI_ENOMEM or GIMPI_EOUTOFRES as
 *  gimpi_kids_add. */
int gimpi_kids_add_helper(gimpi_kids_t *self, int alive_fd);
/*  From now on a thread of this object watches the children and reports each death at
 *  once, over a connection of its own to the groupd at endpoint (the first call starts
 *  it; later ones tell it of a new child).  Call it after gimpi_kids_add. */
void gimpi_kids_watch(gimpi_kids_t *self, const char *endpoint);
/*  Without waiting: each watched child that has ended is reported to groupd through gd
 *  and forgotten, and a few that registered meanwhile (asked with LOOKUP, backing off)
 *  are forgotten too.  How many deaths were reported.  Does nothing while the watcher
 *  thread runs. */
int gimpi_kids_reap(gimpi_kids_t *self, gimpi_groups_t *gd);
/*  The watch list of a task (gimpi_task.c). */
gimpi_kids_t *gimpi_task_kids(gimpi_t *self);

#endif
