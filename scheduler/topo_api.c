/*
 * topo_api.c - sched_topology: the domain tree with capacity, usage, the jobs
 * placed in each domain and the largest gang of a pod shape each domain can
 * still take (the sum over its nodes of how many such pods fit on each).
 *
 * The count per node is the gather placer's (sched__fit_count, one rule for
 * reservations): nominations reserve against pods of lower or equal priority,
 * except against the job that owns them. With like=JOB the gang is that job's
 * (its priority, its static filters, its own and its GangGroup's nominations do
 * not reserve against it), so a domain's largestGang is what the job's why
 * document says the domain holds, before the cap at the job size. A bare shape
 * is a gang of priority 0 owning no nominations. docs/topology.md.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "place.h"
#include "sat.h"
#include "topo.h"

/* A domain's jobs: indices into the view's jobs, in id order. */
struct domjobs {
    int *v;
    size_t n, cap;
};

struct tq {
    struct sched_view *v;
    struct sched_topo *t;
    struct sv_req own[4]; /* a bare shape's requests */
    const struct sv_req *req;
    int nreq, has_shape;
    const struct sv_shape *sh; /* like=job: its static filters too */
    int *members;              /* like=job: the job and its GangGroup's PodGroups */
    size_t nmembers;
    struct domjobs *jobs; /* [ndoms] */
    const struct sched_topo_query *q;
};

static json_t *res_json(const struct sched_view *v, const int64_t *vec, size_t nres)
{
    json_t *o = json_object();
    char buf[64];
    for (size_t r = 0; r < v->nres && r < nres; r++) {
        model_quantity_format(vec[r] > 0 ? vec[r] : 0, model_resource_is_milli(v->res[r]), buf,
                              sizeof(buf));
        json_object_set_new(o, v->res[r], json_string(buf));
    }
    return o;
}

static long node_fits(const struct tq *q, int ni)
{
    const struct sv_node *n = &q->v->nodes[ni];
    if (n->m.unschedulable || (q->sh && sched__fit_static(n, q->sh) != SCHED_FIT_OK))
        return 0;
    int32_t prio = q->sh ? q->sh->priority : 0;
    long cnt = sched__fit_count(q->v, n, q->req, q->nreq, prio, q->members, q->nmembers, LONG_MAX);
    return cnt == LONG_MAX ? 0 : cnt;
}

static json_t *dom_json(struct tq *q, int di, long *gang)
{
    const struct tp_dom *d = &q->t->doms[di];
    json_t *kids = json_array(), *nodes = json_array(), *jobs = json_array();
    int64_t *used = xcalloc(q->t->nres + 1, sizeof(int64_t));
    for (size_t r = 0; r < q->t->nres; r++)
        used[r] = d->alloc[r] - d->free[r];
    long g = 0;
    for (size_t i = 0; i < d->nkids; i++) {
        long kg = 0;
        json_array_append_new(kids, dom_json(q, d->kids[i], &kg));
        g += kg;
    }
    for (size_t i = 0; i < d->nnodes; i++) {
        json_array_append_new(nodes, json_string(q->v->nodes[d->nodes[i]].name));
        g += q->has_shape ? node_fits(q, d->nodes[i]) : 0;
    }
    const struct domjobs *dj = &q->jobs[di];
    size_t njobs = dj->n;
    for (size_t i = 0; i < dj->n && (!q->q->jobs_capped || i < q->q->jobs_max); i++)
        json_array_append_new(jobs, json_string(q->v->jobs[dj->v[i]].id));
    json_t *o = json_pack(
        "{s:s,s:s,s:o,s:o,s:o,s:i,s:o,s:I,s:o}", "name", d->name, "layer",
        sched__topo_layer_name(q->t, d->depth), "capacity", res_json(q->v, d->alloc, q->t->nres),
        "used", res_json(q->v, used, q->t->nres), "free", res_json(q->v, d->free, q->t->nres),
        "nodeNum", d->nodenum, "jobs", jobs, "jobCount", (json_int_t)njobs, "children", kids);
    if (d->nnodes)
        json_object_set_new(o, "nodes", nodes);
    else
        json_decref(nodes);
    if (q->has_shape)
        json_object_set_new(o, "largestGang", json_integer(g));
    free(used);
    *gang = g;
    return o;
}

/* A placed pod's counted place: its node's domain, or -1. */
static int pod_dom(const struct tq *q, const struct sv_pod *p)
{
    if (!p->alive || !p->counted || p->node < 0 || (size_t)p->node >= q->t->nnode_dom)
        return -1;
    return q->t->node_dom[p->node];
}

struct by_id {
    const char *id;
    int ji;
};

static int cmp_by_id(const void *a, const void *b)
{
    return strcmp(((const struct by_id *)a)->id, ((const struct by_id *)b)->id);
}

/* The jobs of each domain in id order: the jobs with a placed pod are sorted by id once,
 * then each, in that order, adds itself to the domains above its pods, once each (a domain
 * whose last job is this one has it). A set of ids per domain, sorted one by one, took
 * 45 ms of the scheduler's lock for 50,000 jobs on 5,000 nodes. */
static void collect_jobs(struct tq *q)
{
    const struct sched_view *v = q->v;
    q->jobs = xcalloc(q->t->ndoms + 1, sizeof(*q->jobs));
    struct by_id *order = xcalloc(v->njobs + 1, sizeof(*order));
    size_t n = 0;
    for (size_t ji = 0; ji < v->njobs; ji++) {
        const struct sv_job *j = &v->jobs[ji];
        size_t k = 0;
        while (k < j->npods && pod_dom(q, &v->pods[j->pods[k]]) < 0)
            k++;
        if (k < j->npods)
            order[n++] = (struct by_id){j->id, (int)ji};
    }
    qsort(order, n, sizeof(*order), cmp_by_id);
    for (size_t i = 0; i < n; i++) {
        const struct sv_job *j = &v->jobs[order[i].ji];
        for (size_t k = 0; k < j->npods; k++)
            for (int di = pod_dom(q, &v->pods[j->pods[k]]); di >= 0; di = q->t->doms[di].parent) {
                struct domjobs *d = &q->jobs[di];
                if (d->n && d->v[d->n - 1] == order[i].ji)
                    break; /* and every domain above it */
                XGROW(d->v, d->n + 1, d->cap);
                d->v[d->n++] = order[i].ji;
            }
    }
    free(order);
}

/* The jobs whose nominations are the like job's own, as an attempt of it sees them
 * (cycle_attempt.c): the job and the existing PodGroups of its GangGroup. */
static void like_members(const struct sched_view *v, int ji, struct tq *t)
{
    const struct sv_job *j = &v->jobs[ji];
    t->members = xcalloc(2 + (j->has_pg ? j->pg.ngroups : 0), sizeof(int));
    t->members[t->nmembers++] = ji;
    for (size_t g = 0; j->has_pg && g < j->pg.ngroups; g++) {
        int mj = sched__view_gang_job(v, j->pg.groups[g]);
        size_t k = 0;
        while (k < t->nmembers && t->members[k] != mj)
            k++;
        if (mj >= 0 && v->jobs[mj].has_pg && k == t->nmembers)
            t->members[t->nmembers++] = mj;
    }
}

static int shape_of_query(struct sched *s, const struct sched_topo_query *q, struct tq *t,
                          struct err *err)
{
    struct sched_view *v = s->v;
    if (q && q->like) {
        int ji = sched__view_job(v, q->like);
        if (ji < 0 || !v->jobs[ji].npods)
            return err_setf(err, ERR_NOT_FOUND, "like", "job '%s' not found", q->like);
        const struct sv_job *j = &v->jobs[ji];
        int pi = j->pods[0];
        for (size_t i = 0; i < j->npods; i++)
            if (sched__pod_pending(&v->pods[j->pods[i]])) {
                pi = j->pods[i];
                break;
            }
        t->sh = &v->shapes[v->pods[pi].shape];
        t->req = t->sh->req;
        t->nreq = t->sh->nreq;
        like_members(v, ji, t);
        t->has_shape = 1;
        return 0;
    }
    if (!q || (!q->cpu && !q->memory && !q->gpu))
        return 0;
    t->req = t->own;
    t->own[t->nreq++] = (struct sv_req){SV_RES_PODS, 1};
    if (q->cpu > 0)
        t->own[t->nreq++] = (struct sv_req){sched__view_res(v, "cpu"), q->cpu};
    if (q->memory > 0)
        t->own[t->nreq++] = (struct sv_req){sched__view_res(v, "memory"), q->memory};
    if (q->gpu > 0)
        t->own[t->nreq++] = (struct sv_req){sched__view_res(v, "nvidia.com/gpu"), q->gpu};
    t->has_shape = 1;
    return 0;
}

/* Without a topology the answer is one root domain over every node. */
static struct sched_topo *flat_tree(struct sched_view *v)
{
    struct sched_topo *t = xcalloc(1, sizeof(*t));
    t->nlayers = 1;
    t->layers = xcalloc(2, sizeof(char *));
    t->layers[0] = xstrdup("ClusterTopologyLayer");
    t->keys = xcalloc(2, sizeof(char **));
    t->nkeys = xcalloc(2, sizeof(size_t));
    t->nres = v->rescap;
    t->ndoms = t->capdoms = 1;
    t->doms = xcalloc(1, sizeof(*t->doms));
    struct tp_dom *d = &t->doms[0];
    d->name = xstrdup("");
    d->parent = -1;
    d->alloc = xcalloc(t->nres + 1, sizeof(int64_t));
    d->free = xcalloc(t->nres + 1, sizeof(int64_t));
    t->nnode_dom = v->nnodes;
    t->node_dom = xcalloc(v->nnodes + 1, sizeof(int));
    size_t n;
    const int *order = sched__view_node_order(v, &n);
    for (size_t i = 0; i < n; i++) {
        const struct sv_node *nd = &v->nodes[order[i]];
        XGROW(d->nodes, d->nnodes + 1, d->capnodes);
        d->nodes[d->nnodes++] = order[i];
        d->nodenum++;
        for (size_t r = 0; r < v->nres; r++) {
            d->alloc[r] = sat_add_i64(d->alloc[r], nd->alloc[r]);
            d->free[r] = sat_add_i64(d->free[r], sat_sub_i64(nd->alloc[r], nd->used[r]));
        }
    }
    return t;
}

int sched_topology(struct sched *s, const struct sched_topo_query *q, json_t **out, struct err *err)
{
    pthread_mutex_lock(&s->mu);
    struct tq t = {.v = s->v, .q = q};
    struct sched_topo *flat = NULL;
    int rc = shape_of_query(s, q, &t, err);
    if (rc < 0)
        goto out;
    t.t = sched__topo_get(s->v);
    if (!t.t)
        t.t = flat = flat_tree(s->v);
    collect_jobs(&t);
    json_t *layers = json_array();
    for (size_t l = 1; l < t.t->nlayers; l++)
        json_array_append_new(layers, json_string(t.t->layers[l]));
    json_t *shape = json_null();
    if (t.has_shape) {
        int64_t *vec = xcalloc(s->v->rescap + 1, sizeof(int64_t));
        for (int i = 0; i < t.nreq; i++)
            vec[t.req[i].res] = t.req[i].v;
        json_decref(shape);
        shape = res_json(s->v, vec, s->v->rescap);
        free(vec);
    }
    long g = 0;
    *out = json_pack("{s:s?,s:o,s:o,s:o}", "topology", flat ? NULL : "default", "layers", layers,
                     "shape", shape, "root", dom_json(&t, 0, &g));
    for (size_t i = 0; i < t.t->ndoms; i++)
        free(t.jobs[i].v);
    free(t.jobs);
out:
    free(t.members);
    sched__topo_free(flat);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
