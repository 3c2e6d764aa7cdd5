#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "scheduler.h"

#define BLOCK_LABEL "network.topology.nvidia.com/block"
#define SPINE_LABEL "network.topology.nvidia.com/spine"
#define ZONE_LABEL "topology.kubernetes.io/zone"

static json_t *make_node(size_t i, size_t block_size, size_t blocks_per_spine, int whole)
{
    char name[64], block[32], spine[32];
    size_t b = i / block_size;

    snprintf(name, sizeof(name), "node-%05zu", i);
    snprintf(block, sizeof(block), "block-%zu", b);
    snprintf(spine, sizeof(spine), "spine-%zu", b / blocks_per_spine);
    json_t *alloc = whole
                        ? json_pack("{s:s, s:s, s:s, s:s}", "cpu", "64", "memory", "512Gi", "pods",
                                    "110", "nvidia.com/gpu", "8")
                        : json_pack("{s:s, s:s, s:s}", "cpu", "4", "memory", "32Gi", "pods", "110");
    char zone[32];
    snprintf(zone, sizeof(zone), "zone-%zu", i % WORKLOAD_ZONES);
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}}, s:{s:o}}", "apiVersion", "v1", "kind",
                     "Node", "metadata", "name", name, "labels", BLOCK_LABEL, block, SPINE_LABEL,
                     spine, ZONE_LABEL, zone, "status", "allocatable", alloc);
}

static json_t *make_topology(void)
{
    return json_pack(
        "{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:[s]}, {s:s, s:s, s:[s]}, {s:s, s:s}]}}", "apiVersion",
        "scheduling.koordinator.sh/v1alpha1", "kind", "ClusterNetworkTopology", "metadata", "name",
        "default", "spec", "networkTopologySpec", "topologyLayer", "SpineLayer", "labelKey",
        SPINE_LABEL, "topologyLayer", "BlockLayer", "parentTopologyLayer", "SpineLayer", "labelKey",
        BLOCK_LABEL, "topologyLayer", "NodeTopologyLayer", "parentTopologyLayer", "BlockLayer");
}

static json_t *make_pod(const char *name, const char *group, const char *cpu, const char *mem,
                        long index)
{
    json_t *pod = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i, s:[{s:s, s:s, s:{s:{s:s, s:s}}}]}}", "apiVersion",
        "v1", "kind", "Pod", "metadata", "name", name, "namespace", "bench", "creationTimestamp",
        "2026-11-01T00:00:00Z", "spec", "priority", 0, "containers", "name", "main", "image",
        "bench", "resources", "requests", "cpu", cpu, "memory", mem);
    json_t *meta = json_object_get(pod, "metadata");
    if (group) {
        json_object_set_new(meta, "labels", json_pack("{s:s}", MODEL_LABEL_POD_GROUP, group));
    }
    if (index >= 0) {
        char idx[24];
        snprintf(idx, sizeof(idx), "%ld", index);
        json_object_set_new(meta, "annotations", json_pack("{s:s}", MODEL_ANN_TOPOLOGY_INDEX, idx));
    }
    return pod;
}

/* Sets every document's creationTimestamp to the epoch of the workloads plus `second`. */
static void stamp(json_t *docs, int64_t second)
{
    char ts[32];
    json_t *doc;
    size_t i;
    snprintf(ts, sizeof(ts), "2026-11-01T%02d:%02d:%02dZ", (int)(second / 3600 % 24),
             (int)(second / 60 % 60), (int)(second % 60));
    json_array_foreach(docs, i, doc)
        json_object_set_new(json_object_get(doc, "metadata"), "creationTimestamp", json_string(ts));
}

static json_t *make_group(const char *name, int min_member, const char *must_layer)
{
    json_t *pg = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i}}", "apiVersion",
                           "scheduling.sigs.k8s.io/v1alpha1", "kind", "PodGroup", "metadata",
                           "name", name, "namespace", "bench", "creationTimestamp",
                           "2026-11-01T00:00:00Z", "spec", "minMember", min_member);
    if (must_layer) {
        char spec[160];
        snprintf(spec, sizeof(spec),
                 "{\"gatherStrategy\":[{\"layer\":\"%s\",\"strategy\":\"MustGather\"}]}",
                 must_layer);
        json_object_set_new(json_object_get(pg, "metadata"), "annotations",
                            json_pack("{s:s}", MODEL_ANN_TOPOLOGY_SPEC, spec));
    }
    return pg;
}

static void add_gangs(struct workload *w, size_t gangs, size_t size, const char *cpu,
                      const char *mem, const char *must_layer)
{
    char gname[64], pname[128];
    for (size_t g = 0; g < gangs; g++) {
        json_t *docs = json_array();
        snprintf(gname, sizeof(gname), "gang-%05zu", g);
        json_array_append_new(docs, make_group(gname, (int)size, must_layer));
        for (size_t p = 0; p < size; p++) {
            snprintf(pname, sizeof(pname), "%s-%04zu", gname, p);
            json_array_append_new(docs, make_pod(pname, gname, cpu, mem, (long)p));
        }
        json_array_append_new(w->jobs, docs);
        w->pods += size;
    }
}

static json_t *make_queue(const char *name, int weight)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion",
                     "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata", "name", name,
                     "creationTimestamp", "2026-11-01T00:00:00Z", "spec", "weight", weight);
}

/* Puts job j's documents into queue q: a PodGroup's spec.queue, a lone pod's queue-name
 * annotation (Volcano's two ways). */
static void job_to_queue(json_t *docs, const char *q)
{
    json_t *first = json_array_get(docs, 0);
    if (!strcmp(json_string_value(json_object_get(first, "kind")), "PodGroup")) {
        json_object_set_new(json_object_get(first, "spec"), "queue", json_string(q));
        return;
    }
    json_t *md = json_object_get(first, "metadata"), *ann = json_object_get(md, "annotations");
    if (!ann)
        json_object_set_new(md, "annotations", ann = json_object());
    json_object_set_new(ann, MODEL_ANN_QUEUE_NAME, json_string(q));
}

/* nodes / 8 gangs of 8 whole-node pods (4 cpu, 32Gi) in queue "lend" fill the cluster; then
 * 100 gangs of 32 whole-node pods (MustGather BlockLayer) arrive in queue "claim", of equal
 * weight (bench/preempt.c --reclaim). Every pod has priority 0. */
static void reclaim_workload(struct workload *w, size_t nodes)
{
    add_gangs(w, nodes / 8, 8, "4", "32Gi", NULL);
    size_t low = json_array_size(w->jobs);
    add_gangs(w, 100, 32, "4", "32Gi", "BlockLayer");
    for (size_t g = 0; g < json_array_size(w->jobs); g++) {
        json_t *docs = json_array_get(w->jobs, g), *doc;
        size_t i;
        job_to_queue(docs, g < low ? "lend" : "claim");
        json_array_foreach(docs, i, doc)
        {
            if (g < low)
                continue;
            json_t *md = json_object_get(doc, "metadata");
            char hn[160];
            snprintf(hn, sizeof(hn), "claim-%s", json_string_value(json_object_get(md, "name")));
            json_object_set_new(md, "name", json_string(hn));
            json_t *lab = json_object_get(md, "labels");
            if (i == 0 || !lab)
                continue;
            const char *gn = json_string_value(json_object_get(lab, MODEL_LABEL_POD_GROUP));
            snprintf(hn, sizeof(hn), "claim-%s", gn);
            json_object_set_new(lab, MODEL_LABEL_POD_GROUP, json_string(hn));
        }
    }
    json_array_append_new(w->infra, make_queue("lend", 1));
    json_array_append_new(w->infra, make_queue("claim", 1));
}

/* A pod asking for a whole node of the Slurm shape: 64 cpu, 500Gi and 8 GPUs. */
static json_t *whole_pod(const char *name, const char *group, long index)
{
    json_t *pod = make_pod(name, group, "64", "500Gi", index);
    json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_object_set_new(json_object_get(json_object_get(c, "resources"), "requests"),
                        "nvidia.com/gpu", json_string("8"));
    return pod;
}

/* The Slurm side-by-side (issue #16): gangs of `size` whole-node pods (64 cpu, 8 GPUs),
 * PreferGather on the leaf layer, named gang-NNNNN; every job created one second after the
 * one before, so jobs of equal priority are tried in submission order as Slurm's are. */
static json_t *whole_gang(size_t g, size_t size, int64_t *created)
{
    char gname[64], pname[128];
    json_t *docs = json_array(), *pg;
    snprintf(gname, sizeof(gname), "gang-%05zu", g);
    pg = make_group(gname, (int)size, NULL);
    json_object_set_new(json_object_get(pg, "metadata"), "annotations",
                        json_pack("{s:s}", MODEL_ANN_TOPOLOGY_SPEC,
                                  "{\"gatherStrategy\":[{\"layer\":\"BlockLayer\","
                                  "\"strategy\":\"PreferGather\"}]}"));
    json_array_append_new(docs, pg);
    for (size_t p = 0; p < size; p++) {
        snprintf(pname, sizeof(pname), "%s-%04zu", gname, p);
        json_array_append_new(docs, whole_pod(pname, gname, (long)p));
    }
    stamp(docs, (*created)++);
    return docs;
}

/* slurm-gangs: 1,000 gangs of 8; slurm-mixed: 4,000 one-node jobs and 100 gangs of 32,
 * forty single jobs then one gang. */
static void slurm_workload(struct workload *w, int mixed)
{
    int64_t created = 0;
    size_t singles = 0, gangs = 0, size = mixed ? 32 : 8, total = mixed ? 100 : 1000;
    char pname[64];
    while (gangs < total) {
        for (int k = 0; mixed && k < 40; k++) {
            json_t *docs = json_array();
            snprintf(pname, sizeof(pname), "job-%05zu", singles++);
            json_array_append_new(docs, whole_pod(pname, NULL, -1));
            stamp(docs, created++);
            json_array_append_new(w->jobs, docs);
            w->pods++;
        }
        json_array_append_new(w->jobs, whole_gang(gangs++, size, &created));
        w->pods += size;
    }
}

void workload_add_queues(struct workload *w, size_t n)
{
    char name[32];
    for (size_t q = 0; q < n; q++) {
        snprintf(name, sizeof(name), "q%02zu", q);
        json_array_append_new(w->infra, make_queue(name, 1 + (int)(q % 4)));
    }
    for (size_t j = 0; n && j < json_array_size(w->jobs); j++) {
        snprintf(name, sizeof(name), "q%02zu", j % n);
        job_to_queue(json_array_get(w->jobs, j), name);
    }
}

void workload_trim_nodes(struct workload *w, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < json_array_size(w->infra);) {
        json_t *doc = json_array_get(w->infra, i);
        if (strcmp(json_string_value(json_object_get(doc, "kind")), "Node") || kept++ < n)
            i++;
        else
            json_array_remove(w->infra, i);
    }
}

int workload_make(const char *name, size_t nodes, struct workload *out, struct err *err)
{
    int whole = 0;
    size_t block = 32, per_spine = 8;

    memset(out, 0, sizeof(*out));
    out->infra = json_array();
    out->jobs = json_array();
    if (strcmp(name, "basic") == 0) {
        char pname[64];
        for (size_t i = 0; i < nodes * 10; i++) {
            json_t *docs = json_array();
            snprintf(pname, sizeof(pname), "pod-%06zu", i);
            json_array_append_new(docs, make_pod(pname, NULL, "100m", "500Mi", -1));
            json_array_append_new(out->jobs, docs);
        }
        out->pods = nodes * 10;
    } else if (strcmp(name, "gang") == 0) {
        add_gangs(out, nodes, 8, "100m", "500Mi", NULL);
    } else if (strcmp(name, "gang-topology") == 0) {
        add_gangs(out, nodes / 4, 8, "1", "4Gi", "BlockLayer");
    } else if (strcmp(name, "gang-preempt") == 0) {
        /* nodes / 8 low-priority gangs of 8 whole-node pods fill the cluster; then 100
         * high-priority gangs of 32 (MustGather BlockLayer) must preempt (bench/preempt.c). */
        add_gangs(out, nodes / 8, 8, "4", "16Gi", NULL);
        size_t low = json_array_size(out->jobs);
        add_gangs(out, 100, 32, "4", "16Gi", "BlockLayer");
        for (size_t g = low; g < json_array_size(out->jobs); g++) {
            size_t i;
            json_t *doc;
            json_array_foreach(json_array_get(out->jobs, g), i, doc)
            {
                json_t *md = json_object_get(doc, "metadata");
                const char *n = json_string_value(json_object_get(md, "name"));
                char hn[160];
                snprintf(hn, sizeof(hn), "hi-%s", n);
                json_object_set_new(md, "name", json_string(hn));
                if (i == 0)
                    continue;
                json_t *lab = json_object_get(md, "labels");
                const char *gn = json_string_value(json_object_get(lab, MODEL_LABEL_POD_GROUP));
                snprintf(hn, sizeof(hn), "hi-%s", gn);
                json_object_set_new(lab, MODEL_LABEL_POD_GROUP, json_string(hn));
                json_object_set_new(json_object_get(doc, "spec"), "priority", json_integer(1000));
            }
        }
    } else if (strcmp(name, "reclaim") == 0) {
        reclaim_workload(out, nodes);
    } else if (strcmp(name, "slurm-gangs") == 0 || strcmp(name, "slurm-mixed") == 0) {
        slurm_workload(out, name[6] == 'm');
        whole = 1;
        block = WORKLOAD_SLURM_LEAF;
        per_spine = 4;
    } else if (strcmp(name, "biggang") == 0) {
        /* 9 gangs of 1,000 pods per 6,250 nodes (1,000 at 5k, 3,000 at 20k, 8,000 at 50k);
         * a spine of 8 blocks per 1,000 pods (256 nodes, 1,024 one-cpu pods, at 5k; 64
         * blocks, 2,048 nodes, 8,192 pods, at 50k) holds one gang */
        size_t k = nodes / 6250 > 1 ? nodes / 6250 : 1;
        per_spine = 8 * k;
        add_gangs(out, 9, 1000 * k, "1", "4Gi", "SpineLayer");
    } else {
        workload_release(out);
        return err_set(err, ERR_INVALID, "unknown workload '%s'", name);
    }
    for (size_t i = 0; i < nodes; i++)
        json_array_append_new(out->infra, make_node(i, block, per_spine, whole));
    json_array_append_new(out->infra, make_topology());
    return 0;
}

/* Required node affinity: the pod's zone among two of the ten. */
static json_t *zone_affinity(size_t job)
{
    char a[32], b[32];
    snprintf(a, sizeof(a), "zone-%zu", job % WORKLOAD_ZONES);
    snprintf(b, sizeof(b), "zone-%zu", (job + 1) % WORKLOAD_ZONES);
    return json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s, s]}]}]}}}", "nodeAffinity",
                     "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                     "matchExpressions", "key", ZONE_LABEL, "operator", "In", "values", a, b);
}

/* Required anti-affinity on the node against the pods labelled app=value. */
static json_t *host_anti(const char *value)
{
    return json_pack("{s:{s:[{s:{s:{s:s}}, s:s}]}}", "podAntiAffinity",
                     "requiredDuringSchedulingIgnoredDuringExecution", "labelSelector",
                     "matchLabels", "app", value, "topologyKey", "kubernetes.io/hostname");
}

void workload_add_rules(struct workload *w)
{
    size_t njobs = json_array_size(w->jobs);
    for (size_t j = 0; j < njobs; j++) {
        json_t *docs = json_array_get(w->jobs, j), *doc;
        size_t k;
        char app[64];
        /* a gang's pods keep apart from each other; single pods in apps of 8 */
        snprintf(app, sizeof(app), "app-%zu", json_array_size(docs) > 1 ? j : j / 80);
        json_array_foreach(docs, k, doc)
        {
            json_t *spec = json_object_get(doc, "spec"), *md = json_object_get(doc, "metadata");
            if (strcmp(json_string_value(json_object_get(doc, "kind")), "Pod"))
                continue;
            if (j % 10 < 3) {
                json_object_set_new(spec, "affinity", zone_affinity(j));
            } else if (j % 10 == 3) {
                json_t *lab = json_object_get(md, "labels");
                if (!lab)
                    json_object_set_new(md, "labels", lab = json_object());
                json_object_set_new(lab, "app", json_string(app));
                json_object_set_new(spec, "affinity", host_anti(app));
            }
        }
    }
}

void workload_release(struct workload *w)
{
    if (!w)
        return;
    json_decref(w->infra);
    json_decref(w->jobs);
    memset(w, 0, sizeof(*w));
}

int workload_manifest(json_t *docs, struct model_manifest *m, struct err *err)
{
    size_t i;
    json_t *doc, *errors = json_array();
    int rc = 0;

    m->n = json_array_size(docs);
    m->validated = 0;
    m->docs = xcalloc(m->n, sizeof(*m->docs));
    json_array_foreach(docs, i, doc)
    {
        m->docs[i].index = (int)i + 1;
        m->docs[i].obj = json_deep_copy(doc);
        m->docs[i].pos = json_object();
        if (model_validate(&m->docs[i], errors) > 0) {
            json_t *e = json_array_get(errors, 0);
            rc = err_set(err, ERR_INVALID, "%s", json_string_value(json_object_get(e, "message")));
            break;
        }
    }
    json_decref(errors);
    if (rc < 0)
        model_manifest_free(m);
    return rc;
}

long workload_peak_rss_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    }
    fclose(f);
    return kib;
}

int workload_apply(struct sched *s, json_t *jobs, size_t from, size_t to, int64_t now,
                   struct err *err)
{
    json_t *docs = json_array();
    for (size_t g = from; g < to; g++)
        json_array_extend(docs, json_array_get(jobs, g));
    struct model_manifest m;
    json_t *results = NULL;
    int rc = workload_manifest(docs, &m, err);
    if (rc == 0)
        rc = sched_apply(s, &m, now, &results, err);
    json_decref(results);
    model_manifest_free(&m);
    json_decref(docs);
    return rc;
}
