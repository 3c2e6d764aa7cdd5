/*
 * server.h - musterd: configuration (YAML file + command-line flags) and the main loop.
 *
 * Calling sequence (main.c):
 *
 *     struct server_config c;
 *     server_config_init(&c);                            defaults
 *     server_args(argc, argv, &c, &done, &err);          --config FILE is loaded first,
 *                                                        then the other flags override it
 *     if (!done) server_run(&c, &err);                   until SIGTERM / SIGINT
 *     server_config_release(&c);
 *
 * server_config_check (called by server_args) refuses settings that only make sense
 * together, with the keys named.
 *
 * server_run opens the store (ERR_BUSY when another musterd holds the data directory),
 * the scheduler and the API, and runs a cycle thread: sched_cycle every cycle_interval
 * seconds and soon after every successful apply or delete. SIGTERM and SIGINT stop
 * accepting requests, let the current cycle finish and close everything cleanly. SIGHUP
 * reloads the TLS certificate, key and client CA; they are also reloaded within about a
 * second of a change to their files.
 *
 * yaml.h is included only by config.c.
 */
#ifndef MUSTER_SERVER_H
#define MUSTER_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "cpus.h"
#include "log.h"
#include "model.h"
#include "store.h"

struct err;

struct server_config {
    char *listen;      /* "ADDR:PORT", default "127.0.0.1:8080"; port 0 picks one */
    char *data_dir;    /* default "var/muster" */
    char *token;       /* NULL: no legacy token (else identity "token", role admin) */
    char *tokens_file; /* tokens_file / --tokens-file: named credentials with roles */
    int auth_reads;    /* reads need a credential too */
    /* rate_limit_viewer / _operator / _admin: "RATE[/BURST]" per identity; 0 unlimited */
    struct api_rate rate[API_ROLE_COUNT];
    struct api_rate auth_failures; /* auth_failures: bad credentials per address */
    size_t body_limit;             /* bytes, default 16 MiB */
    size_t http_body_memory;       /* bodies held at once, bytes; 0: the api's 64 MiB */
    /* field_validation: what POST /api/v1/manifests does with unknown fields when the
     * request has no ?fieldValidation=; default Strict */
    enum model_fields field_validation;
    double cycle_interval;      /* seconds, default 1; 0 disables the timer */
    enum store_sync sync;       /* default full */
    int mark_running;           /* standalone: bound pods become Running */
    int64_t grace_ms;           /* grace_period, default 30 s */
    int default_queueing;       /* queueing_strategy: enum model_queueing of queues without the
                                   annotation (docs/reservations.md) */
    int64_t max_wait_ms;        /* max_wait: the global starvation threshold (docs/reservations.md),
                                   0 none */
    int64_t retention_ms;       /* retention: how long a preempted job's record stays answerable
                                   after its pods are gone; default 7 days */
    double timeseries_interval; /* seconds between time series samples, default 60;
                                   0: no samples */
    int64_t timeseries_retention_ms; /* samples older than this are dropped; default 2 days */
    enum log_level log_level;
    size_t map_size;     /* initial LMDB map size in bytes; 0: the store's default */
    char *ui_dir;        /* NULL: the compiled-in web/static */
    int threads;         /* HTTP worker threads, default 32 (see docs/security.md) */
    int background_nice; /* how much lower the background threads run (thread.h), 0..19 */
    int front_realtime;  /* front_priority: realtime (thread.h thread_interactive) */
    /* cycle_cpus: the CPUs of the cycle's thread; front_cpus: those of the front end's
     * thread and the read cache's remaker (cpus.h); unset: any the process may use */
    struct cpus cycle_cpus, front_cpus;
    /* The front end's limits (docs/api.md "Configuration", docs/security.md "Slow
     * clients"): http_head_timeout, http_body_timeout, http_idle_timeout and
     * http_write_timeout in ms, http_max_connections; 0: the api's defaults. */
    int http_head_ms, http_body_ms, http_idle_ms, http_write_ms;
    int http_max_connections;
    /* allowed_hosts: Host names answered (comma separated or a YAML list; "*": any);
     * NULL: the loopback names and the listen address. cors_origins: origins allowed to
     * call cross-origin; NULL: none. */
    char *allowed_hosts;
    char *cors_origins;
    char *port_file; /* --port-file: the port is written here once listening */
    /* Kubernetes mirror: off unless kubeconfig is set ("in-cluster": the pod's service
     * account). scheduler_name set: bind mode for pods with that spec.schedulerName. */
    char *kubeconfig;
    char *kube_context;
    char *scheduler_name;
    /* bind mode: a pod's write-back failing (transport, 5xx) this long is given up
     * (docs/kubernetes.md "Write-back"); default 5 minutes */
    int64_t writeback_giveup_ms;
    /* Leader election (docs/kubernetes.md "Leader election"): leader_elect / --leader-elect
     * -1 when not given (then on in bind mode, kubeconfig and scheduler_name set, and off
     * otherwise, as kube-scheduler's default: server_config_leader_elect), 1 given true
     * (needs bind mode), 0 given false; the Lease leader_elect_namespace /
     * leader_elect_name (NULL: the connection's namespace or "default" / "muster"), the
     * identity leader_elect_identity (NULL: hostname_pid) and the durations in ms
     * (defaults 15 s, 10 s, 2 s; renew deadline < lease duration, retry < renew). */
    int leader_elect;
    int64_t le_lease_ms, le_renew_ms, le_retry_ms;
    char *le_namespace;
    char *le_name;
    char *le_identity;
    /* HTTPS (docs/security.md "## TLS"): tls_cert and tls_key PEM files, both or neither;
     * tls_client_ca: client certificates must be signed by it (needs tls_cert). */
    char *tls_cert;
    char *tls_key;
    char *tls_client_ca;
    /* The audit log's signed checkpoints (docs/security.md "The audit log"): audit_key is a
     * PEM Ed25519 private key kept outside the data directory (NULL: no checkpoints);
     * audit_witness a file outside it that receives every checkpoint (needs audit_key).
     * A checkpoint is signed every audit_checkpoint_records records and every
     * audit_checkpoint_interval seconds (when there is something new), and at shutdown. */
    char *audit_key;
    /* Key rotation: the earlier keys' files (PEM; the public half is enough), separated by
     * commas, oldest first. They verify the checkpoints they signed before the rotation. */
    char *audit_key_retired;
    char *audit_witness;
    /* mirror mode: the ConfigMap ("NAME" or "NS/NAME") that also witnesses checkpoints;
     * NULL: "muster-audit-witness" when kubeconfig and audit_key are set; "-": none */
    char *audit_witness_configmap;
    uint64_t audit_checkpoint_records; /* default 1000 */
    /* Retention: with audit_keep_records > 0, after a checkpoint the records before the
     * newest checkpoint record at least that many records back are written to
     * audit_archive/audit-FIRST-LAST.ndjson (fsynced; verifiable with muster audit verify
     * --key) and pruned. Needs audit_key and audit_archive. */
    uint64_t audit_keep_records;
    char *audit_archive;
    double audit_checkpoint_interval; /* seconds, default 60 */
    /* accounting: {url, cluster, batch} (docs/accounting.md): ship the audit log and job
     * rows to PostgreSQL; off while url is NULL. cluster names this cluster in every row
     * (required with url); batch: records per transaction, 0: ship/'s default. */
    char *acct_url;
    char *acct_cluster;
    size_t acct_batch;
};

/* The api's external authenticator in mirror mode (kube_auth.c): ctx is the struct kube;
 * TokenReview, then the role from SubjectAccessReviews on muster.scheduling. */
int server__kube_authenticate(void *ctx, const char *token, struct api_identity *out,
                              struct err *err);

/* A retention: seconds ("3600", "0.5") or a number with a unit s, m, h or d ("7d", "36h").
 * Above 0 and at most 3650 days. Returns 0 with *ms, or -1. */
int server_parse_retention(const char *v, int64_t *ms);

/* A duration: "500ms", seconds ("2", "0.3") or a number with a unit s, m, h or d ("15s").
 * Returns 0 with *ms (at least 1), or -1. */
int server_parse_duration(const char *v, int64_t *ms);

/* Fills the defaults. */
void server_config_init(struct server_config *c);
/* Frees the strings. NULL-safe. */
void server_config_release(struct server_config *c);
/* Loads a YAML config file (a mapping of the keys above, plus grace_period in seconds) over
 * c. Returns 0, ERR_IO (cannot read) or ERR_INVALID: "config 'f.yaml' line 3: unknown key
 * 'listn'" and the like. */
int server_config_load(struct server_config *c, const char *path, struct err *err);
/* Whether leader election runs: leader_elect as given, else 1 in bind mode. */
int server_config_leader_elect(const struct server_config *c);
/* Refuses combinations: tls_cert without tls_key (or the reverse), tls_client_ca without
 * them, leader_elect without kubeconfig and scheduler_name or with durations out of order.
 * Returns 0 or ERR_INVALID naming the keys and flags. */
int server_config_check(const struct server_config *c, struct err *err);
/* Parses the command line: --config FILE first, then --data-dir, --listen, --token,
 * --port-file, --log-level, --tls-cert, --tls-key, --tls-client-ca ... override it, then
 * server_config_check runs. --help and --version print to stdout and set
 * *done. Returns 0 or ERR_INVALID / ERR_IO. */
int server_args(int argc, char **argv, struct server_config *c, int *done, struct err *err);
/* Runs musterd until SIGTERM or SIGINT. Returns 0 after a clean shutdown, or ERR_BUSY,
 * ERR_IO, ERR_STORE... when start-up fails. */
int server_run(const struct server_config *c, struct err *err);

#endif
