/*  fuzz/fuzz_hostset.c — libFuzzer target for the host set's parsers
 *  (libgimpi/base/gimpi_hostset.c).  Input: one mode byte, then text.  Mode 0: hostfile
 *  lines, each given to gimpi_hostset_add_line (as pvm_addhosts does); mode 1: a Slurm
 *  environment, three lines SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE and
 *  SLURM_JOB_CPUS_PER_NODE, given to gimpi_hostset_add_slurm; mode 2: a -H list.
 *  Invariants: the set stays within its limits (hosts, slots, speed), every host is
 *  found by its own name, a refused call leaves the set as it was and says why, and
 *  placement puts every task on a started host.
 */
#include "fuzz_check.h"
#include "base/gimpi_hostset.h"

#include <string.h>

/*  A cheap fingerprint of the set, to see that a refused call changed nothing. */
static unsigned long s_print(gimpi_hostset_t *hs)
{
    unsigned long h = 5381;
    for (int i = 0; i < gimpi_hostset_size(hs); i++) {
        const gimpi_hostinfo_t *x = gimpi_hostset_get(hs, i);
        for (const char *p = x->name; *p; p++)
            h = h * 33 + (unsigned char)*p;
        h = h * 33 + (unsigned long)x->slots * 2 + x->later;
    }
    return h;
}

/*  The set's invariants. */
static void s_check(gimpi_hostset_t *hs)
{
    int n = gimpi_hostset_size(hs), total = 0;
    CHECK(n >= 0 && n <= GIMPI_HOSTSET_MAX_HOSTS);
    for (int i = 0; i < n; i++) {
        const gimpi_hostinfo_t *h = gimpi_hostset_get(hs, i);
        CHECK(h != NULL);
        CHECK(h->name[0] && memchr(h->name, '\0', sizeof h->name));
        CHECK(h->name[0] != '-');
        CHECK(memchr(h->wd, '\0', sizeof h->wd) && memchr(h->ep, '\0', sizeof h->ep));
        CHECK(memchr(h->login, '\0', sizeof h->login) && h->login[0] != '-');
        CHECK(h->slots >= 1 && h->slots <= GIMPI_HOSTSET_MAX_SLOTS);
        CHECK(h->speed >= 1 && h->speed <= GIMPI_HOSTSET_MAX_SPEED);
        CHECK(gimpi_hostset_find(hs, h->name) == i);
        total += h->later ? 0 : h->slots;
    }
    CHECK(gimpi_hostset_get(hs, n) == NULL);
    CHECK(gimpi_hostset_total_slots(hs) == total);
    int out[64];
    if (total > 0) {
        CHECK(gimpi_hostset_place(hs, 64, total / 2, out) == 64);
        for (int k = 0; k < 64; k++)
            CHECK(out[k] >= 0 && out[k] < n && !gimpi_hostset_get(hs, out[k])->later);
    } else {
        CHECK(gimpi_hostset_place(hs, 1, 0, out) == -1);
    }
}

/*  The three Slurm variables from the fuzz input. */
typedef struct {
    const char *nodes, *tasks, *cpus;
} s_env_t;

/*  Lookup callback over s_env_t. */
static const char *s_get(const char *name, void *arg)
{
    s_env_t *e = arg;
    if (strcmp(name, "SLURM_JOB_NODELIST") == 0)
        return e->nodes;
    if (strcmp(name, "SLURM_TASKS_PER_NODE") == 0)
        return e->tasks;
    if (strcmp(name, "SLURM_JOB_CPUS_PER_NODE") == 0)
        return e->cpus;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 200000)
        return 0;
    int mode = data[0] % 3;
    char *text = malloc(size);
    CHECK(text != NULL);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    gimpi_hostset_t *hs = gimpi_hostset_new();
    CHECK(hs != NULL);
    char err[GIMPI_HOSTSET_ERRLEN];
    if (mode == 0) {
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            unsigned long before = s_print(hs);
            err[0] = '\0';
            int rc = gimpi_hostset_add_line(hs, line, err, sizeof err);
            CHECK(rc >= -1 && rc <= 1);
            if (rc < 0)
                CHECK(err[0] && s_print(hs) == before);
            s_check(hs);
        }
    } else if (mode == 1) {
        s_env_t env = { text, NULL, NULL };
        char *nl = strchr(text, '\n');
        if (nl) {
            *nl = '\0';
            env.tasks = nl + 1;
            if ((nl = strchr(env.tasks, '\n'))) {
                *nl = '\0';
                env.cpus = nl + 1;
            }
        }
        gimpi_hostset_add_list(hs, "pre:2", NULL, 0);
        unsigned long before = s_print(hs);
        err[0] = '\0';
        int rc = gimpi_hostset_add_slurm(hs, s_get, &env, err, sizeof err);
        CHECK(rc >= -1 && rc <= GIMPI_HOSTSET_MAX_HOSTS);
        if (rc <= 0)
            CHECK(s_print(hs) == before);
        if (rc < 0)
            CHECK(err[0]);
        s_check(hs);
    } else {
        unsigned long before = s_print(hs);
        err[0] = '\0';
        int rc = gimpi_hostset_add_list(hs, text, err, sizeof err);
        if (rc < 0)
            CHECK(err[0] && s_print(hs) == before);
        else
            CHECK(gimpi_hostset_size(hs) <= rc);
        s_check(hs);
    }
    gimpi_hostset_destroy(&hs);
    free(text);
    return 0;
}
