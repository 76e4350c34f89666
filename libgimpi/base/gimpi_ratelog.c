/*  gimpi_ratelog.c — counting log lines about strangers per one-second window
 *  (gimpi_ratelog.h says how).
 */
#include "base/gimpi_ratelog.h"

#include <assert.h>

/*  Closes an ended window; returns what it held back (gimpi_ratelog.h). */
int gimpi_ratelog_roll(gimpi_ratelog_t *rl, int64_t now_ms, bool force)
{
    assert(rl);
    if (!rl->open || (!force && now_ms - rl->start_ms < 1000))
        return 0;
    int held = rl->held;
    rl->open = false;
    rl->shown = rl->held = 0;
    return held;
}

/*  Counts one event (gimpi_ratelog.h). */
bool gimpi_ratelog_event(gimpi_ratelog_t *rl, int64_t now_ms)
{
    assert(rl);
    if (!rl->open) {
        rl->open = true;
        rl->start_ms = now_ms;
    }
    rl->total++;
    if (rl->shown < rl->per_sec) {
        rl->shown++;
        return true;
    }
    rl->held++;
    return false;
}

/*  Time until a pending summary is due (gimpi_ratelog.h). */
int gimpi_ratelog_due_ms(const gimpi_ratelog_t *rl, int64_t now_ms)
{
    assert(rl);
    if (!rl->open || !rl->held)
        return -1;
    int64_t left = rl->start_ms + 1000 - now_ms;
    return left > 0 ? (int)left : 0;
}
