/* args.c - musterd's command line: --config first, then flags override the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "internal.h"
#include "server.h"

static const char usage[] =
    "usage: musterd [--config FILE] [--data-dir DIR] [--listen ADDR:PORT] [--token T]\n"
    "               [--tokens-file FILE]\n"
    "               [--port-file FILE] [--log-level debug|info|warn|error|off]\n"
    "               [--kubeconfig FILE|in-cluster] [--context NAME] [--scheduler-name NAME]\n"
    "               [--field-validation Strict|Warn|Ignore] [--retention DURATION]\n"
    "               [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]\n"
    "               [--audit-key FILE] [--audit-key-retired FILE,...]\n"
    "               [--audit-witness FILE]\n"
    "               [--http-head-timeout D] [--http-body-timeout D] [--http-idle-timeout D]\n"
    "               [--http-write-timeout D] [--http-max-connections N]\n"
    "               [--leader-elect[=true|false]] [--leader-elect-lease-duration D]\n"
    "               [--leader-elect-renew-deadline D] [--leader-elect-retry-period D]\n"
    "               [--leader-elect-namespace NS] [--leader-elect-name NAME]\n"
    "               [--leader-elect-identity ID] [--help] [--version]\n"
    "\n"
    "muster's scheduler daemon: keeps cluster state in DIR (LMDB), schedules gangs and\n"
    "serves the REST API and web UI on ADDR:PORT (port 0 picks a free port, written to\n"
    "the --port-file). The config file is YAML: listen, data_dir, token, tokens_file,\n"
    "auth_reads, rate_limit_viewer, rate_limit_operator, rate_limit_admin, auth_failures,\n"
    "body_limit, cycle_interval, sync, mark_running, grace_period, max_wait,\n"
    "queueing_strategy, retention, log_level,\n"
    "map_size, ui_dir, threads, background_nice, front_priority, cycle_cpus, front_cpus,\n"
    "http_head_timeout, http_body_timeout, http_idle_timeout, http_write_timeout,\n"
    "http_max_connections, http_body_memory,\n"
    "kubeconfig, kube_context, scheduler_name, field_validation,\n"
    "tls_cert, tls_key, tls_client_ca, audit_key, audit_key_retired, audit_witness,\n"
    "audit_witness_configmap,\n"
    "audit_checkpoint_records, audit_checkpoint_interval, audit_keep_records, audit_archive,\n"
    "allowed_hosts, cors_origins, writeback_giveup, leader_elect,\n"
    "leader_elect_lease_duration, leader_elect_renew_deadline, leader_elect_retry_period,\n"
    "leader_elect_namespace, leader_elect_name, leader_elect_identity.\n"
    "Flags override the file.\n"
    "\n"
    "--tls-cert/--tls-key: serve HTTPS only (TLS 1.2+) with this PEM certificate (chain\n"
    "after the leaf) and unencrypted key; SIGHUP or a change to the files reloads them\n"
    "without closing the port. --tls-client-ca: also require client certificates signed\n"
    "by this CA (mTLS).\n"
    "\n"
    "--http-*: the front end's limits (docs/security.md \"Slow clients\"): a request's head\n"
    "within 10s of its first byte, its whole body within 60s, 5s idle between kept-alive\n"
    "requests, 30s for a client to take its answer, 1000 open connections.\n"
    "\n"
    "--tokens-file: named credentials with a role (viewer, operator, admin), each stored as\n"
    "the SHA-256 of its token; reloaded when the file changes (docs/security.md).\n"
    "\n"
    "--retention: how long a preempted job's record (its job, why and preemptors) stays\n"
    "answerable after its pods are gone: seconds or a number with s, m, h or d (default 7d).\n"
    "\n"
    "--field-validation: what an apply does with fields outside the Kubernetes schema when\n"
    "the request does not say (?fieldValidation=): Strict refuses them (the default), Warn\n"
    "drops them with a warning, Ignore drops them.\n"
    "\n"
    "--audit-key: an Ed25519 private key (PEM) outside the data directory; musterd signs\n"
    "checkpoints of the audit chain with it. --audit-witness: a file outside the data\n"
    "directory that receives every checkpoint. On start the chain since the last checkpoint\n"
    "is verified; a broken chain makes musterd read-only (docs/security.md).\n"
    "--audit-key-retired: the earlier keys after a rotation (PEM files, oldest first); they\n"
    "verify the checkpoints signed before it, and musterd signs again with the new key.\n"
    "\n"
    "With --kubeconfig, musterd mirrors a Kubernetes cluster (Nodes, Pods, PodGroups,\n"
    "ClusterNetworkTopology); with --scheduler-name it also binds the pods that name it.\n"
    "\n"
    "--leader-elect: several replicas in bind mode elect one leader through a\n"
    "coordination.k8s.io/v1 Lease (default name 'muster'); on by default in bind mode, as\n"
    "kube-scheduler's, off with --leader-elect=false; only the leader runs cycles and\n"
    "writes, followers mirror and serve reads. Durations: seconds, \"15s\" or \"500ms\"\n"
    "(defaults 15s, 10s, 2s). The identity defaults to hostname_pid.\n";

static const char *const value_flags[] = {"--config",
                                          "--data-dir",
                                          "--listen",
                                          "--token",
                                          "--port-file",
                                          "--log-level",
                                          "--kubeconfig",
                                          "--context",
                                          "--scheduler-name",
                                          "--field-validation",
                                          "--retention",
                                          "--tokens-file",
                                          "--tls-cert",
                                          "--tls-key",
                                          "--tls-client-ca",
                                          "--audit-key",
                                          "--audit-key-retired",
                                          "--audit-witness",
                                          "--leader-elect-lease-duration",
                                          "--leader-elect-renew-deadline",
                                          "--leader-elect-retry-period",
                                          "--leader-elect-namespace",
                                          "--leader-elect-name",
                                          "--leader-elect-identity",
                                          "--http-head-timeout",
                                          "--http-body-timeout",
                                          "--http-idle-timeout",
                                          "--http-write-timeout",
                                          "--http-max-connections"};

/* Splits argv[*i] into a known flag and its value ("--x=v" or "--x v"). */
static int flag_value(int argc, char **argv, int *i, const char **flag, const char **value,
                      struct err *err)
{
    const char *arg = argv[*i];
    size_t n = strcspn(arg, "=");

    for (size_t k = 0; k < sizeof(value_flags) / sizeof(value_flags[0]); k++) {
        if (strlen(value_flags[k]) != n || strncmp(arg, value_flags[k], n))
            continue;
        *flag = value_flags[k];
        if (arg[n] == '=') {
            *value = arg + n + 1;
        } else if (*i + 1 < argc) {
            *value = argv[++*i];
        } else {
            return err_set(err, ERR_INVALID, "flag '%s' needs a value", value_flags[k]);
        }
        return 0;
    }
    return err_set(err, ERR_INVALID, "unknown argument '%s' (see --help)", arg);
}

static void replace(char **slot, const char *value)
{
    free(*slot);
    *slot = *value ? xstrdup(value) : NULL;
}

/* --leader-elect-X and --http-X VALUE are the config keys leader_elect_X and http_X. */
static int key_flag(struct server_config *c, const char *flag, const char *value, struct err *err)
{
    char key[64];
    snprintf(key, sizeof(key), "%s", flag + 2);
    for (char *p = key; *p; p++)
        if (*p == '-')
            *p = '_';
    if (server__config_set(c, key, value, err) < 0)
        return err_prefix(err, "flag '%s'", flag);
    return 0;
}

static int apply_flag(struct server_config *c, const char *flag, const char *value, struct err *err)
{
    if (!strncmp(flag, "--leader-elect-", 15) || !strncmp(flag, "--http-", 7))
        return key_flag(c, flag, value, err);
    if (!strcmp(flag, "--data-dir"))
        replace(&c->data_dir, value);
    else if (!strcmp(flag, "--listen"))
        replace(&c->listen, value);
    else if (!strcmp(flag, "--token"))
        replace(&c->token, value);
    else if (!strcmp(flag, "--tokens-file"))
        replace(&c->tokens_file, value);
    else if (!strcmp(flag, "--port-file"))
        replace(&c->port_file, value);
    else if (!strcmp(flag, "--kubeconfig"))
        replace(&c->kubeconfig, value);
    else if (!strcmp(flag, "--audit-key"))
        replace(&c->audit_key, value);
    else if (!strcmp(flag, "--audit-key-retired"))
        replace(&c->audit_key_retired, value);
    else if (!strcmp(flag, "--audit-witness"))
        replace(&c->audit_witness, value);
    else if (!strcmp(flag, "--context"))
        replace(&c->kube_context, value);
    else if (!strcmp(flag, "--scheduler-name"))
        replace(&c->scheduler_name, value);
    else if (!strcmp(flag, "--tls-cert"))
        replace(&c->tls_cert, value);
    else if (!strcmp(flag, "--tls-key"))
        replace(&c->tls_key, value);
    else if (!strcmp(flag, "--tls-client-ca"))
        replace(&c->tls_client_ca, value);
    else if (!strcmp(flag, "--field-validation") &&
             model_fields_parse(value, &c->field_validation, NULL) < 0)
        return err_set(err, ERR_INVALID,
                       "flag '--field-validation' must be Strict, Warn or Ignore, not '%s'", value);
    else if (!strcmp(flag, "--retention") && server_parse_retention(value, &c->retention_ms) < 0)
        return err_set(err, ERR_INVALID,
                       "flag '--retention' must be a duration above 0 (\"7d\", \"36h\", \"90m\" "
                       "or seconds), not '%s'",
                       value);
    else if (!strcmp(flag, "--log-level") && log_parse_level(value, &c->log_level) < 0)
        return err_set(err, ERR_INVALID,
                       "flag '--log-level' must be debug, info, warn, error or off, not '%s'",
                       value);
    if ((!strcmp(flag, "--data-dir") || !strcmp(flag, "--listen")) && !*value)
        return err_set(err, ERR_INVALID, "flag '%s' must not be empty", flag);
    return 0;
}

/* "--leader-elect" (true) or "--leader-elect=BOOL", as kube-scheduler takes it: 1 when arg
 * is one (c, when not NULL, set), 0 when not, ERR_INVALID for a bad value. */
static int leader_elect_arg(const char *arg, struct server_config *c, struct err *err)
{
    if (strncmp(arg, "--leader-elect", 14) || (arg[14] && arg[14] != '='))
        return 0;
    if (!c)
        return 1;
    if (server__config_set(c, "leader_elect", arg[14] ? arg + 15 : "true", err) < 0)
        return err_prefix(err, "flag '--leader-elect'");
    return 1;
}

int server_args(int argc, char **argv, struct server_config *c, int *done, struct err *err)
{
    const char *flag = NULL, *value = NULL;
    int rc;

    *done = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            *done = 1;
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("musterd %s\n", MUSTER_VERSION);
            *done = 1;
            return 0;
        }
    }
    /* the file first, wherever --config appears, so that flags always win */
    for (int i = 1; i < argc; i++) {
        if (leader_elect_arg(argv[i], NULL, err) == 1)
            continue;
        if ((rc = flag_value(argc, argv, &i, &flag, &value, err)) < 0)
            return rc;
        if (!strcmp(flag, "--config") && (rc = server_config_load(c, value, err)) < 0)
            return rc;
    }
    for (int i = 1; i < argc; i++) {
        if ((rc = leader_elect_arg(argv[i], c, err)) < 0)
            return rc;
        if (rc == 1)
            continue;
        if ((rc = flag_value(argc, argv, &i, &flag, &value, err)) < 0)
            return rc;
        if ((rc = apply_flag(c, flag, value, err)) < 0)
            return rc;
    }
    return server_config_check(c, err);
}
