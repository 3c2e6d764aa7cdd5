/*
 * viewpod.c - pods and pod shapes in the view, statement primitives, the
 * rebuild from the store and the deterministic dump.
 *
 * A shape is the part of a pod that decides where it fits (requests, node
 * selector, tolerations, priority). Pods of one shape share placement caches,
 * so a cycle over 50,000 similar pods does not rescan every node per pod.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sched__view_pod(const struct sched_view *v, const char *key)
{
    return sched__strmap_get(&v->pod_ix, key);
}

static char *dupn(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static int shape_of(struct sched_view *v, struct sv_pod *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f, "p%d|", (int)p->m.priority);
    for (int i = 0; i < p->nreq; i++)
        fprintf(f, "%d=%lld,", p->req[i].res, (long long)p->req[i].v);
    fputc('|', f);
    for (size_t i = 0; i < p->m.nnode_selector; i++)
        fprintf(f, "%s\x1f%s\x1e", p->m.node_selector[i].key, p->m.node_selector[i].value);
    fputc('|', f);
    for (size_t i = 0; i < p->m.ntolerations; i++) {
        const struct model_toleration *t = &p->m.tolerations[i];
        fprintf(f, "%s\x1f%s\x1f%s\x1f%s\x1e", t->key ? t->key : "", t->op ? t->op : "",
                t->value ? t->value : "", t->effect ? t->effect : "");
    }
    fclose(f);
    int si = sched__strmap_get(&v->shape_ix, buf);
    if (si >= 0) {
        free(buf);
        return si;
    }
    XGROW(v->shapes, v->nshapes + 1, v->capshapes);
    si = (int)v->nshapes++;
    struct sv_shape *sh = &v->shapes[si];
    memset(sh, 0, sizeof(*sh));
    sh->nreq = p->nreq;
    sh->req = xcalloc((size_t)p->nreq + 1, sizeof(*sh->req));
    memcpy(sh->req, p->req, (size_t)p->nreq * sizeof(*sh->req));
    sh->nsel = p->m.nnode_selector;
    sh->sel = xcalloc(sh->nsel + 1, sizeof(*sh->sel));
    for (size_t i = 0; i < sh->nsel; i++) {
        sh->sel[i].key = dupn(p->m.node_selector[i].key);
        sh->sel[i].value = dupn(p->m.node_selector[i].value);
    }
    sh->ntol = p->m.ntolerations;
    sh->tol = xcalloc(sh->ntol + 1, sizeof(*sh->tol));
    for (size_t i = 0; i < sh->ntol; i++) {
        const struct model_toleration *t = &p->m.tolerations[i];
        sh->tol[i] =
            (struct model_toleration){dupn(t->key), dupn(t->op), dupn(t->value), dupn(t->effect)};
    }
    sh->priority = p->m.priority;
    sched__strmap_put(&v->shape_ix, buf, si);
    free(buf);
    return si;
}

static void nominate_add(struct sched_view *v, int pi, int ni)
{
    struct sv_node *n = &v->nodes[ni];
    XGROW(n->nominated, n->nnom + 1, n->capnom);
    n->nominated[n->nnom++] = pi;
    v->pods[pi].nominated = ni;
}

void sched__view_nominate_clear(struct sched_view *v, int pi)
{
    struct sv_pod *p = &v->pods[pi];
    if (p->nominated < 0)
        return;
    struct sv_node *n = &v->nodes[p->nominated];
    for (size_t i = 0; i < n->nnom; i++) {
        if (n->nominated[i] == pi) {
            n->nominated[i] = n->nominated[--n->nnom];
            break;
        }
    }
    p->nominated = -1;
    v->epoch++;
}

void sched__view_put_pod(struct sched_view *v, struct model_pod *m)
{
    char *key = xasprintf("%s/%s", m->ns, m->name);
    if (sched__view_pod(v, key) >= 0)
        sched__view_del_pod(v, key);
    int pi = sched__slot_pop(&v->fpods);
    if (pi < 0) {
        XGROW(v->pods, v->npods + 1, v->cappods);
        pi = (int)v->npods++;
    }
    struct sv_pod *p = &v->pods[pi];
    memset(p, 0, sizeof(*p));
    p->key = key;
    p->m = *m;
    memset(m, 0, sizeof(*m));
    p->alive = 1;
    p->node = -1;
    p->nominated = -1;
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
    p->shape = shape_of(v, p);
    sched__strmap_put(&v->pod_ix, key, pi);

    int ji;
    if (p->m.group) {
        char *id = xasprintf("%s/%s", p->m.ns, p->m.group);
        ji = sched__view_job_get(v, id, 1);
        free(id);
    } else {
        ji = sched__view_job_get(v, key, 0);
    }
    struct sv_job *j = &v->jobs[ji];
    XGROW(j->pods, j->npods + 1, j->cappods);
    j->pods[j->npods++] = pi;
    p->job = ji;

    if (p->m.node_name) {
        p->node = sched__view_node(v, p->m.node_name);
        if (p->node < 0) {
            v->orphans++;
        } else if (!sched__pod_terminal(p)) {
            p->counted = 1;
            sched__view_usage(v, p, 1);
        }
    } else if (p->m.nominated_node) {
        int ni = sched__view_node(v, p->m.nominated_node);
        if (ni >= 0) {
            nominate_add(v, pi, ni);
            v->epoch++;
        } else {
            v->orphans++;
        }
    }
}

void sched__view_del_pod(struct sched_view *v, const char *key)
{
    int pi = sched__view_pod(v, key);
    if (pi < 0)
        return;
    struct sv_pod *p = &v->pods[pi];
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
    sched__view_job_maybe_free(v, p->job);
    sched__strmap_del(&v->pod_ix, key);
    free(p->key);
    model_pod_release(&p->m);
    free(p->req);
    memset(p, 0, sizeof(*p));
    p->node = p->nominated = -1;
    sched__slot_push(&v->fpods, pi);
    v->epoch++;
}

/* Orphans are bound pods and nominations whose node was unknown; a new node
 * adopts them (called by sched__view_put_node). */
void sched__view_adopt(struct sched_view *v, int ni)
{
    const char *name = v->nodes[ni].name;
    for (size_t i = 0; i < v->npods && v->orphans; i++) {
        struct sv_pod *p = &v->pods[i];
        if (!p->alive)
            continue;
        if (p->m.node_name && p->node < 0 && !strcmp(p->m.node_name, name)) {
            p->node = ni;
            v->orphans--;
            if (!sched__pod_terminal(p)) {
                p->counted = 1;
                sched__view_usage(v, p, 1);
            }
        } else if (!p->m.node_name && p->m.nominated_node && p->nominated < 0 &&
                   !strcmp(p->m.nominated_node, name)) {
            v->orphans--;
            nominate_add(v, (int)i, ni);
        }
    }
}

/* ---- statement primitives ---- */

void sched__view_bind(struct sched_view *v, int pi, int ni)
{
    struct sv_pod *p = &v->pods[pi];
    p->node = ni;
    p->m.node_name = xstrdup(v->nodes[ni].name);
    p->counted = 1;
    sched__view_usage(v, p, 1);
    if (v->log_epoch != v->epoch) {
        v->nbinds = 0;
        v->log_epoch = v->epoch;
    }
    XGROW(v->binds, v->nbinds + 1, v->capbinds);
    v->binds[v->nbinds++] = ni;
}

void sched__view_unbind(struct sched_view *v, int pi)
{
    struct sv_pod *p = &v->pods[pi];
    if (p->counted)
        sched__view_usage(v, p, -1);
    free(p->m.node_name);
    p->m.node_name = NULL;
    p->node = -1;
    p->counted = 0;
    v->epoch++;
}

/* ---- rebuild ---- */

static int load_obj(void *ctx, const char *key, json_t *obj, enum model_kind kind)
{
    struct sched_view *v = ctx;
    struct err err = ERR_INIT;
    int rc = 0;
    if (kind == MODEL_NODE) {
        struct model_node n = {0};
        if ((rc = model_node_decode(obj, &n, &err)) == 0)
            sched__view_put_node(v, &n);
    } else if (kind == MODEL_POD) {
        struct model_pod p = {0};
        if ((rc = model_pod_decode(obj, &p, &err)) == 0)
            sched__view_put_pod(v, &p);
    } else if (kind == MODEL_PODGROUP) {
        struct model_podgroup g = {0};
        if ((rc = model_podgroup_decode(obj, &g, &err)) == 0)
            sched__view_put_pg(v, &g);
    } else {
        struct model_topology t = {0};
        if ((rc = model_topology_decode(obj, &t, &err)) == 0)
            sched__view_put_topo(v, &t);
    }
    /* A stored object that no longer decodes is skipped, not fatal: the store
     * accepted it once and the view must still come up. */
    if (rc < 0)
        fprintf(stderr, "muster: skipping stored %s '%s': %s\n", model_kind_name(kind), key,
                err.msg);
    return 0;
}

static int load_node(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_NODE);
}
static int load_pod(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_POD);
}
static int load_pg(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_PODGROUP);
}
static int load_topo(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_TOPOLOGY);
}

int sched__view_load(struct sched_view *v, MDB_txn *txn, struct err *err)
{
    int rc;
    if ((rc = store_each(txn, MODEL_NODE, NULL, load_node, v, err)) < 0)
        return rc;
    if ((rc = store_each(txn, MODEL_POD, NULL, load_pod, v, err)) < 0)
        return rc;
    if ((rc = store_each(txn, MODEL_PODGROUP, NULL, load_pg, v, err)) < 0)
        return rc;
    return store_each(txn, MODEL_TOPOLOGY, NULL, load_topo, v, err);
}

/* ---- dump ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted JSON array of the keys of pods idx[0..n). New. */
static json_t *sorted_keys(struct sched_view *v, const int *idx, size_t n)
{
    const char **keys = xcalloc(n + 1, sizeof(*keys));
    for (size_t i = 0; i < n; i++)
        keys[i] = v->pods[idx[i]].key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(keys[i]));
    free(keys);
    return a;
}

static json_t *res_obj(struct sched_view *v, const int64_t *vec)
{
    json_t *o = json_object();
    for (size_t r = 0; r < v->nres; r++)
        if (vec[r])
            json_object_set_new(o, v->res[r], json_integer(vec[r]));
    return o;
}

json_t *sched__view_dump(struct sched_view *v)
{
    json_t *nodes = json_object(), *pods = json_object(), *jobs = json_object();
    for (size_t i = 0; i < v->nnodes; i++) {
        struct sv_node *n = &v->nodes[i];
        if (!n->alive)
            continue;
        json_t *nom = sorted_keys(v, n->nominated, n->nnom);
        json_object_set_new(nodes, n->name,
                            json_pack("{s:o,s:o,s:b,s:o}", "allocatable", res_obj(v, n->alloc),
                                      "requested", res_obj(v, n->used), "unschedulable",
                                      n->m.unschedulable, "nominated", nom));
    }
    for (size_t i = 0; i < v->npods; i++) {
        struct sv_pod *p = &v->pods[i];
        if (!p->alive)
            continue;
        json_t *req = json_object();
        for (int k = 0; k < p->nreq; k++)
            json_object_set_new(req, v->res[p->req[k].res], json_integer(p->req[k].v));
        json_object_set_new(pods, p->key,
                            json_pack("{s:s?,s:s?,s:s?,s:s,s:b,s:i,s:o}", "node", p->m.node_name,
                                      "nominated", p->m.nominated_node, "phase", p->m.phase, "job",
                                      v->jobs[p->job].id, "counted", p->counted, "priority",
                                      (int)p->m.priority, "requests", req));
    }
    for (size_t i = 0; i < v->njobs; i++) {
        struct sv_job *j = &v->jobs[i];
        if (!j->alive)
            continue;
        json_t *members = sorted_keys(v, j->pods, j->npods);
        char key[512];
        snprintf(key, sizeof(key), "%s:%s", j->gang ? "g" : "p", j->id);
        json_object_set_new(jobs, key,
                            json_pack("{s:b,s:b,s:i,s:o}", "gang", j->gang, "podGroup", j->has_pg,
                                      "minMember", sched__job_min(j), "pods", members));
    }
    return json_pack("{s:o,s:o,s:o,s:s?}", "nodes", nodes, "pods", pods, "jobs", jobs, "topology",
                     v->has_topology ? v->topo.name : NULL);
}
