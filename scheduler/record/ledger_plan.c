/*
 * ledger_plan.c - the records of a preemption, built from its typed plan (plan.h): the
 * ledger entry (ledger.c stores it), the audit records write-back reads (outbox.h) and the
 * preemptor's verdict. The only place that turns a preemption into JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox.h"
#include "plan.h"
#include "why.h"
#include "why_msg.h"

void sched__plan_init(struct preempt_plan *p, int job, int trigger, int32_t prio)
{
    memset(p, 0, sizeof(*p));
    p->job = job;
    p->trigger = trigger;
    p->prio = prio;
    p->queue.queue = -1;
}

void sched__cleared_add(struct preempt_cleared *cl, int pi, int job)
{
    if (pi >= 0) {
        XGROW(cl->pods, cl->npods + 1, cl->cappods);
        cl->pods[cl->npods++] = pi;
    }
    for (size_t i = 0; i < cl->njobs; i++)
        if (cl->jobs[i] == job)
            return;
    XGROW(cl->jobs, cl->njobs + 1, cl->capjobs);
    cl->jobs[cl->njobs++] = job;
}

void sched__cleared_release(struct preempt_cleared *cl)
{
    free(cl->pods);
    free(cl->jobs);
    memset(cl, 0, sizeof(*cl));
}

void sched__plan_release(struct preempt_plan *p)
{
    free(p->victims);
    free(p->awaited);
    free(p->broken);
    free(p->pdbs);
    free(p->victim_queues);
    free(p->noms);
    free(p->nodes);
    sched__cleared_release(&p->cleared);
    memset(p, 0, sizeof(*p));
}

/* What decided the plan's nodes (static), NULL when nothing is evicted. */
static const char *chosen_text(int by)
{
    static const char *const text[] = {
        [PREEMPT_BY_PDB] = WHY_MSG_CHOSEN_PDB,
        [PREEMPT_BY_PRIORITY] = WHY_MSG_CHOSEN_PRIORITY,
        [PREEMPT_BY_START] = WHY_MSG_CHOSEN_START,
        [PREEMPT_BY_NAME] = WHY_MSG_CHOSEN_NAME,
        [PREEMPT_BY_PLACEMENT] = WHY_MSG_CHOSEN_PLACEMENT,
        [PREEMPT_BY_ONLY] = WHY_MSG_CHOSEN_ONLY,
    };
    return by >= 0 && (size_t)by < sizeof(text) / sizeof(text[0]) ? text[by] : NULL;
}

/* ---- JSON of the plan's parts (each new) ---- */

static json_t *pod_keys(const struct sched_view *v, const int *pods, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v->pods[pods[i]].key));
    return a;
}

static json_t *job_ids(const struct sched_view *v, const int *jobs, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v->jobs[jobs[i]].id));
    return a;
}

static json_t *node_names(const struct sched_view *v, const int *nodes, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v->nodes[nodes[i]].name));
    return a;
}

static json_t *strings(const char *const *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(s[i]));
    return a;
}

/* "victims": pod, job, node, priority, the budget its eviction violates, its queue. */
static json_t *victims_json(const struct sched_view *v, const struct preempt_plan *p)
{
    json_t *victims = json_array();
    for (size_t i = 0; i < p->nvictims; i++) {
        const struct preempt_victim *x = &p->victims[i];
        const struct sv_pod *pod = &v->pods[x->pod];
        json_t *vo = json_pack("{s:s,s:s,s:s,s:i}", "pod", pod->key, "job", v->jobs[pod->job].id,
                               "node", v->nodes[x->node].name, "priority", (int)pod->prio);
        if (x->pdb)
            json_object_set_new(vo, "pdbViolated", json_string(x->pdb));
        json_object_set_new(vo, "queue",
                            x->queue >= 0 ? json_string(v->queues[x->queue].m.name) : json_null());
        json_array_append_new(victims, vo);
    }
    return victims;
}

/* "resourceSeconds": what the victims requested times how long they ran, per resource. */
static json_t *resource_seconds(const struct sched_view *v, const struct preempt_plan *p)
{
    json_t *rs = json_object();
    for (size_t i = 0; i < p->nvictims; i++) {
        const struct sv_pod *pod = &v->pods[p->victims[i].pod];
        double secs = p->victims[i].ran_s;
        for (int k = 0; k < pod->nreq && secs > 0; k++) {
            const char *res = v->res[pod->req[k].res];
            if (pod->req[k].res == SV_RES_PODS)
                continue;
            double q = (double)pod->req[k].v / (model_resource_is_milli(res) ? 1000.0 : 1.0);
            json_t *old = json_object_get(rs, res);
            json_object_set_new(rs, res, json_real((old ? json_real_value(old) : 0) + q * secs));
        }
    }
    return rs;
}

static json_t *share_json(const struct sched_view *v, const struct preempt_share *s)
{
    return json_pack("{s:s,s:f,s:f}", "name", v->queues[s->queue].m.name, "shareBefore", s->before,
                     "shareAfter", s->after);
}

/* The entry's reclaim part: "kind", and for a reclaim the queues' shares. */
static void entry_kind(const struct sched_view *v, const struct preempt_plan *p, json_t *entry)
{
    json_object_set_new(entry, "kind", json_string(p->reclaim ? "reclaim" : "preemption"));
    if (!p->reclaim)
        return;
    json_object_set_new(entry, "queue", share_json(v, &p->queue));
    json_t *vq = json_array();
    for (size_t i = 0; i < p->nvictim_queues; i++)
        json_array_append_new(vq, share_json(v, &p->victim_queues[i]));
    json_object_set_new(entry, "victimQueues", vq);
}

/* The parts the entry, the audit records and the verdict share. */
struct parts {
    json_t *victims, *nodes, *pods, *pod_nodes, *cleared, *cleared_jobs, *pdbs;
};

static void parts_build(const struct sched_view *v, const struct preempt_plan *p, struct parts *t)
{
    t->victims = victims_json(v, p);
    t->nodes = node_names(v, p->nodes, p->nnodes);
    t->pods = json_array();
    t->pod_nodes = json_array();
    for (size_t i = 0; i < p->nnoms; i++) {
        json_array_append_new(t->pods, json_string(v->pods[p->noms[i].pod].key));
        json_array_append_new(t->pod_nodes, json_string(v->nodes[p->noms[i].node].name));
    }
    t->cleared = pod_keys(v, p->cleared.pods, p->cleared.npods);
    t->cleared_jobs = job_ids(v, p->cleared.jobs, p->cleared.njobs);
    t->pdbs = strings(p->pdbs, p->npdbs);
}

static void parts_release(struct parts *t)
{
    json_t **all[] = {&t->victims, &t->nodes,        &t->pods, &t->pod_nodes,
                      &t->cleared, &t->cleared_jobs, &t->pdbs};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        json_decref(*all[i]);
        *all[i] = NULL;
    }
}

/* The ledger entry (ledger.c's opening comment), without its id. New. */
static json_t *entry_json(struct sched_cyc *c, const struct preempt_plan *p, const struct parts *t)
{
    const struct sched_view *v = c->v;
    json_t *entry = json_pack(
        "{s:I,s:s,s:I,s:s,s:s,s:i,s:O,s:O,s:O,s:{s:i,s:i,s:o,s:o,s:b},s:b,s:n,s:n,s:f,s:i}",
        "cycle", (json_int_t)c->cycle, "ts", sched__cyc_ts(c), "tsMs", (json_int_t)c->now_ms,
        "preemptor", v->jobs[p->job].id, "triggerPod", v->pods[p->trigger].key, "priority",
        (int)p->prio, "victims", t->victims, "nominatedNodes", t->nodes, "nominatedPods", t->pods,
        "cost", "pods", (int)p->nvictims, "gangsBroken", (int)p->nbroken, "brokenGangs",
        job_ids(v, p->broken, p->nbroken), "resourceSeconds", resource_seconds(v, p),
        "planBreaksNoGang", p->nobreak, "bound", 0, "boundAt", "latencyMs", "decisionMs",
        p->decision_ms, "potentialVictims", (int)p->npotential);
    json_object_set_new(entry, "chosen",
                        chosen_text(p->chosen_by) ? json_string(chosen_text(p->chosen_by))
                                                  : json_null());
    json_object_set_new(entry, "awaited", pod_keys(v, p->awaited, p->nawaited));
    json_object_set_new(entry, "pdbViolations", json_integer(p->pdb_violations));
    json_object_set(entry, "pdbsViolated", t->pdbs);
    entry_kind(v, p, entry);
    json_object_set(entry, "clearedNominations", t->cleared);
    json_t *noms = json_object();
    for (size_t i = 0; i < p->nnoms; i++)
        json_object_set_new(noms, v->pods[p->noms[i].pod].key,
                            json_string(v->nodes[p->noms[i].node].name));
    json_object_set_new(entry, "nominations", noms);
    json_object_set(entry, "clearedJobs", t->cleared_jobs);
    return entry;
}

/* ---- audit records (outbox.h) ---- */

/* One "preempted" record per victim job, its victims in key order. */
static int audit_victims(struct sched_cyc *c, const struct preempt_plan *p, uint64_t ledger,
                         struct err *err)
{
    const struct sched_view *v = c->v;
    struct sched_outbox_pod *pods = xcalloc(p->nvictims + 1, sizeof(*pods));
    char *done = xcalloc(p->nvictims + 1, 1);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->nvictims; i++) {
        int job = v->pods[p->victims[i].pod].job;
        size_t n = 0;
        if (done[i])
            continue;
        for (size_t k = i; k < p->nvictims; k++) {
            const struct preempt_victim *x = &p->victims[k];
            if (done[k] || v->pods[x->pod].job != job)
                continue;
            done[k] = 1;
            pods[n++] = (struct sched_outbox_pod){(char *)v->pods[x->pod].key,
                                                  (char *)v->nodes[x->node].name};
        }
        struct sched_outbox_rec r = {
            .kind = STORE_AUDIT_PREEMPTED,
            .job = v->jobs[job].id,
            .cycle = (int64_t)c->cycle,
            .preemptor = v->jobs[p->job].id,
            .trigger_pod = v->pods[p->trigger].key,
            .reason = (char *)MODEL_REASON_PREEMPTION_BY_SCHEDULER,
            .pods = pods,
            .npods = n,
        };
        json_t *rec = sched_outbox_encode(&r);
        json_object_set_new(rec, "ledger", json_integer((json_int_t)ledger));
        rc = sched__audit_append(c, rec, NULL, err);
    }
    free(done);
    free(pods);
    return rc;
}

/* A "nominated" record: job's pods -> nodes (with ledger > 0: its entry), and the
 * nominations it cleared. */
static int audit_nominated(struct sched_cyc *c, int job, const struct preempt_plan *p,
                           const struct preempt_cleared *cl, uint64_t ledger, struct err *err)
{
    const struct sched_view *v = c->v;
    size_t n = p ? p->nnoms : 0;
    struct sched_outbox_pod *pods = xcalloc(n + cl->npods + 1, sizeof(*pods));
    for (size_t i = 0; i < n; i++)
        pods[i] =
            (struct sched_outbox_pod){v->pods[p->noms[i].pod].key, v->nodes[p->noms[i].node].name};
    for (size_t i = 0; i < cl->npods; i++) /* no node: the nomination is removed */
        pods[n + i] = (struct sched_outbox_pod){v->pods[cl->pods[i]].key, NULL};
    struct sched_outbox_rec r = {.kind = STORE_AUDIT_NOMINATED,
                                 .job = v->jobs[job].id,
                                 .cycle = (int64_t)c->cycle,
                                 .pods = pods,
                                 .npods = n + cl->npods};
    json_t *rec = sched_outbox_encode(&r);
    free(pods);
    if (ledger)
        json_object_set_new(rec, "ledger", json_integer((json_int_t)ledger));
    if (cl->npods) { /* the jobs of those pods, so an export by job finds the record */
        json_t *jobs = json_array(), *x;
        for (size_t i = 0; i < cl->npods; i++) {
            int cj = v->pods[cl->pods[i]].job;
            const char *id = cj >= 0 ? v->jobs[cj].id : v->pods[cl->pods[i]].key;
            size_t k;
            int seen = 0;
            json_array_foreach(jobs, k, x) seen |= !strcmp(json_string_value(x), id);
            if (!seen)
                json_array_append_new(jobs, json_string(id));
        }
        json_object_set_new(rec, "clearedJobs", jobs);
    }
    return sched__audit_append(c, rec, NULL, err);
}

/* ---- the verdict ---- */

/* Preempting, or Reclaiming when a victim is of another queue: what was preempted, what
 * it waits for, whose nominations it cleared, the budgets it violates, the entry's id. */
static void verdict(const struct sched_view *v, const struct preempt_plan *p, const struct parts *t,
                    uint64_t ledger, struct sched_preempt_verdict *out)
{
    char n1[32], n2[32], n3[32], text[256];
    sched__preempt_count((long)(p->nvictims + p->nawaited), n3, sizeof(n3));
    sched__preempt_count((long)p->nnodes, n2, sizeof(n2));
    if (p->nvictims)
        snprintf(text, sizeof(text), WHY_MSG_PREEMPTED_PODS,
                 sched__preempt_count((long)p->nvictims, n1, sizeof(n1)), n2, n3);
    else
        snprintf(text, sizeof(text), WHY_MSG_PREEMPT_REUSED, n2, n3);
    size_t len = strlen(text);
    if (p->cleared.njobs) {
        snprintf(text + len, sizeof(text) - len, WHY_MSG_PREEMPT_CLEARED_FIRST,
                 v->jobs[p->cleared.jobs[0]].id);
        len = strlen(text);
        if (p->cleared.njobs > 1)
            snprintf(text + len, sizeof(text) - len, WHY_MSG_PREEMPT_CLEARED_MORE,
                     p->cleared.njobs - 1);
        len = strlen(text);
    }
    if (p->pdb_violations) {
        snprintf(text + len, sizeof(text) - len, WHY_MSG_PREEMPT_PDB, p->pdb_violations, p->pdbs[0],
                 p->npdbs > 1 ? " and others" : "");
        len = strlen(text);
    }
    if (p->reclaim)
        snprintf(text + len, sizeof(text) - len, WHY_MSG_RECLAIMED_FROM,
                 v->queues[p->victim_queues[0].queue].m.name);
    /* later cycles wait: PreemptionWaiting */
    out->code = p->reclaim ? WHY_RECLAIMING : WHY_PREEMPTING;
    out->attempted = out->blocks = 1;
    snprintf(out->reason, sizeof(out->reason), "%s", text);
    out->detail =
        json_pack("{s:I,s:i,s:i,s:O,s:O,s:s,s:i,s:O}", "ledger", (json_int_t)ledger, "victims",
                  (int)p->nvictims, "gangsBroken", (int)p->nbroken, "nominatedNodes", t->nodes,
                  "clearedJobs", t->cleared_jobs, "kind", p->reclaim ? "reclaim" : "preemption",
                  "pdbViolations", (int)p->pdb_violations, "pdbsViolated", t->pdbs);
}

/* ---- entry points ---- */

int sched__record_preemption(struct sched_cyc *c, const struct preempt_plan *p,
                             struct sched_preempt_verdict *out, struct err *err)
{
    struct sched_view *v = c->v;
    struct parts t = {0};
    parts_build(v, p, &t);
    json_t *entry = entry_json(c, p, &t);
    json_t *room = sched__ledger_room_from(c, p);
    json_object_set(entry, "roomFrom", room);
    uint64_t id = 0;
    int rc = sched__ledger_add(c, p, entry, &id, err);
    if (rc == 0)
        c->preemptions++;
    if (rc == 0)
        rc = sched__ledger_room_record(c, v->jobs[p->job].id, id, room, err);
    json_decref(room);
    for (size_t i = 0; rc == 0 && i < p->cleared.njobs; i++)
        rc = sched__ledger_cleared(c, v->jobs[p->cleared.jobs[i]].id, v->jobs[p->job].id, id, err);
    if (rc == 0)
        rc = audit_victims(c, p, id, err);
    if (rc == 0)
        rc = audit_nominated(c, p->job, p, &p->cleared, id, err);
    if (rc == 0)
        verdict(v, p, &t, id, out);
    json_decref(entry);
    parts_release(&t);
    return rc;
}

int sched__record_displaced(struct sched_cyc *c, int by, const struct preempt_cleared *cl,
                            struct err *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < cl->njobs; i++)
        rc = sched__ledger_cleared(c, c->v->jobs[cl->jobs[i]].id, c->v->jobs[by].id, 0, err);
    if (rc == 0 && cl->npods)
        rc = audit_nominated(c, by, NULL, cl, 0, err);
    return rc;
}

int sched__record_evicted(struct sched_cyc *c, const char *key, json_t *old,
                          struct sched_ledger_seen *seen, struct err *err)
{
    char *preemptor = NULL;
    int victim = 0;
    int rc = sched__ledger_victim_take(c->txn, c->opts, c->retain_scan_ms, key, c->now_ms, seen,
                                       &victim, &preemptor, err);
    if (rc < 0 || !victim)
        return rc;
    char *job = sched__object_job(MODEL_POD, old);
    const char *node = json_string_value(json_object_get(json_object_get(old, "spec"), "nodeName"));
    struct sched_outbox_pod pod = {(char *)key, (char *)node};
    struct sched_outbox_rec r = {.kind = STORE_AUDIT_EVICTED,
                                 .job = job,
                                 .cycle = (int64_t)c->cycle,
                                 .preemptor = preemptor,
                                 .reason = (char *)MODEL_REASON_PREEMPTION_BY_SCHEDULER,
                                 .pods = &pod,
                                 .npods = 1};
    rc = sched__audit_append(c, sched_outbox_encode(&r), NULL, err);
    free(preemptor);
    free(job);
    return rc;
}
