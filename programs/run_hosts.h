/*  run_hosts.h — the launcher's hosts (run_hosts.c): this machine and one gimpi-agent per
 *  other host; the frames to and from the agents, placing spawned tasks, the hosts' end.
 *  What happens to hosts and their tasks is reported through the launcher's events.
 */
#ifndef GIMPI_RUN_HOSTS_H
#define GIMPI_RUN_HOSTS_H

#include "programs/run_state.h"

int run_hosts_init(launcher_t *self);
int run_hosts_start_agents(launcher_t *self, int first, char *err, size_t errsize);
int run_hosts_wait(launcher_t *self, bool (*done)(launcher_t *), int timeout_ms);
int run_hosts_send(host_t *h, uint8_t *frame);
int run_hosts_add(launcher_t *self, const gimpi_hostinfo_t *info, char *err, size_t errsize);
void run_hosts_quit(launcher_t *self, host_t *h);
void run_hosts_kill(launcher_t *self, task_t *t, int sig);
void run_hosts_forget_journal(launcher_t *self, task_t *t, const char *name);
int run_hosts_pick(launcher_t *self, int flags, const char *where);
void run_hosts_fini(launcher_t *self);
int run_hosts_reaped(launcher_t *self, pid_t pid, int status);
bool run_hosts_busy(launcher_t *self);
void run_hosts_give_up(launcher_t *self);

#endif
