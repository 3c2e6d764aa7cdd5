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

#include "model.h"

struct err;

struct workload {
    json_t *infra; /* array: nodes and the ClusterNetworkTopology */
    json_t *jobs;  /* array of arrays: each job's documents (PodGroup first, then pods) */
    size_t pods;   /* pods in jobs */
};

/* Names: "basic" (single pods, 100m/500Mi), "gang" (gangs of 8, minMember 8),
 * "gang-topology" (1,250 MustGather BlockLayer gangs of 8 on blocks of 32 nodes),
 * "biggang" (9 gangs of 1,000 pods, MustGather SpineLayer). nodes: cluster size.
 * Returns 0 or ERR_INVALID for an unknown name. */
int workload_make(const char *name, size_t nodes, struct workload *out, struct err *err);
void workload_release(struct workload *w);

/* Nodes carry topology.kubernetes.io/zone: zone-(index % WORKLOAD_ZONES). */
#define WORKLOAD_ZONES 10
/* Adds placement rules to the workload's pods, by job index: 30% of the jobs get required
 * node affinity (two of the ten zones), 10% required anti-affinity on kubernetes.io/hostname
 * (a gang's members against each other; single pods in apps of 8). */
void workload_add_rules(struct workload *w);

/* Wraps an array of documents as a manifest (each document validated). Returns 0 or
 * ERR_INVALID with the first validation problem. m owns new references. */
int workload_manifest(json_t *docs, struct model_manifest *m, struct err *err);

/* Peak resident set size of this process in KiB (VmHWM). */
long workload_peak_rss_kib(void);

#endif
