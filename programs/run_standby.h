/*  run_standby.h — the job's standby groupd (run_standby.c): where it runs, its start
 *  through an agent or here, what it says, its end.
 */
#ifndef GIMPI_RUN_STANDBY_H
#define GIMPI_RUN_STANDBY_H

#include "programs/run_state.h"
#include "programs/run_hosts.h"

/*  A standby's state, as run_vm.c sees it. */
typedef enum {
    RUN_SB_NONE,                /* no standby */
    RUN_SB_STARTING,            /* started, not yet following */
    RUN_SB_READY,               /* follows the primary */
    RUN_SB_TOOK_OVER,           /* said it took over */
    RUN_SB_ENDED,               /* ended (run_standby_info's status) */
} run_sb_state_t;

int run_groupd_bin(char *buf, size_t size, char *tried, size_t triedsize);
bool run_standby_supported(void);
const char *run_host_addr(launcher_t *self, const host_t *h);
int run_standby_check(launcher_t *self, const host_t *on, char *err, size_t errsize);
int run_standby_pick(launcher_t *self, int primary, bool first);
int run_standby_start(launcher_t *self, int hi, const char *primary_ep, int port, int pub_port,
                      char *err, size_t errsize);
int run_standby_line(launcher_t *self, task_t *t, const char *line, size_t len);
bool run_standby_task_ended(launcher_t *self, task_t *t);
bool run_standby_reaped(launcher_t *self, pid_t pid, int status);
run_sb_state_t run_standby_state(launcher_t *self);
int run_standby_info(launcher_t *self, const char **ep, const char **token,
                     const char **journal, int *status);
void run_standby_promote(launcher_t *self, task_t **task, pid_t *pid);
void run_standby_forget(launcher_t *self);
void run_standby_watch_primary(launcher_t *self, int fd);
void run_standby_signal(launcher_t *self, int sig);

#endif
