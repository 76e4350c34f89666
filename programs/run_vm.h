/*  run_vm.h — gimpirun as the manager of a virtual machine (run_vm.c): the job's groupd,
 *  the host table published there, and the tasks' requests it serves.
 */
#ifndef GIMPI_RUN_VM_H
#define GIMPI_RUN_VM_H

#include "programs/run_state.h"

int run_vm_start(launcher_t *self, char *err, size_t errsize);
int run_vm_publish(launcher_t *self);
void run_vm_progress(launcher_t *self);
int run_vm_groupd_line(launcher_t *self, task_t *t, const char *line, size_t len);
void run_vm_task_ended(launcher_t *self, task_t *t);
void run_vm_groupd_died(launcher_t *self, int status);
void run_vm_standby_news(launcher_t *self);
void run_vm_standby_died(launcher_t *self, pid_t pid, int status);
void run_vm_fini(launcher_t *self);
void run_vm_host_clock(launcher_t *self, int token, int sec, int usec);

#endif
