/*
 * kube_pgstatus.c - PodGroup status written back (bind mode).
 *
 * muster is both the scheduler and the PodGroup controller of the groups it places,
 * so it writes what the upstream ones write, through the status subresource (a
 * merge patch), and only when it differs from what the API server has (the
 * mirrored object) and, while the mirror has applied nothing of the object newer
 * than what a patch was made over (its echo may still be on its way), from what
 * this process wrote last. The facts come from the store: the group's pods as
 * the API server has them (spec.nodeName, status.phase) and the job's why.
 *
 * scheduler-plugins / Koordinator (scheduling.sigs.k8s.io/v1alpha1), first that
 * holds: Finished (succeeded >= minMember), Failed (a pod failed and failed +
 * running + succeeded >= minMember), Running (running + succeeded >= minMember),
 * Scheduled (minMember bound), Scheduling (some bound), PreScheduling (placed on
 * nominated nodes, waiting for victims), Pending. Finished and Failed are final,
 * as the podgroup controller leaves them. scheduleStartTime is set once, occupiedBy
 * from the first pod's ownerReferences ("ns/owner", sorted, comma-joined).
 *
 * Volcano (scheduling.volcano.sh/v1beta1), as its session's jobStatus: Unknown
 * (pods running but the job unschedulable), Completed (minMember bound and all of
 * them completed), Running (minMember bound), Inqueue (tried, not held back by its
 * queue), Pending; conditions by type: Unschedulable ("NotEnoughResources",
 * "<n>/<total> tasks in gang unschedulable: <why>") while unschedulable, Scheduled
 * once placed; compared without lastTransitionTime and transitionID.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_writeback.h"
#include "log.h"
#include "scheduler.h"
#include "store.h"
#include "reason.h"

struct facts {
    json_t *pg;  /* the mirrored PodGroup */
    int volcano; /* its apiVersion is Volcano's */
    int min;     /* spec.minMember, at least 1 */
    int total, scheduled, running, succeeded, failed;
    char *occupied; /* occupiedBy of the first pod, or NULL */
    json_t *why;    /* the job's why document or NULL */
    int primary;    /* enum why_code of the why's primary reason, -1 when none */
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct collect {
    MDB_txn *txn;
    struct facts *f;
};

static int count_pod(void *ctx, const char *key)
{
    struct collect *c = ctx;
    json_t *pod = NULL;
    if (store_get(c->txn, MODEL_POD, key, &pod, NULL) < 0)
        return 0;
    struct facts *f = c->f;
    const char *phase = model_pod_phase(pod);
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    f->total++;
    f->scheduled += node && *node;
    f->running += phase && !strcmp(phase, "Running");
    f->succeeded += phase && !strcmp(phase, "Succeeded");
    f->failed += phase && !strcmp(phase, "Failed");
    json_t *owners = json_object_get(json_object_get(pod, "metadata"), "ownerReferences");
    if (!f->occupied && json_array_size(owners)) {
        const char *ns =
            json_string_value(json_object_get(json_object_get(pod, "metadata"), "namespace"));
        size_t n = json_array_size(owners);
        char **refs = xcalloc(n, sizeof(char *));
        for (size_t i = 0; i < n; i++) {
            const char *owner =
                json_string_value(json_object_get(json_array_get(owners, i), "name"));
            refs[i] = xasprintf("%s/%s", ns ? ns : "default", owner ? owner : "");
        }
        qsort(refs, n, sizeof(char *), cmp_str);
        f->occupied = xstrdup("");
        for (size_t i = 0; i < n; i++) {
            char *next = xasprintf("%s%s%s", f->occupied, i ? "," : "", refs[i]);
            free(f->occupied);
            free(refs[i]);
            f->occupied = next;
        }
        free(refs);
    }
    json_decref(pod);
    return 0;
}

static void facts_release(struct facts *f)
{
    json_decref(f->pg);
    json_decref(f->why);
    free(f->occupied);
}

/* 0 with the facts, ERR_NOT_FOUND when key is not a stored PodGroup. */
static int facts_load(struct kube *k, const char *key, struct facts *f)
{
    MDB_txn *txn = NULL;
    memset(f, 0, sizeof(*f));
    int rc = store_txn_begin(k->store, STORE_READ, &txn, NULL);
    if (rc == 0)
        rc = store_get(txn, MODEL_PODGROUP, key, &f->pg, NULL);
    if (rc == 0) {
        struct collect c = {txn, f};
        const char *av = json_string_value(json_object_get(f->pg, "apiVersion"));
        f->volcano = av && !strncmp(av, MODEL_GROUP_VOLCANO "/", strlen(MODEL_GROUP_VOLCANO) + 1);
        json_int_t min =
            json_integer_value(json_object_get(json_object_get(f->pg, "spec"), "minMember"));
        f->min = min > 0 ? (int)min : 1;
        rc = store_pods_of_group(txn, key, count_pod, &c, NULL);
    }
    store_txn_abort(&txn);
    if (rc == 0 && sched_why(k->sched, key, &f->why, NULL) < 0)
        f->why = NULL;
    f->primary = why_code_from_name(
        json_string_value(json_object_get(json_object_get(f->why, "primary"), "code")));
    return rc;
}

static const char *why_state(const struct facts *f)
{
    return json_string_value(json_object_get(f->why, "state"));
}

static int unschedulable(const struct facts *f)
{
    const char *st = why_state(f);
    return st && !strcmp(st, sched_job_state_name(SCHED_JOB_UNSCHEDULABLE));
}

/* Placed on nominated nodes, waiting for victims to go. */
static int preempting(const struct facts *f)
{
    return f->primary == WHY_PREEMPTION_WAITING || f->primary == WHY_PREEMPTING ||
           f->primary == WHY_RECLAIMING;
}

/* Not tried yet, or held back by its queue: not enqueued (Volcano's Inqueue). */
static int held_back(const struct facts *f)
{
    switch (f->primary) {
    case WHY_NOT_TRIED:
    case WHY_QUEUE_OVER_CAPABILITY:
    case WHY_WAITING_FOR_QUEUE_SHARE:
    case WHY_QUEUE_NOT_FOUND:
    case WHY_QUEUE_NOT_LEAF:
        return 1;
    default:
        return 0;
    }
}

static const char *sigs_phase(const struct facts *f)
{
    if (f->succeeded >= f->min)
        return "Finished";
    if (f->failed && f->failed + f->running + f->succeeded >= f->min)
        return "Failed";
    if (f->running + f->succeeded >= f->min)
        return "Running";
    if (f->scheduled >= f->min)
        return "Scheduled";
    if (f->scheduled > 0)
        return "Scheduling";
    if (preempting(f))
        return "PreScheduling";
    return "Pending";
}

static json_t *sigs_status(const struct facts *f, json_t *old, json_t *last)
{
    char ts[40];
    const char *start = json_string_value(json_object_get(old, "scheduleStartTime"));
    if (!start) /* the echo of the patch that set it may still be on its way */
        start = json_string_value(json_object_get(last, "scheduleStartTime"));
    const char *occ = json_string_value(json_object_get(old, "occupiedBy"));
    clock_format_rfc3339(clock_now_ms(), ts, sizeof(ts));
    json_t *st = json_pack("{s:s,s:i,s:i,s:i,s:i,s:s}", "phase", sigs_phase(f), "scheduled",
                           f->scheduled, "running", f->running, "succeeded", f->succeeded, "failed",
                           f->failed, "scheduleStartTime", start ? start : ts);
    if (occ || f->occupied)
        json_object_set_new(st, "occupiedBy", json_string(occ ? occ : f->occupied));
    return st;
}

static const char *volcano_phase(const struct facts *f)
{
    int completed = f->succeeded + f->failed;
    if (f->running && unschedulable(f))
        return "Unknown";
    if (f->scheduled >= f->min)
        return f->scheduled == completed ? "Completed" : "Running";
    if (f->why && !held_back(f))
        return "Inqueue";
    return "Pending";
}

/* Sets the condition of cond's type in list (new list), keeping the old one's
 * lastTransitionTime when it says the same. */
static json_t *upsert_condition(json_t *old_list, json_t *cond)
{
    json_t *out = json_array();
    size_t i;
    json_t *c;
    int put = 0;
    const char *type = json_string_value(json_object_get(cond, "type"));
    json_array_foreach(old_list, i, c)
    {
        if (!json_is_object(c))
            continue;
        if (!put && json_equal(json_object_get(c, "type"), json_object_get(cond, "type"))) {
            json_t *n = json_deep_copy(cond);
            if (kube__pg_condition_same(c, cond))
                json_object_set(n, "lastTransitionTime", json_object_get(c, "lastTransitionTime"));
            json_array_append_new(out, n);
            put = 1;
        } else {
            json_array_append(out, c);
        }
    }
    if (!put && type)
        json_array_append(out, cond);
    return out;
}

static json_t *volcano_status(const struct facts *f, json_t *old)
{
    char ts[40];
    clock_format_rfc3339(clock_now_ms(), ts, sizeof(ts));
    json_t *st = json_pack("{s:s,s:i,s:i,s:i}", "phase", volcano_phase(f), "running", f->running,
                           "succeeded", f->succeeded, "failed", f->failed);
    json_t *cond = NULL;
    if (f->scheduled >= f->min) {
        cond = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "type", "Scheduled", "status", "True",
                         "lastTransitionTime", ts, "transitionID", "", "reason",
                         "tasks in gang are ready to be scheduled", "message", "");
    } else if (unschedulable(f)) {
        const char *why =
            json_string_value(json_object_get(json_object_get(f->why, "primary"), "message"));
        char *msg =
            xasprintf("%d/%d tasks in gang unschedulable: %s", f->min - f->scheduled, f->total,
                      why               ? why
                      : f->primary >= 0 ? why_code_name(f->primary)
                                        : "");
        cond = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "type", "Unschedulable", "status", "True",
                         "lastTransitionTime", ts, "transitionID", "", "reason",
                         "NotEnoughResources", "message", msg);
        free(msg);
    }
    json_t *old_list = json_object_get(old, "conditions");
    if (cond)
        json_object_set_new(st, "conditions", upsert_condition(old_list, cond));
    else if (json_is_array(old_list))
        json_object_set(st, "conditions", old_list);
    json_decref(cond);
    return st;
}

int kube__pg_condition_same(json_t *a, json_t *b)
{
    json_t *x = json_deep_copy(a), *y = json_deep_copy(b);
    const char *drop[] = {"lastTransitionTime", "transitionID"};
    for (int i = 0; i < 2; i++) {
        json_object_del(x, drop[i]);
        json_object_del(y, drop[i]);
    }
    int eq = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/* 1 when the fields muster writes are equal in want and have (conditions compared
 * without their times). */
static int same_status(json_t *want, json_t *have)
{
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v)
    {
        json_t *h = json_object_get(have, k);
        if (!strcmp(k, "conditions")) {
            if (json_array_size(v) != json_array_size(h))
                return 0;
            for (size_t i = 0; i < json_array_size(v); i++)
                if (!kube__pg_condition_same(json_array_get(v, i), json_array_get(h, i)))
                    return 0;
        } else if (!json_equal(v, h)) {
            return 0;
        }
    }
    return 1;
}

int kube__pg_status_sync(struct kube *k, struct kube_http *h, json_t *written, const char *key,
                         struct err *err)
{
    struct facts f;
    /* read before the store: the writer notes a version here before the store has it */
    char *seen = kube__pg_seen(k, key);
    if (facts_load(k, key, &f) < 0) { /* not a PodGroup (a lone pod's job), or gone */
        facts_release(&f);
        free(seen);
        return 0;
    }
    json_t *old = json_object_get(f.pg, "status");
    const char *phase = json_string_value(json_object_get(old, "phase"));
    int rc = 0;
    json_t *want = NULL;
    /* final, as upstream's controllers leave them */
    if (phase && (!strcmp(phase, "Finished") || !strcmp(phase, "Failed") ||
                  (f.volcano && !strcmp(phase, "Completed"))))
        goto out;
    /* what this process wrote to this object (a PodGroup recreated under the name is new),
     * while the mirror has applied no version of it after the one the patch was made over:
     * then its echo is still on its way. Once the mirror is past that version, the mirrored
     * status is the truth, even when another writer changed it back. */
    json_t *md = json_object_get(f.pg, "metadata"), *mine = json_object_get(written, key);
    const char *over = json_string_value(json_object_get(mine, "over"));
    json_t *last = json_equal(json_object_get(mine, "uid"), json_object_get(md, "uid")) && over &&
                           seen && !strcmp(over, seen)
                       ? json_object_get(mine, "status")
                       : NULL;
    want = f.volcano ? volcano_status(&f, old) : sigs_status(&f, old, last);
    if (same_status(want, old) || (last && same_status(want, last)))
        goto out;
    const char *slash = strchr(key, '/');
    const char *av = json_string_value(json_object_get(f.pg, "apiVersion"));
    char *path =
        xasprintf("/apis/%s/namespaces/%.*s/podgroups/%s/status", av,
                  slash ? (int)(slash - key) : 7, slash ? key : "default", slash ? slash + 1 : key);
    json_t *body = json_pack("{s:O}", "status", want);
    struct kube_resp r = {0};
    char msg[512];
    rc = kube__call(k, h, "PATCH", path, "application/merge-patch+json", body, &r, err);
    if (rc == 0 && r.status >= 300)
        rc =
            err_set(err, r.status == 404 ? ERR_NOT_FOUND : ERR_INVALID,
                    "status of podgroup '%s': %s", key, kube__status_message(&r, msg, sizeof(msg)));
    kube__count(k, rc == 0 ? &k->c.pg_status_patches : &k->c.pg_status_failures);
    if (rc == 0)
        json_object_set_new(written, key,
                            json_pack("{s:O?,s:O,s:s?}", "uid", json_object_get(md, "uid"),
                                      "status", want, "over", seen));
    kube__resp_release(&r);
    json_decref(body);
    free(path);
out:
    json_decref(want);
    facts_release(&f);
    free(seen);
    return rc;
}
