/*
 * kube_term.c - what this replica may do now, under leader election: the questions the
 * write-back, the cycle thread and the server ask (kube__may_write, kube_cycle_begin,
 * kube__writeback_turn, kube_leader) and the state GET /api/v1/sources shows. The lease
 * thread (kube_lease.c) changes the answers; k->mu guards them.
 */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "kube_internal.h"

int kube__lease_fresh(struct kube *k, int64_t now)
{
    return now - k->lease.renewed_ms < k->opts.renew_deadline_ms;
}

int kube__may_write(struct kube *k)
{
    if (!k->opts.leader_elect)
        return 1;
    pthread_mutex_lock(&k->mu);
    int ok = k->lease.role == KUBE_LEADING && kube__lease_fresh(k, clock_mono_ms()) &&
             (!k->scheduler_name || k->lease.writeback_term == k->lease.term);
    pthread_mutex_unlock(&k->mu);
    return ok;
}

int kube__authoritative(struct kube *k)
{
    if (!k->opts.leader_elect)
        return 0;
    pthread_mutex_lock(&k->mu);
    int yes = k->lease.role != KUBE_LEADING;
    pthread_mutex_unlock(&k->mu);
    return yes;
}

int kube__writeback_turn(struct kube *k, uint64_t *my_term, uint64_t *from)
{
    if (!k->opts.leader_elect)
        return 1;
    pthread_mutex_lock(&k->mu);
    int turn = k->lease.role == KUBE_LEADING;
    if (turn && *my_term != k->lease.term) {
        *my_term = k->lease.term;
        *from = k->lease.abandon_seq;
        if (k->c.ack_seq < *from)
            k->c.ack_seq = *from;
        k->lease.writeback_term = *my_term;
        turn = 2;
    }
    pthread_mutex_unlock(&k->mu);
    return turn;
}

int kube_leader(struct kube *k, char *holder, size_t n)
{
    if (holder && n)
        holder[0] = '\0';
    if (!k->opts.leader_elect)
        return 1;
    pthread_mutex_lock(&k->mu);
    int lead = k->lease.role == KUBE_LEADING;
    if (holder && n)
        snprintf(holder, n, "%s", k->lease.holder);
    pthread_mutex_unlock(&k->mu);
    return lead;
}

int kube_cycle_begin(struct kube *k)
{
    if (!k->opts.leader_elect)
        return 1;
    pthread_mutex_lock(&k->mu);
    int ok = k->lease.role == KUBE_LEADING && kube__lease_fresh(k, clock_mono_ms());
    if (ok)
        k->lease.cycling = 1;
    pthread_mutex_unlock(&k->mu);
    return ok;
}

void kube_cycle_end(struct kube *k)
{
    if (!k->opts.leader_elect)
        return;
    pthread_mutex_lock(&k->mu);
    k->lease.cycling = 0;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
}

json_t *kube_leader_json(struct kube *k)
{
    static const char *const states[] = {"following", "syncing", "leading"};
    if (!k || !k->opts.leader_elect)
        return NULL;
    pthread_mutex_lock(&k->mu);
    struct kube_lease l = k->lease;
    pthread_mutex_unlock(&k->mu);
    char ts[40] = "", lease[260];
    if (l.renewed_wall_ms)
        clock_format_rfc3339_ms(l.renewed_wall_ms, ts, sizeof(ts));
    snprintf(lease, sizeof(lease), "%s/%s", l.ns, l.name);
    return json_pack("{s:s,s:s,s:s,s:s?,s:s,s:f,s:f,s:f,s:I,s:s?,s:I,s:I,s:I,s:I,s:s?}", "role",
                     l.role == KUBE_LEADING ? "leader" : "follower", "state", states[l.role],
                     "identity", l.identity, "leader", l.holder[0] ? l.holder : NULL, "lease",
                     lease, "leaseDurationSeconds", (double)k->opts.lease_duration_ms / 1000.0,
                     "renewDeadlineSeconds", (double)k->opts.renew_deadline_ms / 1000.0,
                     "retryPeriodSeconds", (double)k->opts.retry_period_ms / 1000.0,
                     "leaseTransitions", (json_int_t)l.transitions, "lastRenew", ts[0] ? ts : NULL,
                     "term", (json_int_t)l.term, "acquisitions", (json_int_t)l.acquisitions,
                     "losses", (json_int_t)l.losses, "renewFailures", (json_int_t)l.renew_failures,
                     "lastLoss", l.last_loss[0] ? l.last_loss : NULL);
}
