/*
 * why_filter.c - the capacity part of the why document: the node-filter histogram
 * of an unplaced pod ("0/5000 nodes fit: 4800 Insufficient nvidia.com/gpu ...") and
 * the jobs placed earlier in this cycle on nodes it would otherwise fit.
 *
 * Every bucket names its rule and numbers: quantities as Kubernetes prints them
 * (model_quantity_format: "need 48, max free 16" cpu, "256Gi" memory), the nodeSelector
 * with how many nodes carry each of its labels, an untolerated taint by its key, and
 * nodes whose room is held by another job's nomination as "reserved for <job>" rather
 * than Insufficient.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "place.h"
#include "why.h"
#include "why_msg.h"

#define AHEAD_MAX 20

/* ---- node filter histogram ---- */

struct bucket {
    char reason[160];
    char example[200]; /* the first node's detail, "" when none */
    const char *resource;
    const char *taint;    /* the taint key of an "untolerated taint" bucket */
    const char *reserver; /* the job holding the room of a "reserved for" bucket */
    long nodes;
    int64_t need, max_free;
};

static struct bucket *bucket_get(struct bucket *b, size_t *n, const char *reason)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(b[i].reason, reason))
            return &b[i];
    struct bucket *x = &b[(*n)++];
    memset(x, 0, sizeof(*x));
    fmt_snprintf(x->reason, sizeof(x->reason), "%s", reason);
    x->max_free = INT64_MIN;
    return x;
}

static int cmp_bucket(const void *a, const void *b)
{
    const struct bucket *x = a, *y = b;
    if (x->nodes != y->nodes)
        return x->nodes > y->nodes ? -1 : 1;
    return strcmp(x->reason, y->reason);
}

static const char *fit_reason(int why)
{
    switch (why) {
    case SCHED_FIT_UNSCHEDULABLE:
        return WHY_MSG_NF_UNSCHEDULABLE;
    case SCHED_FIT_SELECTOR:
        return WHY_MSG_NF_SELECTOR;
    case SCHED_FIT_AFFINITY:
        return WHY_MSG_NF_AFFINITY;
    case SCHED_FIT_TAINT:
        return WHY_MSG_NF_TAINT;
    case SCHED_FIT_POD_AFFINITY:
        return WHY_MSG_NF_POD_AFFINITY;
    case SCHED_FIT_POD_ANTI_AFFINITY:
        return WHY_MSG_NF_POD_ANTI_AFFINITY;
    default:
        return WHY_MSG_NF_SPREAD;
    }
}

static int rule_code(int why)
{
    return why == SCHED_FIT_POD_AFFINITY        ? WHY_POD_AFFINITY
           : why == SCHED_FIT_POD_ANTI_AFFINITY ? WHY_POD_ANTI_AFFINITY
                                                : WHY_TOPOLOGY_SPREAD;
}

/* Names what a rule bucket's first node broke: the placed pod that keeps the pod out,
 * or the spread constraint. */
static void rule_example(struct sched_view *v, const struct sched_rules *r, int why, int by,
                         const struct sv_node *nd, struct bucket *x)
{
    if (*x->example)
        return;
    if (why == SCHED_FIT_POD_ANTI_AFFINITY && by >= 0)
        fmt_snprintf(x->example, sizeof(x->example), WHY_MSG_NF_EX_ANTI_AFFINITY, v->pods[by].key,
                     v->pods[by].node >= 0 ? v->nodes[v->pods[by].node].name : "?");
    else if (why == SCHED_FIT_SPREAD && by >= 0)
        fmt_snprintf(x->example, sizeof(x->example), WHY_MSG_NF_EX_SPREAD,
                     (int)r->sp[by].c->max_skew, r->sp[by].c->topology_key, nd->name);
    else if (why == SCHED_FIT_POD_AFFINITY && r->p->m.aff && r->p->m.aff->naff_req)
        fmt_snprintf(x->example, sizeof(x->example), WHY_MSG_NF_EX_POD_AFFINITY,
                     r->p->m.aff->aff_req[0].topology_key);
}

/* The bucket of a static filter; an untolerated taint gets one bucket per key. */
static struct bucket *static_bucket(struct bucket *b, size_t *nb, int why, const struct sv_node *nd,
                                    const struct sv_shape *sh)
{
    if (why != SCHED_FIT_TAINT)
        return bucket_get(b, nb, fit_reason(why));
    const struct model_taint *t = sched__fit_untolerated(nd, sh);
    const char *key = t && t->key ? t->key : "";
    char reason[160];
    fmt_snprintf(reason, sizeof(reason), WHY_MSG_NF_TAINT_KEY, key);
    struct bucket *x = bucket_get(b, nb, reason);
    x->taint = key;
    if (!*x->example && t)
        fmt_snprintf(x->example, sizeof(x->example), "%s%s%s:%s", key, t->value ? "=" : "",
                     t->value ? t->value : "", t->effect ? t->effect : "");
    return x;
}

/* The nodeSelector and how many nodes carry each of its labels (new, NULL without one):
 * [{"label": "zone=c", "nodes": 0}], and the same as text in ex. */
static json_t *selector_counts(struct sched_view *v, const struct sv_shape *sh, const int *order,
                               size_t n, char *ex, size_t exlen)
{
    if (!sh->nsel)
        return NULL;
    json_t *out = json_array();
    size_t o = (size_t)fmt_snprintf(ex, exlen, WHY_MSG_NF_EX_SELECTOR);
    for (size_t k = 0; k < sh->nsel; k++) {
        long carry = 0;
        for (size_t i = 0; i < n; i++) {
            const struct sv_node *nd = &v->nodes[order[i]];
            const char *val = model_label(nd->m.labels, nd->m.nlabels, sh->sel[k].key);
            carry += val && !strcmp(val, sh->sel[k].value);
        }
        char *label = xasprintf("%s=%s", sh->sel[k].key, sh->sel[k].value);
        json_array_append_new(out,
                              json_pack("{s:s,s:I}", "label", label, "nodes", (json_int_t)carry));
        if (o < exlen)
            o += (size_t)fmt_snprintf(ex + o, exlen - o, WHY_MSG_NF_EX_LABEL, k ? "," : "", label,
                                      carry, carry == 1 ? "" : "s");
        free(label);
    }
    return out;
}

static void quantity(const char *res, int64_t v, char *buf, size_t n)
{
    model_quantity_format(v, model_resource_is_milli(res), buf, n);
}

/* The bucket of a node short of a resource the pod requests (index bad of its shape's
 * requests): reserved for a nominated job when the node has the room without the
 * reservations (returns 1), else short of that resource (returns 0). */
static int short_bucket(struct sched_view *v, const struct sv_node *nd, const struct sv_shape *sh,
                        int pi, int bad, struct bucket *b, size_t *nbp)
{
    int rs = sh->req[bad].res;
    char reason[160];
    int holder = nd->nnom ? sched__reserver(v, nd, sh->priority, pi) : -1;
    int room = holder >= 0; /* the node has the room without the reservations */
    for (int k = 0; room && k < sh->nreq; k++)
        room = sh->req[k].v <= nd->alloc[sh->req[k].res] - nd->used[sh->req[k].res];
    if (room) {
        fmt_snprintf(reason, sizeof(reason), WHY_MSG_NF_RESERVED, v->jobs[holder].id);
        struct bucket *x = bucket_get(b, nbp, reason);
        x->nodes++;
        x->reserver = v->jobs[holder].id;
        return 1;
    }
    if (rs == SV_RES_PODS)
        fmt_snprintf(reason, sizeof(reason), WHY_MSG_NF_TOO_MANY_PODS);
    else
        fmt_snprintf(reason, sizeof(reason), WHY_MSG_NF_INSUFFICIENT, v->res[rs]);
    struct bucket *x = bucket_get(b, nbp, reason);
    x->nodes++;
    x->resource = v->res[rs];
    x->need = sh->req[bad].v;
    int64_t f = sched__free(v, nd, rs, sh->priority, pi);
    if (f > x->max_free)
        x->max_free = f;
    return 0;
}

/* The histogram's "reasons" (new) and its one-line summary (*sum, new). */
static json_t *reasons_json(struct sched_view *v, const struct sv_shape *sh, const int *order,
                            size_t n, struct bucket *b, size_t nb, long fit, char **sum)
{
    json_t *reasons = json_array();
    size_t sumlen = 0;
    FILE *f = open_memstream(sum, &sumlen);
    fprintf(f, WHY_MSG_NF_FIT, fit, n);
    char selex[200] = "";
    json_t *sel = selector_counts(v, sh, order, n, selex, sizeof(selex));
    for (size_t i = 0; i < nb; i++) {
        json_t *rj = json_pack("{s:s,s:i}", "reason", b[i].reason, "nodes", (int)b[i].nodes);
        if (b[i].reserver)
            fprintf(f, WHY_MSG_NF_BUCKET_NODES, i ? ", " : ": ", b[i].nodes,
                    b[i].nodes == 1 ? "" : "s", b[i].reason);
        else
            fprintf(f, WHY_MSG_NF_BUCKET, i ? ", " : ": ", b[i].nodes, b[i].reason);
        if (b[i].resource) {
            int64_t mf = b[i].max_free < 0 ? 0 : b[i].max_free;
            char need[32], free_[32];
            quantity(b[i].resource, b[i].need, need, sizeof(need));
            quantity(b[i].resource, mf, free_, sizeof(free_));
            json_object_set_new(rj, "resource", json_string(b[i].resource));
            json_object_set_new(rj, "need", json_integer(b[i].need));
            json_object_set_new(rj, "maxFree", json_integer(mf));
            fprintf(f, WHY_MSG_NF_NEED, need, free_);
        }
        if (b[i].taint)
            json_object_set_new(rj, "taint", json_string(b[i].taint));
        if (b[i].reserver)
            json_object_set_new(rj, "reservedFor", json_string(b[i].reserver));
        if (sel && !strcmp(b[i].reason, fit_reason(SCHED_FIT_SELECTOR))) {
            json_object_set_new(rj, "selector", json_incref(sel));
            fmt_snprintf(b[i].example, sizeof(b[i].example), "%s", selex);
        }
        if (*b[i].example) {
            json_object_set_new(rj, "example", json_string(b[i].example));
            fprintf(f, WHY_MSG_NF_EXAMPLE, b[i].example);
        }
        json_array_append_new(reasons, rj);
    }
    fclose(f);
    json_decref(sel);
    return reasons;
}

json_t *sched__node_filter(struct sched_view *v, int pi, int *code, int *own)
{
    const struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
    size_t n, nb = 0;
    const int *order = sched__view_node_order(v, &n);
    /* reasons: static filters, a taint key per taint, a resource per request, a reserver
     * per nominated job: bounded by the nodes */
    struct bucket *b = xcalloc(n + (size_t)sh->nreq + 12, sizeof(*b));
    long fit = 0, static_ok = 0, could_fit_empty = 0, res_short = 0, held = 0;
    int rule_why = -1;
    long rule_most = 0;
    struct sched_rules r;
    *own = sched__rules_prepare(v, pi, &r);
    for (size_t i = 0; i < n; i++) {
        const struct sv_node *nd = &v->nodes[order[i]];
        int why = sched__fit_static(nd, sh), by = -1;
        if (why != SCHED_FIT_OK) {
            static_bucket(b, &nb, why, nd, sh)->nodes++;
            continue;
        }
        static_ok++;
        int empty_ok = 1;
        for (int k = 0; k < sh->nreq; k++)
            empty_ok &= sh->req[k].v <= nd->alloc[sh->req[k].res];
        could_fit_empty += empty_ok;
        int bad = sched__fit_res(v, nd, sh, pi);
        if (bad < 0 && r.active && (why = sched__rules_filter(&r, order[i], &by)) != SCHED_FIT_OK) {
            struct bucket *x = bucket_get(b, &nb, fit_reason(why));
            rule_example(v, &r, why, by, nd, x);
            if (++x->nodes > rule_most) {
                rule_most = x->nodes;
                rule_why = why;
            }
            continue;
        }
        if (bad < 0) {
            fit++;
            continue;
        }
        res_short++;
        held += short_bucket(v, nd, sh, pi, bad, b, &nb);
    }
    sched__rules_release(&r);
    qsort(b, nb, sizeof(*b), cmp_bucket);
    char *sum = NULL;
    json_t *reasons = reasons_json(v, sh, order, n, b, nb, fit, &sum);
    *code = n == 0                           ? WHY_NO_NODES
            : static_ok == 0                 ? WHY_NO_MATCHING_NODE
            : could_fit_empty == 0           ? WHY_EXCEEDS_ALLOCATABLE
            : fit > 0                        ? -1
            : !res_short && rule_why >= 0    ? rule_code(rule_why)
            : res_short && held == res_short ? WHY_CAPACITY_RESERVED
                                             : WHY_INSUFFICIENT;
    json_t *out = json_pack("{s:i,s:i,s:o,s:s}", "total", (int)n, "fit", (int)fit, "reasons",
                            reasons, "summary", sum);
    free(sum);
    free(b);
    return out;
}

/* ---- jobs ahead ---- */

json_t *sched__ahead(struct sched_cyc *c, int pi)
{
    struct sched_view *v = c->v;
    const struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
    json_t *by_job = json_object();
    for (size_t t = 0; t < c->ntouched; t++) {
        const struct sv_node *n = &v->nodes[c->touched[t]];
        if (sched__fit_static(n, sh) != SCHED_FIT_OK)
            continue;
        int fits = 1;
        for (int k = 0; fits && k < sh->nreq; k++) {
            int64_t freed = 0;
            for (size_t q = 0; q < n->ncyc; q++) {
                const struct sv_pod *p = &v->pods[n->cyc_pods[q]];
                for (int r = 0; r < p->nreq; r++)
                    freed += p->req[r].res == sh->req[k].res ? p->req[r].v : 0;
            }
            fits = sh->req[k].v <= sched__free(v, n, sh->req[k].res, sh->priority, pi) + freed;
        }
        for (size_t q = 0; fits && q < n->ncyc; q++) {
            const struct sv_job *j = &v->jobs[v->pods[n->cyc_pods[q]].job];
            json_t *e = json_object_get(by_job, j->id);
            if (!e && json_object_size(by_job) >= AHEAD_MAX)
                continue; /* enough to explain; do not build a list of thousands */
            if (!e) {
                e = json_pack("{s:s,s:i,s:i,s:[]}", "job", j->id, "priority",
                              (int)sched__job_priority(v, j), "pods", 0, "nodes");
                json_object_set_new(by_job, j->id, e);
            }
            json_object_set_new(e, "pods",
                                json_integer(json_integer_value(json_object_get(e, "pods")) + 1));
            json_t *nodes = json_object_get(e, "nodes");
            size_t nn = json_array_size(nodes);
            if (!nn || strcmp(json_string_value(json_array_get(nodes, nn - 1)), n->name))
                json_array_append_new(nodes, json_string(n->name));
        }
    }
    json_t *out = json_array();
    const char *k;
    json_t *e;
    json_object_foreach(by_job, k, e)
    {
        json_array_append(out, e);
    }
    json_decref(by_job);
    return out;
}
