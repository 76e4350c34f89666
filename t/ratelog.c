/*  t/ratelog.c — the rate limit of log lines about strangers (libgimpi/base/gimpi_ratelog.c):
 *  per_sec lines in a window, the rest counted and handed back once the window is over,
 *  the summary's due time, a forced close, and a new window at the next event.
 */
#include "gtap.h"
#include "base/gimpi_ratelog.h"

#include <stddef.h>

int main(void)
{
    plan(NO_PLAN);
    gimpi_ratelog_t rl = { .per_sec = 5 };
    cmp_ok(gimpi_ratelog_due_ms(&rl, 0), "==", -1, "nothing held: no summary due");
    cmp_ok(gimpi_ratelog_roll(&rl, 5000, false), "==", 0, "no window: nothing to roll");
    int shown = 0;
    for (int i = 0; i < 12; i++)
        shown += gimpi_ratelog_event(&rl, 1000 + i);
    cmp_ok(shown, "==", 5, "12 events in a window: 5 lines");
    cmp_ok(gimpi_ratelog_due_ms(&rl, 1400), "==", 600, "the summary is due when the window ends");
    cmp_ok(gimpi_ratelog_roll(&rl, 1999, false), "==", 0, "not before");
    cmp_ok(gimpi_ratelog_roll(&rl, 2000, false), "==", 7, "then 7 held back for the summary");
    cmp_ok(gimpi_ratelog_roll(&rl, 3000, false), "==", 0, "and only once");
    ok(gimpi_ratelog_event(&rl, 3500), "the next event opens a new window");
    cmp_ok(gimpi_ratelog_due_ms(&rl, 3500), "==", -1, "with nothing held");
    for (int i = 0; i < 5; i++)
        gimpi_ratelog_event(&rl, 3600);
    cmp_ok(gimpi_ratelog_roll(&rl, 3700, true), "==", 1, "forced: the held count at once");
    cmp_ok((long)rl.total, "==", 18, "every event counted in total");
    done_testing();
}
