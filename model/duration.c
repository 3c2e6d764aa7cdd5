/*
 * duration.c - Go durations ("90s", "1h30m", "1.5h") as milliseconds, for the
 * annotations that hold them (a gang's waiting time, a job's expected runtime, a
 * queue's longest wait).
 */
#include "model_objects.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

int model_duration_parse(const char *s, int64_t *ms, struct err *err)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 6e4}, {"h", 3.6e6}};
    const char *p = s;
    double total = 0;
    if (!s || !*s)
        return err_set(err, ERR_INVALID, "empty duration");
    if (!strcmp(s, "0")) {
        *ms = 0;
        return 0;
    }
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p) && *p != '.')
            return err_set(err, ERR_INVALID, "invalid duration '%s'", s);
        double n = strtod(p, &end);
        size_t k = 0, best = sizeof(units) / sizeof(units[0]);
        for (; k < sizeof(units) / sizeof(units[0]); k++) /* longest unit first: "ms" not "m" */
            if (!strncmp(end, units[k].unit, strlen(units[k].unit)) &&
                (best == sizeof(units) / sizeof(units[0]) ||
                 strlen(units[k].unit) > strlen(units[best].unit)))
                best = k;
        if (end == p || best == sizeof(units) / sizeof(units[0]))
            return err_set(err, ERR_INVALID, "invalid duration '%s' (units ns, us, ms, s, m, h)",
                           s);
        total += n * units[best].ms;
        p = end + strlen(units[best].unit);
    }
    if (total > 9.2e18)
        return err_set(err, ERR_INVALID, "duration '%s' is too long", s);
    *ms = (int64_t)total;
    return 0;
}
