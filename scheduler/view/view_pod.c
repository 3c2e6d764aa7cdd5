/*
 * view_pod.c - pods put into and deleted from the view by name (view_pod.h). Where a pod
 * counts and its nomination are view_bind.c's, its shape view_shape.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"
#include "view_base.h"
#include "view_bind.h"
#include "view_class.h"
#include "view_labels.h"
#include "view_pod.h"
#include "view_queue.h"
#include "view_shape.h"
#include "view_wait.h"

static void pod_remove(struct sched_view *v, int pi);

static int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int requests_eq(const struct model_pod *a, const struct model_pod *b)
{
    if (a->nrequests != b->nrequests)
        return 0;
    for (size_t i = 0; i < a->nrequests; i++)
        if (strcmp(a->requests[i].name, b->requests[i].name) ||
            a->requests[i].value != b->requests[i].value)
            return 0;
    return 1;
}

static int labels_eq(const struct model_pod *a, const struct model_pod *b)
{
    if (a->nlabels != b->nlabels)
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].key, b->labels[i].key) ||
            !str_eq(a->labels[i].value, b->labels[i].value))
            return 0;
    return 1;
}

/* The events (view_wait.c) of pod m replacing old (NULL for a new pod): capacity when the
 * old one gave room back (unbound, moved, finished, asking less or otherwise, relabelled:
 * rules of other pods against it may pass now, or its nomination dropped or moved);
 * placement when m is newly placed or relabelled; the preemptors nominated to its node
 * when it was a victim terminating there and is no longer. A status update that changes none of
 * that (a bound pod reported Running) wakes nobody. */
static void put_events(struct sched_view *v, const struct sv_pod *old, const struct model_pod *m)
{
    int counted = m->node_name && !model_pod_terminal(m);
    int same = old && str_eq(old->m.node_name, m->node_name) && requests_eq(&old->m, m) &&
               labels_eq(&old->m, m) && model_pod_terminal(&old->m) == model_pod_terminal(m);
    if (old && !(counted && m->deletion_ms && str_eq(old->m.node_name, m->node_name)))
        sched__wait_victim_gone(v, old); /* no longer terminating there */
    if (old && old->counted && !same) {
        sched__wait_freed(v, old->node);
        if (v->nqueues > 1) /* its queue's usage moved */
            sched__wait_event(v, SV_EV_QUEUE);
    }
    if (old && old->nominated >= 0 && !str_eq(old->m.nominated_node, m->nominated_node))
        sched__wait_freed(v, old->nominated);
    if (counted && !(old && old->counted && same))
        sched__wait_event(v, SV_EV_PLACED);
}

/* Pod p's requests as the view's resources (a pod slot always counts, once). */
static void pod_requests(struct sched_view *v, struct sv_pod *p)
{
    p->req = xcalloc(p->m.nrequests + 1, sizeof(*p->req));
    int has_pods = 0;
    for (size_t i = 0; i < p->m.nrequests; i++) {
        if (p->m.requests[i].value <= 0)
            continue;
        int r = sched__view_res(v, p->m.requests[i].name);
        has_pods |= r == SV_RES_PODS;
        p->req[p->nreq++] = (struct sv_req){r, p->m.requests[i].value};
    }
    if (!has_pods)
        p->req[p->nreq++] = (struct sv_req){SV_RES_PODS, 1};
}

/* Pod slot pi joins its job of key job (taken) and hash h: the job's index. */
static int pod_join_job(struct sched_view *v, int pi, char *job, uint32_t h)
{
    struct sv_pod *p = &v->pods[pi];
    int ji = sched__view_job_take(v, job, h);
    struct sv_job *j = &v->jobs[ji];
    XGROW(j->pods, j->npods + 1, j->cappods);
    j->pods[j->npods++] = pi;
    p->job = ji;
    return ji;
}

void sched__pod_keys(const struct model_pod *m, struct sv_pod_keys *k)
{
    char job[512];
    k->key = sched__str_join(m->ns, '/', m->name);
    if (m->group) { /* its gang's ("g:ns/group"), else its own ("p:ns/name"), cut as every
                       key of the job map is (sched__view_job_key) */
        char id[512];
        sched__str_join_to(id, sizeof(id), m->ns, '/', m->group);
        sched__view_job_key(job, id, 1);
    } else {
        sched__view_job_key(job, k->key, 0);
    }
    k->job = xstrdup(job);
    k->key_h = sched__strmap_hash(k->key);
    k->job_h = sched__strmap_hash(k->job);
    k->node_h = m->node_name ? sched__strmap_hash(m->node_name) : 0;
}

void sched__pod_keys_release(struct sv_pod_keys *k)
{
    if (!k)
        return;
    free(k->key);
    free(k->job);
    memset(k, 0, sizeof(*k));
}

void sched__view_put_pod(struct sched_view *v, struct model_pod *m)
{
    struct sv_pod_keys k;
    sched__pod_keys(m, &k);
    sched__view_put_pod_keyed(v, m, &k);
}

void sched__view_put_pod_keyed(struct sched_view *v, struct model_pod *m, struct sv_pod_keys *k)
{
    char *key = k->key, *job = k->job; /* taken */
    const uint32_t key_h = k->key_h, job_h = k->job_h, node_h = k->node_h;
    memset(k, 0, sizeof(*k));
    int old = sched__strmap_get_h(&v->pod_ix, key, key_h), held = -1;
    put_events(v, old >= 0 ? &v->pods[old] : NULL, m);
    if (old >= 0) {
        /* an update is the same pod: its job keeps its last attempt's result, whether it
         * starves and its why memory even when the pod is its only one */
        held = v->pods[old].job;
        v->jobs[held].held = 1;
        sched__wait_wake(v, held);
        pod_remove(v, old);
    }
    int pi = sched__slot_pop(&v->fpods);
    if (pi < 0) {
        XGROW(v->pods, v->npods + 1, v->cappods);
        pi = (int)v->npods++;
    }
    struct sv_pod *p = &v->pods[pi];
    memset(p, 0, sizeof(*p));
    if (m->deadline_ms > 0) /* the housekeeping looks at its deadline (cycle_housekeeping.c) */
        v->deadline_next_ms = 0;
    p->key = key;
    p->m = *m;
    memset(m, 0, sizeof(*m));
    p->alive = 1;
    v->ndeleting += p->m.deletion_ms != 0;
    p->node = -1;
    p->nominated = -1;
    pod_requests(v, p);
    sched__strmap_put_h(&v->pod_ix, key, key_h, pi);
    sched__view_index_pod(v, pi);

    int ji = pod_join_job(v, pi, job, job_h);
    struct sv_job *j = &v->jobs[ji];
    if (held >= 0) { /* the pod may have moved to another job (its group changed) */
        v->jobs[held].held = 0;
        sched__view_job_maybe_free(v, held);
    }
    const struct model_priorityclass *cls = sched__job_class(v, j);
    p->prio = cls ? cls->value : p->m.priority;
    p->never = cls ? cls->preempt_never : p->m.preempt_never;
    p->shape = sched__view_shape_of(v, p);

    if (p->m.node_name) {
        p->node = sched__strmap_get_h(&v->node_ix, p->m.node_name, node_h);
        if (p->node < 0) {
            v->orphans++;
        } else if (!model_pod_terminal(&p->m)) {
            p->counted = 1;
            sched__view_usage(v, p, 1);
        }
    } else if (p->m.nominated_node) {
        int ni = sched__view_node(v, p->m.nominated_node);
        if (ni >= 0) {
            sched__view_nominate_add(v, pi, ni);
            v->epoch++;
        } else {
            v->orphans++;
        }
    }
    sched__queue_pend(v, p, 1); /* in the job's queue as it was: the requeue moves it */
    sched__view_job_requeue(v, ji);
    sched__wait_wake(v, ji);
}

void sched__view_pod_ahead(const struct sched_view *v, const struct sv_pod_keys *k)
{
    sched__strmap_prefetch_h(&v->pod_ix, k->key_h);
    sched__strmap_prefetch_h(&v->job_ix, k->job_h);
    if (k->node_h)
        sched__strmap_prefetch_h(&v->node_ix, k->node_h);
}

void sched__view_del_pod(struct sched_view *v, const char *key)
{
    int pi = sched__view_pod(v, key);
    if (pi < 0)
        return;
    const struct sv_pod *p = &v->pods[pi];
    if (p->counted)
        sched__wait_freed(v, p->node);
    sched__wait_victim_gone(v, p);
    if (p->nominated >= 0)
        sched__wait_freed(v, p->nominated);
    if (v->nqueues > 1 && (p->counted || sched__pod_pending(p))) /* its queue's usage or
                                                                     request moved */
        sched__wait_event(v, SV_EV_QUEUE);
    sched__wait_wake(v, p->job); /* a gang lost a member */
    pod_remove(v, pi);
}

/* Removes pod slot pi (the view's side of a delete, or of a put that replaces it). */
static void pod_remove(struct sched_view *v, int pi)
{
    struct sv_pod *p = &v->pods[pi];
    sched__queue_pend(v, p, -1);
    if (p->counted)
        sched__view_usage(v, p, -1);
    if ((p->m.node_name && p->node < 0) ||
        (!p->m.node_name && p->m.nominated_node && p->nominated < 0))
        v->orphans--;
    sched__view_nominate_clear(v, pi);
    struct sv_job *j = &v->jobs[p->job];
    for (size_t i = 0; i < j->npods; i++) {
        if (j->pods[i] == pi) {
            memmove(&j->pods[i], &j->pods[i + 1], (j->npods - i - 1) * sizeof(int));
            j->npods--;
            break;
        }
    }
    if (j->npods)
        sched__view_job_requeue(v, p->job); /* the pod may have named the queue */
    sched__view_job_maybe_free(v, p->job);
    if (sched__pod_has_terms(p))
        v->nterm_pods--;
    v->ndeleting -= p->m.deletion_ms != 0;
    sched__strmap_del(&v->pod_ix, p->key);
    free(p->key);
    model_pod_release(&p->m);
    free(p->req);
    memset(p, 0, sizeof(*p));
    p->node = p->nominated = -1;
    sched__slot_push(&v->fpods, pi);
    v->epoch++;
}
