/*  t/tunables_table.c — the table of environment variables (libgimpi/base/gimpi_tunables.c):
 *  its rows are well formed and unique, gimpi_env answers as getenv does for a name of the
 *  table and stops the program on any other name, gimpi_env_entry reads one entry of an
 *  environment block, gimpi_env_of_pid reads a process's starting environment, and the
 *  --config printer tells values from the environment, defaults and unknown variables.
 *  t/tunables.sh checks the table against the sources and the programs.
 */
#include "gtap.h"
#include "base/gimpi_tunables.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/*  1 when s is a variable name: capitals, digits and _. */
static int s_is_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/*  Every row: a name, a known kind, text in every field, found by name, unique. */
static void s_rows(void)
{
    size_t n = gimpi_tunables_count(), bad = 0, dup = 0;
    for (size_t i = 0; i < n; i++) {
        const gimpi_tunable_t *t = gimpi_tunable_at(i);
        if (!t || !t->name || !s_is_name(t->name) || !t->dflt || !t->unit || !*t->unit
            || !t->what || !*t->what || !t->readers || !*t->readers
            || (t->kind != GIMPI_TUNE_USER && t->kind != GIMPI_TUNE_SET
                && t->kind != GIMPI_TUNE_TEST) || strchr(t->what, '|')) {
            diag("row %zu (%s) is malformed", i, t && t->name ? t->name : "?");
            bad++;
            continue;
        }
        if (gimpi_tunable_find(t->name) != t) {
            diag("%s has two rows", t->name);
            dup++;
        }
    }
    cmp_ok(n, ">=", 40, "the table has its rows (%zu)", n);
    cmp_ok(bad, "==", 0, "every row has a name, a kind, a unit, a meaning and its readers");
    cmp_ok(dup, "==", 0, "no name has two rows");
    ok(gimpi_tunable_at(n) == NULL, "past the end: NULL");
    ok(gimpi_tunable_find("GIMPI_NOT_A_VARIABLE") == NULL && gimpi_tunable_find(NULL) == NULL,
       "an unknown name has no row");
    is(gimpi_tune_kind_name(GIMPI_TUNE_SET), "set by gimpi", "kind names");
}

/*  gimpi_env is getenv for a name of the table. */
static void s_env(void)
{
    unsetenv("GIMPI_SPIN_US");
    ok(gimpi_env("GIMPI_SPIN_US") == NULL, "unset: NULL");
    setenv("GIMPI_SPIN_US", "123", 1);
    ok(gimpi_env("GIMPI_SPIN_US") == getenv("GIMPI_SPIN_US"), "set: getenv's own pointer");
    is(gimpi_env("GIMPI_SPIN_US"), "123", "set: the value");
    unsetenv("GIMPI_SPIN_US");
    is(gimpi_env_entry("GIMPI_TID=42", "GIMPI_TID"), "42", "an entry's value");
    ok(gimpi_env_entry("GIMPI_TID_TOKEN=x", "GIMPI_TID") == NULL, "a longer name is another");
    ok(gimpi_env_entry("GIMPI_TID", "GIMPI_TID") == NULL, "no '=': no value");
    is(gimpi_env_entry("GIMPI_TID=", "GIMPI_TID"), "", "an empty value");
}

/*  A name missing from the table stops the program with a message naming it. */
static void s_unknown(void)
{
    int p[2];
    if (pipe(p) < 0) {
        fail("pipe");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);                      /* a child that does not stop ends anyway */
        dup2(p[1], 2);
        close(p[0]);
        gimpi_env("GIMPI_NOT_A_VARIABLE");
        _exit(0);
    }
    close(p[1]);
    char buf[512] = "";
    size_t len = 0;
    ssize_t r;
    while (len < sizeof buf - 1 && (r = read(p[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = 0;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
#ifdef NDEBUG
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "an unknown name: the program goes on (NDEBUG)");
#else
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "an unknown name stops the program");
#endif
    ok(strstr(buf, "GIMPI_NOT_A_VARIABLE") && strstr(buf, "gimpi_tunables.c"),
       "with a message naming the variable and the table");
}

/*  gimpi_env_of_pid of this process: the environment it was started with. */
static void s_of_pid(void)
{
    char **envp = gimpi_env_of_pid((int)getpid());
    ok(envp != NULL, "this process's starting environment");
    size_t n = 0, missing = 0;
    while (envp && envp[n])
        n++;
    for (size_t i = 0; envp && environ[i]; i++) {
        size_t k = 0;
        while (k < n && strcmp(envp[k], environ[i]))
            k++;
        missing += k == n;
    }
    cmp_ok(missing, "==", 0, "every variable the process started with is there (%zu)", n);
    free(envp);
    ok(gimpi_env_of_pid(0) == NULL, "no process 0: NULL");
}

/*  The --config printer over a made-up environment. */
static void s_config(void)
{
    char *const envp[] = { "HOME=/nowhere", "GIMPI_LINK_TIMEOUT=17", "GIMPI_NO_SUCH=1",
                           "IMPI_AUTH_KEY=12345", NULL };
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    int unknown = gimpi_tunables_print_config(out, envp, false);
    fclose(out);
    cmp_ok(unknown, "==", 1, "one unknown variable");
    ok(strstr(text, "\nGIMPI_LINK_TIMEOUT         environment  17 s\n") != NULL,
       "a set variable: from the environment, with its value and unit");
    ok(strstr(text, "\nGIMPI_SPIN_US              default      500 us\n") != NULL,
       "an unset variable: its default");
    ok(strstr(text, "\nGIMPI_NO_SUCH              unknown      1\n") != NULL,
       "a GIMPI_ variable out of the table: unknown");
    ok(strstr(text, "IMPI_AUTH_KEY              environment  (set, not shown)\n")
       && !strstr(text, "12345"), "a secret is not shown");
    ok(!strstr(text, "HOME"), "other variables are not listed");
    free(text);
    text = NULL;
    out = open_memstream(&text, &size);
    gimpi_tunables_print_config(out, envp, true);
    fclose(out);
    ok(!strncmp(text, "{\"tunables\":[", 13)
       && strstr(text, "{\"name\":\"GIMPI_LINK_TIMEOUT\",\"source\":\"environment\","
                       "\"value\":\"17\",\"unit\":\"s\",\"kind\":\"tunable\"}"),
       "as JSON");
    free(text);
}

int main(void)
{
    plan(NO_PLAN);
    s_rows();
    s_of_pid();                         /* before any setenv: environ is the starting one */
    s_env();
    s_unknown();
    s_config();
    done_testing();
}
