/*
 * test_place.c - the placement caches against a full recomputation: the binpack pick's
 * per-shape heap (place_heap.c) against a scan of every node, and the gather placer's
 * domain offer cache (place_gather.c) against the offers computed afresh, and its first
 * candidates against every candidate built and sorted afresh, after random
 * changes to a view built directly (pods bound by the pick and beside it, pods applied
 * bound, pods unbound, nodes added, nominations).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "place.h"
#include "view.h"

#define NODE_LABEL_BLOCK "b"
#define NODE_LABEL_SPINE "s"
#define NODE_LABEL_ZONE "z"

static void put_node(struct sched_view *v, int i, const char *cpu, const char *mem)
{
    char name[32], block[16], spine[16], zone[16];
    snprintf(name, sizeof(name), "n-%03d", i);
    snprintf(block, sizeof(block), "b%d", i / 4);
    snprintf(spine, sizeof(spine), "s%d", i / 16);
    snprintf(zone, sizeof(zone), "z%d", i / 32);
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s}},s:{s:{s:s,s:s,s:s}}}", "apiVersion",
                          "v1", "kind", "Node", "metadata", "name", name, "labels",
                          NODE_LABEL_BLOCK, block, NODE_LABEL_SPINE, spine, NODE_LABEL_ZONE, zone,
                          "status", "allocatable", "cpu", cpu, "memory", mem, "pods", "110");
    struct model_node n = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_node_decode(o, &n, &err) == 0, "%s", err.msg);
    sched__view_put_node(v, &n);
    json_decref(o);
}

/* A pod of job "job-<job>" (a PodGroup label when group), bound to node when not NULL,
 * nominated to nominated when not NULL. Returns its index. */
static int put_pod(struct sched_view *v, int i, const char *cpu, const char *mem, int job,
                   int group, const char *node, const char *nominated)
{
    char name[32], jname[32];
    snprintf(name, sizeof(name), "p-%05d", i);
    snprintf(jname, sizeof(jname), "job-%d", job);
    json_t *o =
        json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s,s:{s:{s:s,s:s}}}]}}", "apiVersion", "v1",
                  "kind", "Pod", "metadata", "name", name, "namespace", "t", "spec", "containers",
                  "name", "c", "image", "x", "resources", "requests", "cpu", cpu, "memory", mem);
    if (group)
        json_object_set_new(json_object_get(o, "metadata"), "labels",
                            json_pack("{s:s}", MODEL_LABEL_POD_GROUP, jname));
    if (node)
        json_object_set_new(json_object_get(o, "spec"), "nodeName", json_string(node));
    if (nominated)
        json_object_set_new(o, "status", json_pack("{s:s}", "nominatedNodeName", nominated));
    struct model_pod p = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_pod_decode(o, &p, &err) == 0, "%s", err.msg);
    json_decref(o);
    sched__view_put_pod(v, &p);
    char key[48];
    snprintf(key, sizeof(key), "t/%s", name);
    int pi = sched__view_pod(v, key);
    ck_assert_int_ge(pi, 0);
    return pi;
}

/* What a scan of every live node in name order chooses for pod pi: the highest binpack
 * score among the nodes that pass the static filters and have room, the first name on
 * ties; -1 when none. */
static int full_scan(struct sched_view *v, int pi)
{
    const struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
    size_t n;
    const int *order = sched__view_node_order(v, &n);
    int best = -1;
    double best_score = -1;
    for (size_t i = 0; i < n; i++) {
        const struct sv_node *nd = &v->nodes[order[i]];
        if (sched__fit_static(nd, sh) != SCHED_FIT_OK || sched__fit_res(v, nd, sh, pi) >= 0)
            continue;
        double s = sched__score(v, nd, sh);
        if (s > best_score) {
            best_score = s;
            best = order[i];
        }
    }
    return best;
}

static const char *const CPUS[] = {"100m", "250m", "500m", "1", "2"};
static const char *const MEMS[] = {"256Mi", "1Gi", "2Gi"};

static int pending_pod(struct sched_view *v, unsigned *seed)
{
    for (int tries = 0; tries < 64; tries++) {
        int pi = (int)(rand_r(seed) % v->npods);
        if (v->pods[pi].alive && sched__pod_pending(&v->pods[pi]))
            return pi;
    }
    return -1;
}

START_TEST(test_place_pick_equals_full_scan)
{
    unsigned seed = 7;
    struct sched_view *v = sched__view_new();
    int nnodes = 0, npods = 0;
    for (; nnodes < 40; nnodes++) /* two sizes: equal scores (ties) and unequal ones */
        put_node(v, nnodes, nnodes % 3 ? "4" : "8", nnodes % 3 ? "16Gi" : "32Gi");
    for (; npods < 300; npods++)
        put_pod(v, npods, CPUS[npods % 5], MEMS[npods % 3], npods, 0, NULL, NULL);
    int picks = 0, fails = 0;
    for (int step = 0; step < 4000; step++) {
        int op = (int)(rand_r(&seed) % 100), pi;
        if (op < 70 && (pi = pending_pod(v, &seed)) >= 0) { /* the cycle's pick, then bind */
            int want = full_scan(v, pi), got = sched__pick_node(v, pi);
            ck_assert_msg(got == want, "step %d: pick %d, the full scan %d", step, got, want);
            if (got >= 0)
                sched__view_bind(v, pi, got);
            picks++;
            fails += got < 0;
        } else if (op < 80 && (pi = pending_pod(v, &seed)) >= 0) { /* bound beside the pick */
            int ni = full_scan(v, pi);
            size_t n;
            const int *order = sched__view_node_order(v, &n);
            for (size_t k = rand_r(&seed) % n, t = 0; ni >= 0 && t < n; t++, k = (k + 1) % n)
                if (sched__fit_res(v, &v->nodes[order[k]], &v->shapes[v->pods[pi].shape], pi) < 0) {
                    ni = order[k];
                    break;
                }
            if (ni >= 0)
                sched__view_bind(v, pi, ni);
        } else if (op < 88) { /* applied already bound: usage grows outside the cycle */
            char node[32];
            snprintf(node, sizeof(node), "n-%03d", (int)(rand_r(&seed) % (unsigned)nnodes));
            put_pod(v, npods, CPUS[npods % 5], MEMS[npods % 3], npods, 0, node, NULL);
            npods++;
        } else if (op < 93) { /* a new pending pod */
            put_pod(v, npods, CPUS[npods % 5], MEMS[npods % 3], npods, 0, NULL, NULL);
            npods++;
        } else if (op < 98) { /* room freed: a new epoch */
            int k = (int)(rand_r(&seed) % v->npods);
            if (v->pods[k].alive && v->pods[k].node >= 0)
                sched__view_unbind(v, k);
        } else if (nnodes < 60) { /* a node added */
            put_node(v, nnodes, nnodes % 2 ? "4" : "6", "24Gi");
            nnodes++;
        }
    }
    ck_assert_int_gt(picks, 1000);
    ck_assert_int_gt(fails, 0); /* the cluster filled up at times */
    ck_assert_int_lt(fails, picks);
    sched__view_free(v);
}
END_TEST

/* The ClusterNetworkTopology of spines of blocks of nodes (put_node's labels). */
static void put_spines_blocks(struct sched_view *v)
{
    json_t *tj =
        json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:[s]},{s:s,s:s,s:[s]},{s:s,s:s}]}}", "apiVersion",
                  "scheduling.koordinator.sh/v1alpha1", "kind", "ClusterNetworkTopology",
                  "metadata", "name", "default", "spec", "networkTopologySpec", "topologyLayer",
                  "SpineLayer", "labelKey", NODE_LABEL_SPINE, "topologyLayer", "BlockLayer",
                  "parentTopologyLayer", "SpineLayer", "labelKey", NODE_LABEL_BLOCK,
                  "topologyLayer", "NodeTopologyLayer", "parentTopologyLayer", "BlockLayer");
    struct model_topology topo = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_topology_decode(tj, &topo, &err) == 0, "%s", err.msg);
    json_decref(tj);
    sched__view_put_topo(v, &topo);
}

/* The gather of gang pods[0..n) (one job, one shape), the job and request in *job and *a. */
static void gather_of(struct sched_view *v, int *pods, int n, int *job, struct place_req *a,
                      struct gather *g)
{
    *job = v->pods[pods[0]].job;
    *a = (struct place_req){.jobs = job, .njobs = 1, .pods = pods, .npods = (size_t)n};
    *g = (struct gather){.v = v, .t = sched__topo_get(v), .a = a};
    g->mult = sched__gather_multiples(g->t, NULL);
    g->shape = v->pods[pods[0]].shape;
    g->size = g->need = n;
}

/* The offers of every domain from the cache, against the same with the cache emptied. */
static void offers_equal(struct gather *g, int step)
{
    size_t nd = g->t->ndoms;
    long *cached = calloc(nd, sizeof(long)), *hcached = calloc(nd, sizeof(long));
    for (size_t d = 0; d < nd; d++)
        cached[d] = sched__gather_dom_offer(g, (int)d, &hcached[d]);
    for (size_t d = 0; d < nd; d++)
        g->t->doms[d].c_shape = -1;
    for (size_t d = 0; d < nd; d++) {
        long h, o = sched__gather_dom_offer(g, (int)d, &h);
        ck_assert_msg(o == cached[d] && h == hcached[d],
                      "step %d, domain %s: cached offer %ld hold %ld, recomputed %ld %ld", step,
                      g->t->doms[d].name, cached[d], hcached[d], o, h);
    }
    free(cached);
    free(hcached);
}

/* The gather candidates against every candidate built and sorted afresh: the same count and
 * the same first SCHED_GATHER_TRIES in order (no podCountMultiple here: every ancestor of a
 * domain that holds the job holds it). */
static void cands_equal(struct gather *g, int step, int *many)
{
    const struct sched_topo *t = g->t;
    size_t n = 0, cap = t->ndoms + g->v->nnodes + 1;
    struct gather_cand *all = calloc(cap, sizeof(*all));
    long h, root = 0;
    sched__gather_dom_offer(g, 0, &root);
    const struct sv_shape *sh = &g->v->shapes[g->v->pods[g->a->pods[0]].shape];
    for (size_t di = 0; di < t->ndoms; di++) {
        const struct tp_dom *d = &t->doms[di];
        long o = sched__gather_dom_offer(g, (int)di, &h);
        long po = d->parent >= 0 ? sched__gather_dom_offer(g, d->parent, &h) : 0;
        long gpo = d->parent >= 0 && t->doms[d->parent].parent >= 0
                       ? sched__gather_dom_offer(g, t->doms[d->parent].parent, &h)
                       : 0;
        if (d->depth >= g->lo && sched__gather_holds(g, d->depth, o) >= g->need) {
            double sc = 0;
            int cnt = 0;
            for (int i = 0; i < sh->nreq; i++) {
                int r = sh->req[i].res;
                if ((size_t)r >= t->nres || d->alloc[r] <= 0)
                    continue;
                sc += (double)(d->alloc[r] - d->free[r] + sh->req[i].v) / (double)d->alloc[r];
                cnt++;
            }
            all[n++] = (struct gather_cand){(int)di, -1,  d->depth,           o,
                                            po,      gpo, cnt ? sc / cnt : 0, d->name};
        }
        for (size_t i = 0; root > 0 && i < d->nnodes; i++) {
            long no = sched__gather_node_offer(g, d->nodes[i]);
            if (sched__gather_holds(g, (int)t->nlayers, no) < g->need)
                continue;
            const struct sv_node *nd = &g->v->nodes[d->nodes[i]];
            all[n++] = (struct gather_cand){
                -1, d->nodes[i], (int)t->nlayers, no, o, po, sched__score(g->v, nd, sh), nd->name};
        }
    }
    qsort(all, n, sizeof(*all), (int (*)(const void *, const void *))sched__gather_cand_cmp);
    sched__gather_candidates(g);
    ck_assert_msg(g->ncands == n, "step %d: %zu candidates, recomputed %zu", step, g->ncands, n);
    for (size_t i = 0; i < n && i < SCHED_GATHER_TRIES; i++)
        ck_assert_msg(g->cands[i].dom == all[i].dom && g->cands[i].node == all[i].node,
                      "step %d: candidate %zu is %s, recomputed %s", step, i, g->cands[i].name,
                      all[i].name);
    *many += n > SCHED_GATHER_TRIES;
    free(all);
}

START_TEST(test_place_gather_offers_equal_recomputed)
{
    unsigned seed = 11;
    struct sched_view *v = sched__view_new();
    for (int i = 0; i < 64; i++)
        put_node(v, i, "4", "16Gi");
    put_spines_blocks(v);
    /* 12 gangs of 8 one-cpu pods (one shape); a gang's pods are its job's */
    int pods[12][8], npods = 0;
    for (int j = 0; j < 12; j++)
        for (int k = 0; k < 8; k++)
            pods[j][k] = put_pod(v, npods++, "1", "1Gi", j, 1, NULL, NULL);
    int noms = 0, many = 0;
    for (int step = 0; step < 300; step++) {
        int j = (int)(rand_r(&seed) % 12), op = (int)(rand_r(&seed) % 10);
        char node[32];
        snprintf(node, sizeof(node), "n-%03d", (int)(rand_r(&seed) % 64));
        if (op < 5) { /* a pod of the gang placed somewhere */
            int pi = pods[j][rand_r(&seed) % 8], ni = sched__view_node(v, node);
            if (sched__pod_pending(&v->pods[pi]) && v->pods[pi].nominated < 0 &&
                sched__fit_res(v, &v->nodes[ni], &v->shapes[v->pods[pi].shape], pi) < 0)
                sched__view_bind(v, pi, ni);
        } else if (op < 7 && noms < 10) { /* another job's reservation */
            int pi = pods[j][rand_r(&seed) % 8];
            if (sched__pod_pending(&v->pods[pi])) {
                sched__view_set_nominated(v, pi, sched__view_node(v, node));
                noms++;
            }
        } else if (op < 8) { /* room freed */
            int pi = pods[j][rand_r(&seed) % 8];
            if (v->pods[pi].node >= 0)
                sched__view_unbind(v, pi);
        }
        /* the offers of two gangs in turn, as consecutive attempts ask for them */
        for (int turn = 0; turn < 2; turn++) {
            int gj = (j + turn * 5) % 12, a_pods[8], n = 0;
            for (int k = 0; k < 8; k++)
                if (sched__pod_pending(&v->pods[pods[gj][k]]))
                    a_pods[n++] = pods[gj][k];
            if (n == 0)
                continue;
            int job;
            struct place_req a;
            struct gather g;
            gather_of(v, a_pods, n, &job, &a, &g);
            offers_equal(&g, step);
            cands_equal(&g, step, &many);
            free(g.cands);
            free(g.mult);
        }
    }
    ck_assert_int_gt(noms, 0);
    ck_assert_int_gt(many, 0); /* more candidates than are kept: the selection was exercised */
    sched__view_free(v);
}
END_TEST

/* The why's best domains of each depth from the index, against every domain of the depth
 * sorted afresh (most offer slots first, then lowest index). Returns how many depths the
 * index answered. */
static int best_equal(struct gather *g, int step)
{
    const struct sched_topo *t = g->t;
    int answered = 0;
    for (int depth = 0; depth < (int)t->nlayers; depth++) {
        struct gather_slot best[3];
        long h;
        size_t nd = 0, hold = 0, n = 0, want_hold = 0;
        if (!sched__gather_index_best(g, depth, 3, best, &nd, &hold))
            continue;
        answered++;
        int *all = calloc(t->ndoms, sizeof(int));
        for (size_t di = 0; di < t->ndoms; di++)
            if (t->doms[di].depth == depth) {
                all[n++] = (int)di;
                long o = sched__gather_dom_offer(g, (int)di, &h);
                want_hold += sched__gather_holds(g, depth, o) >= g->need;
            }
        ck_assert_int_eq(nd, n);
        ck_assert_int_eq(hold, want_hold);
        for (size_t i = 0; i < 3; i++) { /* selection of the 3 best, the scan's way */
            size_t b = i;
            for (size_t k = i + 1; k < n; k++) {
                long ok = sched__gather_dom_offer(g, all[k], &h),
                     ob = sched__gather_dom_offer(g, all[b], &h);
                if (ok > ob || (ok == ob && all[k] < all[b]))
                    b = k;
            }
            int x = all[i];
            all[i] = all[b];
            all[b] = x;
            ck_assert_msg(best[i].ix == all[i] &&
                              best[i].offer == sched__gather_dom_offer(g, all[i], &h),
                          "step %d, depth %d: best %zu is %s (%ld), the scan's %s", step, depth, i,
                          t->doms[best[i].ix].name, best[i].offer, t->doms[all[i]].name);
        }
        free(all);
    }
    return answered;
}

/* The index of holding domains (place_index.c) against every candidate built and sorted
 * afresh, on four layers (zones of spines of blocks: blocks of one gang compare by their
 * spines' and zones' offers), as gangs of different sizes are placed, freed and placed
 * again, with no nomination (the index is used only then). */
START_TEST(test_place_gather_index_equals_recomputed)
{
    unsigned seed = 5;
    struct sched_view *v = sched__view_new();
    for (int i = 0; i < 64; i++)
        put_node(v, i, i % 5 ? "4" : "3", "16Gi");
    json_t *tj = json_pack(
        "{s:s,s:s,s:{s:s},s:{s:[{s:s,s:[s]},{s:s,s:s,s:[s]},{s:s,s:s,s:[s]},{s:s,s:s}]}}",
        "apiVersion", "scheduling.koordinator.sh/v1alpha1", "kind", "ClusterNetworkTopology",
        "metadata", "name", "default", "spec", "networkTopologySpec", "topologyLayer", "ZoneLayer",
        "labelKey", NODE_LABEL_ZONE, "topologyLayer", "SpineLayer", "parentTopologyLayer",
        "ZoneLayer", "labelKey", NODE_LABEL_SPINE, "topologyLayer", "BlockLayer",
        "parentTopologyLayer", "SpineLayer", "labelKey", NODE_LABEL_BLOCK, "topologyLayer",
        "NodeTopologyLayer", "parentTopologyLayer", "BlockLayer");
    struct model_topology topo = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_topology_decode(tj, &topo, &err) == 0, "%s", err.msg);
    json_decref(tj);
    sched__view_put_topo(v, &topo);
    /* 24 gangs of 5 to 8 one-cpu pods: no 4-cpu node holds one alone */
    int pods[24][8], size[24], npods = 0;
    for (int j = 0; j < 24; j++) {
        size[j] = 5 + j % 4;
        for (int k = 0; k < size[j]; k++)
            pods[j][k] = put_pod(v, npods++, "1", "1Gi", j, 1, NULL, NULL);
    }
    int many = 0, bests = 0;
    for (int step = 0; step < 400; step++) {
        int j = (int)(rand_r(&seed) % 24), op = (int)(rand_r(&seed) % 10);
        char node[32];
        snprintf(node, sizeof(node), "n-%03d", (int)(rand_r(&seed) % 64));
        if (op < 6) { /* a pod of the gang placed somewhere */
            int pi = pods[j][rand_r(&seed) % (unsigned)size[j]], ni = sched__view_node(v, node);
            if (sched__pod_pending(&v->pods[pi]) &&
                sched__fit_res(v, &v->nodes[ni], &v->shapes[v->pods[pi].shape], pi) < 0)
                sched__view_bind(v, pi, ni);
        } else if (op < 9) { /* room freed */
            int pi = pods[j][rand_r(&seed) % (unsigned)size[j]];
            if (v->pods[pi].node >= 0)
                sched__view_unbind(v, pi);
        }
        /* consecutive attempts: like gangs (the index is reused), then another size */
        for (int turn = 0; turn < 3; turn++) {
            int gj = (j + turn * (turn == 2 ? 5 : 4)) % 24, a_pods[8], n = 0;
            for (int k = 0; k < size[gj]; k++)
                if (sched__pod_pending(&v->pods[pods[gj][k]]))
                    a_pods[n++] = pods[gj][k];
            if (n < 5)
                continue;
            int job;
            struct place_req a;
            struct gather g;
            gather_of(v, a_pods, n, &job, &a, &g);
            g.lo = (int)(rand_r(&seed) % 3); /* MustGather at zone, spine or none */
            cands_equal(&g, step, &many);
            bests += best_equal(&g, step);
            free(g.cands);
            free(g.mult);
        }
    }
    ck_assert_int_gt(many, 0);
    /* the index was kept up to date, not only rebuilt */
    ck_assert_uint_gt(sched__gather_index_updates(sched__topo_get(v)), 100);
    ck_assert_int_gt(bests, 100); /* the why's best domains came from the index too */
    sched__view_free(v);
}
END_TEST

/* What the offers of gang pods[0..n) are (checked against the offers made afresh), and those
 * of the domain named dom. */
static long offers_of(struct sched_view *v, int *pods, int n, const char *dom, int step)
{
    int job;
    struct place_req a;
    struct gather g;
    gather_of(v, pods, n, &job, &a, &g);
    long offer = -1;
    for (size_t di = 0; di < g.t->ndoms; di++)
        if (!strcmp(g.t->doms[di].name, dom))
            offer = sched__gather_offer_of(&g, (int)di);
    offers_equal(&g, step);
    free(g.mult);
    return offer;
}

/* A nomination reserves only while its pod is pending (place_fit.c): a nominated pod bound to
 * another node, as a preemptor's replan or a statement may, gives its nominated node's room
 * back until it is unbound again. Another gang's cached offers follow both ways, and a
 * release of usage (an unbind, a victim taken out) keeps the caches of the domains it did
 * not touch. */
START_TEST(test_place_gather_offers_follow_nominations)
{
    struct sched_view *v = sched__view_new();
    for (int i = 0; i < 64; i++)
        put_node(v, i, "4", "16Gi");
    put_spines_blocks(v);
    int x = put_pod(v, 0, "1", "1Gi", 0, 0, NULL, "n-001"), y[8];
    for (int k = 0; k < 8; k++)
        y[k] = put_pod(v, 1 + k, "1", "1Gi", 1, 1, NULL, NULL);
    ck_assert_int_eq(v->pods[x].nominated, sched__view_node(v, "n-001"));
    /* b0 is n-000..n-003: 4 + 3 + 4 + 4 one-cpu pods, n-001's cpu reserved for x */
    ck_assert_int_eq(offers_of(v, y, 8, "b0", 0), 15);
    sched__view_bind(v, x, sched__view_node(v, "n-020"));
    ck_assert_int_eq(offers_of(v, y, 8, "b0", 1), 16);
    ck_assert_int_eq(offers_of(v, y, 8, "b5", 1), 15);
    uint64_t offer_epoch = sched__view_offer_epoch(v), epoch = v->epoch;
    sched__view_unbind(v, x);
    /* the placers' caches are gone, the offers' kept but for the two blocks' */
    ck_assert_uint_gt(v->epoch, epoch);
    ck_assert_uint_eq(sched__view_offer_epoch(v), offer_epoch);
    ck_assert_int_eq(offers_of(v, y, 8, "b0", 2), 15);
    ck_assert_int_eq(offers_of(v, y, 8, "b5", 2), 16);
    /* x on its nominated node: nothing reserved, one cpu used */
    sched__view_bind(v, x, sched__view_node(v, "n-001"));
    ck_assert_int_eq(offers_of(v, y, 8, "b0", 3), 15);
    sched__view_unbind(v, x);
    ck_assert_int_eq(offers_of(v, y, 8, "b0", 4), 15);
    sched__view_free(v);
}
END_TEST

/* The pick caches (place_pick.c, place_heap.c) keep, within a view epoch, what usage only
 * growing allows: a nominated pod bound elsewhere frees its reservation on the nominated
 * node, and the node fits again for another job's pod. */
START_TEST(test_place_pick_follows_nominations)
{
    struct sched_view *v = sched__view_new();
    for (int i = 0; i < 4; i++)
        put_node(v, i, "4", "16Gi");
    /* n-000, n-002 and n-003 full; n-001 empty but for x's nomination */
    int fill[3] = {0, 2, 3};
    for (int k = 0; k < 3; k++) {
        char node[16];
        snprintf(node, sizeof(node), "n-%03d", fill[k]);
        put_pod(v, 10 + k, "4", "1Gi", 10 + k, 0, node, NULL);
    }
    int x = put_pod(v, 0, "1", "1Gi", 0, 0, NULL, "n-001");
    int z = put_pod(v, 1, "4", "1Gi", 1, 0, NULL, NULL);
    ck_assert_int_eq(sched__pick_node(v, z), -1); /* remembered for the shape */
    sched__view_bind(v, x, sched__view_node(v, "n-000"));
    ck_assert_int_eq(full_scan(v, z), sched__view_node(v, "n-001"));
    ck_assert_int_eq(sched__pick_node(v, z), sched__view_node(v, "n-001"));
    sched__view_free(v);
}
END_TEST

static Suite *place_suite(void)
{
    Suite *s = suite_create("place");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_place_pick_equals_full_scan);
    tcase_add_test(tc, test_place_gather_offers_equal_recomputed);
    tcase_add_test(tc, test_place_gather_offers_follow_nominations);
    tcase_add_test(tc, test_place_pick_follows_nominations);
    tcase_add_test(tc, test_place_gather_index_equals_recomputed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(place_suite());
}
