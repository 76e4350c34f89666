/*  gd_witness.c — groupd's side of the witness (see gd_witness.h): the question on stdout
 *  and the grant read from the signalfd.
 */
#include "config.h"
#include "groupd/gd_witness.h"

#include <assert.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

/*  Reads one signal. */
int gd_witness_signal(groupd_t *self)
{
    assert(self);
    struct signalfd_siginfo si;
    if (self->sig_fd < 0 || read(self->sig_fd, &si, sizeof si) != (ssize_t)sizeof si)
        return 0;
    return (int)si.ssi_signo;
}

/*  Asks. */
void gd_witness_ask(groupd_t *self, const char *what, int32_t term, const char *why)
{
    assert(self && what && why);
    printf("groupd-witness: ask %s term %d (%s)\n", what, (int)term, why);
    fflush(stdout);
}
