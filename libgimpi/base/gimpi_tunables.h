/*  gimpi_tunables.h — the one table of the environment variables gimpi reads.
 *
 *  Every variable that any part of gimpi reads (the library, gimpirun, gimpi-agent,
 *  groupd, impi-server, gimpi-stat, the console, the benchmarks) has one row here: its
 *  name, its kind (a setting for users, a variable gimpi sets for the processes it starts
 *  and reads back there, or a knob of the tests and benchmarks), its default as text, its
 *  unit, what it means or bounds, and the files that read it.  Code reads a variable with
 *  gimpi_env("GIMPI_X") instead of getenv("GIMPI_X"): the same answer, and a name missing
 *  from the table stops the program with a message (an undocumented variable is a bug).
 *  doc/tunables.md is printed from this table (`gimpi-stat --tunables-md`), and
 *  `gimpi-stat --config` prints what a process runs with (doc/gimpi-stat.1).
 *  t/tunables.sh checks the table against the sources.
 */
#ifndef GIMPI_TUNABLES_H
#define GIMPI_TUNABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*  What a variable is for. */
typedef enum {
    GIMPI_TUNE_USER,            /* a setting a user may change */
    GIMPI_TUNE_SET,             /* set by gimpi for the processes it starts, read back there */
    GIMPI_TUNE_TEST,            /* a knob of the tests and benchmarks */
} gimpi_tune_kind_t;

/*  One row of the table. */
typedef struct {
    const char *name;           /* the variable, e.g. "GIMPI_LINK_TIMEOUT" */
    gimpi_tune_kind_t kind;
    const char *dflt;           /* the default as text; "(…)" describes one, "" none */
    const char *unit;           /* s, ms, us, bytes, count, switch, path, endpoint, … */
    const char *what;           /* what it means, bounds or switches */
    const char *readers;        /* the files that read it, from the top of the tree,
                                   separated by spaces (a name ending in / is a folder) */
    bool secret;                /* its value is never printed */
} gimpi_tunable_t;

/*  getenv(name), for a name of the table.  A name that is not in the table is a bug: the
 *  program stops with a message naming it (built with NDEBUG: the message, then getenv). */
const char *gimpi_env(const char *name);

/*  The value in entry when entry is "name=value" (one entry of an environment block, such
 *  as another process's /proc/PID/environ), else NULL.  name must be in the table, as for
 *  gimpi_env. */
const char *gimpi_env_entry(const char *entry, const char *name);

/*  The environment process pid was started with (/proc/PID/environ, read at most 4 MiB
 *  far) as a NULL-terminated block of "NAME=value" strings in one allocation: free() it.
 *  NULL with errno set when it cannot be read (no such process, another user's). */
char **gimpi_env_of_pid(int pid);

/*  The row of name, or NULL. */
const gimpi_tunable_t *gimpi_tunable_find(const char *name);

/*  The i-th row (0 ≤ i < gimpi_tunables_count()), or NULL past the end. */
const gimpi_tunable_t *gimpi_tunable_at(size_t i);

/*  The number of rows. */
size_t gimpi_tunables_count(void);

/*  The kind as a word: "tunable", "set by gimpi" or "test". */
const char *gimpi_tune_kind_name(gimpi_tune_kind_t kind);

/*  Prints doc/tunables.md: the whole table as markdown, one section per kind. */
void gimpi_tunables_print_md(FILE *out);

/*  Prints what a process runs with: every row with its value in envp (a NULL-terminated
 *  environment block, "NAME=value" each) and "environment", or its default and
 *  "default"; then the variables of envp that look like gimpi's (GIMPI_…) but are not in
 *  the table, as "unknown".  As text, or as one JSON object with json.  Returns the
 *  number of unknown variables. */
int gimpi_tunables_print_config(FILE *out, char *const *envp, bool json);

#endif
