/* thread.c - thread names and policies (thread.h). */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "log.h"
#include "thread.h"

void thread_batch(const char *name)
{
    struct sched_param sp;
    int policy;
    pthread_setname_np(pthread_self(), name);
    if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 || policy != SCHED_OTHER)
        return;
    sp.sched_priority = 0;
    int rc = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    if (rc != 0)
        log_debug("%s: no SCHED_BATCH: %s", name, strerror(rc));
}
