/*  run_proc.h — the process helpers gimpirun's files share (run_proc.c): a forked
 *  child's first steps, the programs beside gimpirun, and what a task on another host is
 *  given (environment, working directory, program path, listening address).
 */
#ifndef GIMPI_RUN_PROC_H
#define GIMPI_RUN_PROC_H

#include "base/gimpi_hostset.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

void run_child_start(pid_t launcher, int deathsig);
int run_beside_me(const char *name, char *out, size_t size);
char **run_export_env(const gimpi_hostinfo_t *info, int extra);
void run_free_env(char **env);
const char *run_wd(const gimpi_hostinfo_t *info, char *buf, size_t size);
char *run_abs_prog(const char *prog);
void run_addr_spec(const char *myaddr, const char *ifspec, char *out, size_t size);
int run_ep_port(const char *ep);
int run_read_line(int fd, char *line, size_t size, int ms);
int run_free_port(void);
pid_t run_fork_piped(char **argv, bool both, int *out, char *err, size_t errsize);
bool run_token_line(const char *line, char *out, size_t size);

/*  In the child of a spawn (gimpirun's or an agent's), its environment set and in its
 *  working directory: the path of a spawned task's program name, found as a spawned
 *  task's is (base/gimpi_findprog.h gimpi_findspawn: GIMPI_PATH, the spawner's folder
 *  from GIMPI_SPAWN_DIR, which it removes, PVM's default ep; never PATH), a name with a
 *  slash as given.  0 with it in path, or ENOENT with the places looked in tried. */
int run_find_spawned(const char *name, char *path, size_t size, char *tried, size_t tsize);

#endif
