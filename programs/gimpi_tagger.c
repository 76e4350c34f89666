/*  gimpi_tagger.c — gimpi-tagger, the helper a spawn runs beside each child whose output
 *  it tags or catches (doc/spawn.md, "Output" and "Catching output"), so that no copy of
 *  the spawning program stays behind for it:
 *
 *      gimpi-tagger PREFIX          copies the lines of descriptor 3 to stdout and of 4 to
 *                                   stderr, each after PREFIX (base/gimpi_tagout.h)
 *      gimpi-tagger --catch TID     sends what comes out of descriptor 3 as catchout
 *                                   records of task TID on the socket at descriptor 4,
 *                                   then the end (task/gimpi_catch.h)
 *
 *  It ends when its input has ended: every holder of the child's pipes has exited.  Not
 *  a program to run by hand (it is installed in pkglibexecdir).
 */
#include "base/gimpi_tagout.h"
#include "task/gimpi_catch.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  Sends descriptor 3's bytes as records of tid on descriptor 4, then the end. */
static int s_catch(int32_t tid)
{
    char buf[CATCH_CHUNK];
    for (;;) {
        ssize_t r = read(3, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        gimpi_catch_send(4, tid, CATCH_DATA, buf, (size_t)r);
    }
    gimpi_catch_send(4, tid, CATCH_EOF, NULL, 0);
    return 0;
}

/*  Tags or catches, as the arguments say. */
int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--catch"))
        return s_catch((int32_t)strtol(argv[2], NULL, 10));
    if (argc == 2) {
        gimpi_tagout_copy(3, 4, argv[1]);
        return 0;
    }
    fprintf(stderr, "usage: gimpi-tagger PREFIX | gimpi-tagger --catch TID "
            "(run by a spawn, not by hand)\n");
    return 2;
}
