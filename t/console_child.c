/*  t/console_child.c — a PVM program that the console's tests (t/console.sh,
 *  t/vm_console.sh) spawn with `gimpi spawn`.  argv[1] says what to do:
 *    parent FIFO   reads a byte from FIFO (the test writes it once the spawning console
 *                  has exited), then enrols (calling its parent, as every spawned task
 *                  does), sends a message to its parent and prints "sent RC": a console
 *                  that is gone
 *    hello         prints "hello from HOST" on stdout and "to stderr from HOST" on stderr
 *                  and leaves: the output a console's `spawn ->` shows
 */
#include "pvm3.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*  Waits for the test's word on fifo, then enrols and sends to the parent. */
static int s_parent(const char *fifo)
{
    int fd = open(fifo, O_RDONLY);
    char c;
    if (fd < 0 || read(fd, &c, 1) < 0)
        return 1;
    close(fd);
    if (pvm_mytid() < 0)
        return 1;
    pvm_initsend(PvmDataDefault);
    int rc = pvm_send(pvm_parent(), 1);
    printf("sent %d\n", rc < 0 ? rc : 0);
    fflush(stdout);
    pvm_exit();
    return 0;
}

/*  One line on each stream, naming this host. */
static int s_hello(void)
{
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    printf("hello from %s\n", host);
    fflush(stdout);
    fprintf(stderr, "to stderr from %s\n", host);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "parent"))
        return s_parent(argv[2]);
    if (argc > 1 && !strcmp(argv[1], "hello"))
        return s_hello();
    fprintf(stderr, "usage: console_child parent FIFO | hello\n");
    return 2;
}
