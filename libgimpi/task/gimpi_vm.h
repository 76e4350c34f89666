/*  gimpi_vm.h — what the task layer shares about the virtual machine (gimpi_vm.c): whether
 *  a manager serves this task, and one request to it.  The public calls are in gimpi.h.
 */
#ifndef GIMPI_VM_H
#define GIMPI_VM_H

#include "gimpi.h"

#include <stddef.h>
#include <stdint.h>

/*  1 when a virtual machine's manager has published a host table in this task's groupd. */
int gimpi_vm_present(gimpi_t *self);

/*  Sends one request frame (taken: freed here) to the manager through groupd and decodes
 *  the VM_RESULTS answer into results[n] (when results is not NULL).  The manager's
 *  status, or an error (GIMPI_ENOHOST: no manager; GIMPI_ESYSERR: no answer in time). */
int gimpi_vm_request(gimpi_t *self, uint8_t *frame, int32_t *results, int n);

#endif
