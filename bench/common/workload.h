/*
 * workload.h - synthetic clusters for the benchmarks.
 *
 * A workload is a list of JSON documents in Kubernetes shape (nodes, topology, pod groups,
 * pods), generated deterministically from a name and a scale. Benchmarks feed them to
 * sched_apply in batches exactly as manifests arriving over the API would be.
 *
 *     struct workload w;
 *     workload_make("gang", 5000, &w, &err);     nodes in w.nodes, jobs in w.jobs
 *     ... workload_release(&w);
 */
#ifndef MUSTER_BENCH_WORKLOAD_H
#define MUSTER_BENCH_WORKLOAD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct err;

struct workload {
    json_t *infra; /* array: nodes and the ClusterNetworkTopology */
    json_t *jobs;  /* array of arrays: each job's documents (PodGroup first, then pods) */
    size_t pods;   /* pods in jobs */
};

/* Names: "basic" (single pods, 100m/500Mi), "gang" (gangs of 8, minMember 8),
 * "gang-topology" (1,250 MustGather BlockLayer gangs of 8 on blocks of 32 nodes),
 * "biggang" (9 gangs of 1,000 pods per 6,250 nodes, MustGather SpineLayer, spines of 8
 * blocks of 32 nodes per 1,000 pods: 8,000-pod gangs in spines of 2,048 nodes at 50k),
 * "gang-preempt" and
 * "reclaim" (bench/preempt.c: low-priority gangs, or gangs of queue "lend", filling the
 * cluster, then 100 MustGather gangs of 32, of high priority, or in queue "claim").
 * "slurm-gangs" and "slurm-mixed" (the Slurm side-by-side of issue #16, on nodes of 64 cpu,
 * 512Gi and 8 GPUs in leaves (BlockLayer) of WORKLOAD_SLURM_LEAF nodes, 4 leaves a spine:
 * 1,000 gangs of 8 whole-node pods, PreferGather on the leaf layer; or 4,000 one-node jobs
 * and 100 such gangs of 32, forty single jobs then one gang; each job created one second
 * after the one before, so they are tried in submission order; use 1,024 nodes).
 * nodes: cluster size. Returns 0 or ERR_INVALID for an unknown name. */
int workload_make(const char *name, size_t nodes, struct workload *out, struct err *err);
void workload_release(struct workload *w);

/* Nodes of the slurm-* workloads per leaf: node-NNNNN is in leaf NNNNN / 64. */
#define WORKLOAD_SLURM_LEAF 64

/* Nodes carry topology.kubernetes.io/zone: zone-(index % WORKLOAD_ZONES). */
#define WORKLOAD_ZONES 10
/* Adds placement rules to the workload's pods, by job index: 30% of the jobs get required
 * node affinity (two of the ten zones), 10% required anti-affinity on kubernetes.io/hostname
 * (a gang's members against each other; single pods in apps of 8). */
void workload_add_rules(struct workload *w);

/* Adds n Queues q00, q01, ... with weights 1, 2, 3, 4, 1, ... to w->infra and puts job j
 * into queue q(j % n): a PodGroup's spec.queue, a lone pod's queue-name annotation. */
void workload_add_queues(struct workload *w, size_t n);

/* Keeps the first n nodes of w->infra (the jobs stay: a smaller cluster for the same
 * work). */
void workload_trim_nodes(struct workload *w, size_t n);

/* Wraps an array of documents as a manifest (each document validated). Returns 0 or
 * ERR_INVALID with the first validation problem. m owns new references. */
int workload_manifest(json_t *docs, struct model_manifest *m, struct err *err);

/* Applies the documents of jobs[from..to) (each an array of documents, as w->jobs holds
 * them; w->infra wrapped in an array of one for the nodes) with sched_apply at now. */
struct sched;
int workload_apply(struct sched *s, json_t *jobs, size_t from, size_t to, int64_t now,
                   struct err *err);

/* Peak resident set size of this process in KiB (VmHWM). */
long workload_peak_rss_kib(void);

#endif
