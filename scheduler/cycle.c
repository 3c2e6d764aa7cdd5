#include "internal.h"

int sched_cycle(struct sched *s, int64_t now_ms, json_t **summary, struct err *err)
{
    return err_set(err, ERR_UNAVAILABLE, "scheduling cycles are not implemented yet");
}
