/*
 * ship_util.h - helpers of the accounting tests (test_ship.c, test_ship_faults.c): a musterd
 * with accounting into a PostgreSQL database, its API and CLI read as JSON, workloads of
 * gangs, and waits for what was shipped.
 */
#ifndef MUSTER_TESTS_SHIP_UTIL_H
#define MUSTER_TESTS_SHIP_UTIL_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>

#include "crash_support.h"

#define SHIP_NEAR(a, b)                                                                            \
    ck_assert_msg(fabs((a) - (b)) < 1e-6, "%.9f != %.9f", (double)(a), (double)(b))

/* One node (16 cpu, 64Gi, 8 GPUs) and the queues qa and qb. */
extern const char ship_util_cluster_yaml[];

char *ship_util_acct_config_batch(const char *url, const char *cluster, const char *extra,
                                  int batch);

char *ship_util_acct_config(const char *url, const char *cluster, const char *extra);

void ship_util_start(struct musterd *m, const char *cfg, const char *root);

json_t *ship_util_get_json(const struct musterd *m, const char *path);

void ship_util_post_yaml(const struct musterd *m, const char *yaml);

void ship_util_delete_pod(const struct musterd *m, const char *ns, const char *name);

/* Waits until the shipper has every record (healthz accounting lagRecords 0) and the
 * log is quiet; returns the head seq. */
json_int_t ship_util_wait_shipped(const struct musterd *m);

/* Every audit record of the store (the export) is in the database exactly once, byte for
 * byte, in seq order 1..head, and nothing else for (cluster, chain). */
void ship_util_check_copy(const struct musterd *m, const char *url, const char *cluster);

/* The audit records of the export, parsed (new array). */
json_t *ship_util_export_records(const struct musterd *m);

int64_t ship_util_ts_of(json_t *rec);

/* The ts of the first record of kind about pod (in "pods" or as "object") */
int64_t ship_util_pod_event(json_t *recs, const char *kind, const char *pod);

/* A gang of n pods of g GPUs and 1 cpu in queue q. */
char *ship_util_gang_yaml(const char *ns, const char *name, int n, int g, const char *q);

void ship_util_wait_placed(const struct musterd *m, int pods);

json_t *ship_util_row_of(json_t *rows, const char *key);

/* single-pod jobs j<from>..j<to-1> of 1 GPU in queue qa */
void ship_util_post_jobs(const struct musterd *m, const char *ns, int from, int to);

char *ship_util_verify_db(const char *url, const char *cluster, const char *key, int *status);

/* `muster audit verify --from-db` of cluster's copy in url passes. */
void ship_util_assert_verified(const char *url, const char *cluster);

json_t *ship_util_healthz_acct(const struct musterd *m);

#endif
