/* config.c - musterd's YAML configuration file (libyaml). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "alloc.h"
#include "err.h"
#include "model.h"
#include "thread.h"
#include "scheduler.h"
#include "internal.h"
#include "server.h"
#include "ship.h"

void server_config_init(struct server_config *c)
{
    memset(c, 0, sizeof(*c));
    c->listen = xstrdup("127.0.0.1:8080");
    c->data_dir = xstrdup("var/muster");
    c->body_limit = (size_t)16 << 20;
    c->cycle_interval = 1.0;
    c->sync = STORE_SYNC_FULL;
    c->grace_ms = 30000;
    c->retention_ms = SCHED_RETENTION_DEFAULT_MS;
    c->timeseries_interval = 60.0;
    c->timeseries_retention_ms = 2LL * 24 * 3600 * 1000;
    c->writeback_giveup_ms = 300000;
    c->log_level = LOG_INFO;
    c->threads = 32;
    c->background_nice = THREAD_BACKGROUND_NICE;
    c->audit_checkpoint_records = 1000;
    c->audit_checkpoint_interval = 60.0;
    c->auth_failures = API_AUTH_FAILURES_DEFAULT;
    c->leader_elect = -1; /* kube-scheduler's default: on in bind mode */
    c->le_lease_ms = 15000;
    c->le_renew_ms = 10000;
    c->le_retry_ms = 2000;
}

void server_config_release(struct server_config *c)
{
    if (!c)
        return;
    free(c->listen);
    free(c->data_dir);
    free(c->token);
    free(c->tokens_file);
    free(c->ui_dir);
    free(c->allowed_hosts);
    free(c->cors_origins);
    free(c->port_file);
    free(c->kubeconfig);
    free(c->kube_context);
    free(c->scheduler_name);
    free(c->tls_cert);
    free(c->tls_key);
    free(c->tls_client_ca);
    free(c->audit_key);
    free(c->audit_key_retired);
    free(c->audit_witness);
    free(c->audit_witness_configmap);
    free(c->audit_archive);
    free(c->le_namespace);
    free(c->le_name);
    free(c->le_identity);
    free(c->acct_url);
    free(c->acct_cluster);
    memset(c, 0, sizeof(*c));
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "True", "TRUE", "Yes", "On"};
    static const char *const no[] = {"false", "no", "off", "False", "FALSE", "No", "Off"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!strcmp(v, yes[i]))
            return *out = 1, 0;
        if (!strcmp(v, no[i]))
            return *out = 0, 0;
    }
    return -1;
}

static int parse_seconds(const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(d) || d < 0 || d > 86400.0 * 365)
        return -1;
    *out = d;
    return 0;
}

int server_parse_retention(const char *v, int64_t *ms)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end), unit = 1.0;
    if (!*v || errno || !isfinite(d) || end == v)
        return -1;
    if (*end && end[1] == 0) {
        const char *units = "smhd";
        const double mult[] = {1.0, 60.0, 3600.0, 86400.0};
        const char *u = strchr(units, *end);
        if (!u)
            return -1;
        unit = mult[u - units];
    } else if (*end) {
        return -1;
    }
    d *= unit;
    if (!(d > 0) || d > 86400.0 * 3650)
        return -1;
    *ms = (int64_t)(d * 1000.0);
    return *ms > 0 ? 0 : -1;
}

/* The config's string settings by key; NULL for the others. */
static char **string_slot(struct server_config *c, const char *key)
{
    static const struct {
        const char *key;
        size_t off;
    } slots[] = {
        {"listen", offsetof(struct server_config, listen)},
        {"data_dir", offsetof(struct server_config, data_dir)},
        {"token", offsetof(struct server_config, token)},
        {"tokens_file", offsetof(struct server_config, tokens_file)},
        {"ui_dir", offsetof(struct server_config, ui_dir)},
        {"allowed_hosts", offsetof(struct server_config, allowed_hosts)},
        {"cors_origins", offsetof(struct server_config, cors_origins)},
        {"kubeconfig", offsetof(struct server_config, kubeconfig)},
        {"kube_context", offsetof(struct server_config, kube_context)},
        {"scheduler_name", offsetof(struct server_config, scheduler_name)},
        {"tls_cert", offsetof(struct server_config, tls_cert)},
        {"tls_key", offsetof(struct server_config, tls_key)},
        {"tls_client_ca", offsetof(struct server_config, tls_client_ca)},
        {"audit_key", offsetof(struct server_config, audit_key)},
        {"audit_key_retired", offsetof(struct server_config, audit_key_retired)},
        {"audit_witness", offsetof(struct server_config, audit_witness)},
        {"audit_witness_configmap", offsetof(struct server_config, audit_witness_configmap)},
        {"audit_archive", offsetof(struct server_config, audit_archive)},
        {"leader_elect_namespace", offsetof(struct server_config, le_namespace)},
        {"leader_elect_name", offsetof(struct server_config, le_name)},
        {"leader_elect_identity", offsetof(struct server_config, le_identity)},
    };
    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
        if (!strcmp(key, slots[i].key))
            return (char **)((char *)c + slots[i].off);
    return NULL;
}

/* cors_origins: each entry "http://host[:port]" or "https://host[:port]", as a browser
 * sends Origin (no path, no "*": an origin is trusted by name). */
static int origins_check(const char *v, struct err *err)
{
    for (const char *p = v; *p;) {
        p += strspn(p, ", \t");
        size_t n = strcspn(p, ", \t");
        if (!n)
            break;
        const char *host = !strncmp(p, "http://", 7)    ? p + 7
                           : !strncmp(p, "https://", 8) ? p + 8
                                                        : NULL;
        size_t hn = host ? n - (size_t)(host - p) : 0;
        if (!host || !hn || memchr(host, '/', hn) || memchr(host, '*', hn))
            return err_set(err, ERR_INVALID,
                           "'cors_origins' entry '%.*s' is not an origin such as "
                           "'https://ui.example' or 'http://127.0.0.1:3000'",
                           (int)n, p);
        p += n;
    }
    return 0;
}

int server_parse_duration(const char *v, int64_t *ms)
{
    size_t n = strlen(v);
    if (n > 2 && !strcmp(v + n - 2, "ms")) {
        char *end = NULL;
        errno = 0;
        double d = strtod(v, &end);
        if (end != v + n - 2 || errno || !isfinite(d) || !(d >= 1) || d > 86400e3)
            return -1;
        *ms = (int64_t)d;
        return 0;
    }
    return server_parse_retention(v, ms);
}

/* The leader election duration a key names, or NULL. */
static int64_t *le_duration_slot(struct server_config *c, const char *key)
{
    if (!strcmp(key, "leader_elect_lease_duration"))
        return &c->le_lease_ms;
    if (!strcmp(key, "leader_elect_renew_deadline"))
        return &c->le_renew_ms;
    if (!strcmp(key, "leader_elect_retry_period"))
        return &c->le_retry_ms;
    return NULL;
}

/* The front end's duration a key names, or NULL. */
static int *http_duration_slot(struct server_config *c, const char *key)
{
    if (!strcmp(key, "http_head_timeout"))
        return &c->http_head_ms;
    if (!strcmp(key, "http_body_timeout"))
        return &c->http_body_ms;
    if (!strcmp(key, "http_idle_timeout"))
        return &c->http_idle_ms;
    if (!strcmp(key, "http_write_timeout"))
        return &c->http_write_ms;
    return NULL;
}

/* What a set_* group below returns for a key that is not one of its own. */
#define NOT_MINE 1

/* Strings and flags: 0, ERR_INVALID, or NOT_MINE. */
static int set_text(struct server_config *c, const char *key, const char *v, struct err *err)
{
    char **slot = string_slot(c, key);
    int b = 0;

    if (slot) {
        if (!*v && (!strcmp(key, "listen") || !strcmp(key, "data_dir")))
            return err_set(err, ERR_INVALID, "'%s' must not be empty", key);
        if (!strcmp(key, "cors_origins") && origins_check(v, err) < 0)
            return ERR_INVALID;
        free(*slot);
        *slot = *v ? xstrdup(v) : NULL;
    } else if (!strcmp(key, "auth_reads") || !strcmp(key, "mark_running") ||
               !strcmp(key, "leader_elect")) {
        if (parse_bool(v, &b) < 0)
            return err_set(err, ERR_INVALID, "'%s' must be true or false, not '%s'", key, v);
        *(!strcmp(key, "auth_reads")     ? &c->auth_reads
          : !strcmp(key, "mark_running") ? &c->mark_running
                                         : &c->leader_elect) = b;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* Durations and seconds: 0, ERR_INVALID, or NOT_MINE. */
static int set_time(struct server_config *c, const char *key, const char *v, struct err *err)
{
    double d = 0;

    if (le_duration_slot(c, key)) {
        if (server_parse_duration(v, le_duration_slot(c, key)) < 0)
            return err_set(err, ERR_INVALID,
                           "'%s' must be a duration above 0 (\"15s\", \"500ms\" or seconds), not "
                           "'%s'",
                           key, v);
    } else if (!strcmp(key, "audit_checkpoint_interval")) {
        if (parse_seconds(v, &d) < 0 || d < 0.01)
            return err_set(err, ERR_INVALID,
                           "'audit_checkpoint_interval' must be a number of seconds of at least "
                           "0.01, not '%s'",
                           v);
        c->audit_checkpoint_interval = d;
    } else if (!strcmp(key, "cycle_interval") || !strcmp(key, "grace_period")) {
        if (parse_seconds(v, &d) < 0)
            return err_set(err, ERR_INVALID, "'%s' must be a number of seconds, not '%s'", key, v);
        if (!strcmp(key, "cycle_interval"))
            c->cycle_interval = d;
        else
            c->grace_ms = (int64_t)(d * 1000.0);
    } else if (!strcmp(key, "writeback_giveup")) {
        if (server_parse_retention(v, &c->writeback_giveup_ms) < 0)
            return err_set(err, ERR_INVALID,
                           "'writeback_giveup' must be a duration above 0 (\"5m\", \"1h\" or "
                           "seconds), not '%s'",
                           v);
    } else if (!strcmp(key, "timeseries_interval")) {
        if (parse_seconds(v, &d) < 0 || (d != 0 && d < 0.1))
            return err_set(err, ERR_INVALID,
                           "'timeseries_interval' must be 0 (no samples) or a number of seconds "
                           "of at least 0.1, not '%s'",
                           v);
        c->timeseries_interval = d;
    } else if (!strcmp(key, "timeseries_retention")) {
        if (server_parse_retention(v, &c->timeseries_retention_ms) < 0)
            return err_set(err, ERR_INVALID,
                           "'timeseries_retention' must be a duration above 0 (\"2d\", \"12h\" or "
                           "seconds), not '%s'",
                           v);
    } else if (!strcmp(key, "queueing_strategy")) {
        int q = model_queueing_parse(v);
        if (q < 0)
            return err_set(err, ERR_INVALID,
                           "'queueing_strategy' must be BestEffortFIFO or StrictFIFO, not '%s'", v);
        c->default_queueing = q;
    } else if (!strcmp(key, "max_wait")) {
        if (server_parse_retention(v, &c->max_wait_ms) < 0)
            return err_set(err, ERR_INVALID,
                           "'max_wait' must be a duration above 0 (\"30m\", \"2h\" or seconds), "
                           "not '%s'",
                           v);
    } else if (!strcmp(key, "retention")) {
        if (server_parse_retention(v, &c->retention_ms) < 0)
            return err_set(err, ERR_INVALID,
                           "'retention' must be a duration above 0 (\"7d\", \"36h\", \"90m\" or "
                           "seconds), not '%s'",
                           v);
    } else if (http_duration_slot(c, key)) {
        int64_t ms = 0;
        if (server_parse_duration(v, &ms) < 0 || ms < 10 || ms > 3600 * 1000)
            return err_set(err, ERR_INVALID,
                           "'%s' must be a duration from 10ms to 1h (\"10s\", \"500ms\" or "
                           "seconds), not '%s'",
                           key, v);
        *http_duration_slot(c, key) = (int)ms;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* Sizes and counts: 0, ERR_INVALID, or NOT_MINE. */
static int set_count(struct server_config *c, const char *key, const char *v, struct err *err)
{
    int64_t n = 0;

    if (!strcmp(key, "body_limit") || !strcmp(key, "map_size") ||
        !strcmp(key, "http_body_memory")) {
        if (model_quantity_parse(v, 0, &n, NULL) < 0 || n <= 0)
            return err_set(err, ERR_INVALID, "'%s' must be a positive size (\"16Mi\"), not '%s'",
                           key, v);
        *(!strcmp(key, "body_limit")         ? &c->body_limit
          : !strcmp(key, "http_body_memory") ? &c->http_body_memory
                                             : &c->map_size) = (size_t)n;
    } else if (!strcmp(key, "audit_checkpoint_records") || !strcmp(key, "audit_keep_records")) {
        if (model_quantity_parse(v, 0, &n, NULL) < 0 || n < 1 || strchr(v, '.'))
            return err_set(err, ERR_INVALID, "'%s' must be a positive integer, not '%s'", key, v);
        *(!strcmp(key, "audit_keep_records") ? &c->audit_keep_records
                                             : &c->audit_checkpoint_records) = (uint64_t)n;
    } else if (!strcmp(key, "http_max_connections")) {
        if (model_quantity_parse(v, 0, &n, NULL) < 0 || n < 1 || n > 1000000 || strchr(v, '.'))
            return err_set(err, ERR_INVALID,
                           "'http_max_connections' must be an integer from 1 to 1000000, not "
                           "'%s'",
                           v);
        c->http_max_connections = (int)n;
    } else if (!strcmp(key, "background_nice")) {
        if (model_quantity_parse(v, 0, &n, NULL) < 0 || n < 0 || n > 19 || strchr(v, '.'))
            return err_set(err, ERR_INVALID,
                           "'background_nice' must be an integer from 0 to 19, not '%s'", v);
        c->background_nice = (int)n;
    } else if (!strcmp(key, "threads")) {
        if (model_quantity_parse(v, 0, &n, NULL) < 0 || n < 1 || n > 256 || strchr(v, '.'))
            return err_set(err, ERR_INVALID, "'threads' must be an integer from 1 to 256, not '%s'",
                           v);
        c->threads = (int)n;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* Rate limits and the named choices (sync, field_validation, log_level): 0, ERR_INVALID, or
 * NOT_MINE. */
static int set_choice(struct server_config *c, const char *key, const char *v, struct err *err)
{
    if (!strncmp(key, "rate_limit_", 11) || !strcmp(key, "auth_failures")) {
        enum api_role role = API_ROLE_NONE;
        if (strcmp(key, "auth_failures") && api_role_parse(key + 11, &role, NULL) < 0)
            return err_set(err, ERR_INVALID,
                           "unknown key '%s' (rate limits are rate_limit_viewer, "
                           "rate_limit_operator and rate_limit_admin)",
                           key);
        struct api_rate *rs = role == API_ROLE_NONE ? &c->auth_failures : &c->rate[role];
        if (api_rate_parse(v, rs, err) < 0)
            return err_prefix(err, "'%s'", key);
        if (role == API_ROLE_NONE && !(rs->per_second > 0))
            return err_set(err, ERR_INVALID, "'auth_failures' must be above 0, not '%s'", v);
    } else if (!strcmp(key, "sync")) {
        if (store_sync_parse(v, &c->sync, NULL) < 0)
            return err_set(err, ERR_INVALID, "'sync' must be full, meta or none, not '%s'", v);
    } else if (!strcmp(key, "field_validation")) {
        if (model_fields_parse(v, &c->field_validation, NULL) < 0)
            return err_set(err, ERR_INVALID,
                           "'field_validation' must be Strict, Warn or Ignore, not '%s'", v);
    } else if (!strcmp(key, "front_priority")) {
        if (strcmp(v, "normal") != 0 && strcmp(v, "realtime") != 0)
            return err_set(err, ERR_INVALID,
                           "'front_priority' must be normal or realtime, not '%s'", v);
        c->front_realtime = !strcmp(v, "realtime");
    } else if (!strcmp(key, "cycle_cpus") || !strcmp(key, "front_cpus")) {
        if (cpus_parse(v, key[0] == 'c' ? &c->cycle_cpus : &c->front_cpus, err) < 0)
            return err_prefix(err, "'%s'", key);
    } else if (!strcmp(key, "log_level")) {
        if (log_parse_level(v, &c->log_level) < 0)
            return err_set(err, ERR_INVALID,
                           "'log_level' must be debug, info, warn, error or off, not '%s'", v);
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* Sets one key; 0 or ERR_INVALID with the problem (without the line) in err. */
static int set_key(struct server_config *c, const char *key, const char *v, struct err *err)
{
    int rc = set_text(c, key, v, err);

    if (rc == NOT_MINE)
        rc = set_time(c, key, v, err);
    if (rc == NOT_MINE)
        rc = set_count(c, key, v, err);
    if (rc == NOT_MINE)
        rc = set_choice(c, key, v, err);
    if (rc != NOT_MINE)
        return rc;
    return err_set(err, ERR_INVALID,
                   "unknown key '%s' (known: listen, data_dir, token, tokens_file, auth_reads, "
                   "rate_limit_viewer, rate_limit_operator, rate_limit_admin, auth_failures, "
                   "body_limit, cycle_interval, sync, mark_running, grace_period, max_wait, "
                   "queueing_strategy, retention, timeseries_interval, timeseries_retention, "
                   "log_level, map_size, ui_dir, threads, background_nice, front_priority, "
                   "cycle_cpus, front_cpus, http_head_timeout, http_body_timeout, "
                   "http_idle_timeout, http_write_timeout, "
                   "http_max_connections, http_body_memory, kubeconfig, kube_context, "
                   "scheduler_name, field_validation, tls_cert, tls_key, tls_client_ca, "
                   "audit_key, audit_key_retired, audit_witness, audit_witness_configmap, "
                   "audit_checkpoint_records, audit_checkpoint_interval, audit_keep_records, "
                   "audit_archive, allowed_hosts, cors_origins, writeback_giveup, "
                   "leader_elect, leader_elect_lease_duration, leader_elect_renew_deadline, "
                   "leader_elect_retry_period, leader_elect_namespace, leader_elect_name, "
                   "leader_elect_identity, accounting)",
                   key);
}

/* A YAML list of names for a comma-separated setting ("allowed_hosts: [a, b]"). */
static int set_list(struct server_config *c, yaml_document_t *doc, const char *key,
                    yaml_node_t *seq, struct err *err)
{
    char *joined = xstrdup("");

    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *item = yaml_document_get_node(doc, *it);
        const char *v =
            item && item->type == YAML_SCALAR_NODE ? (const char *)item->data.scalar.value : NULL;
        if (!v || !*v || strpbrk(v, ", \t")) {
            free(joined);
            return err_set(err, ERR_INVALID,
                           "'%s' must be a list of names without commas or "
                           "spaces",
                           key);
        }
        char *next = xasprintf("%s%s%s", joined, *joined ? "," : "", v);
        free(joined);
        joined = next;
    }
    int rc = set_key(c, key, joined, err);
    free(joined);
    return rc;
}

/* accounting: a mapping of url, cluster and batch. */
static int set_accounting(struct server_config *c, yaml_document_t *doc, yaml_node_t *map,
                          const char *path, struct err *err)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        size_t line = k->start_mark.line + 1;
        const char *key = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
        const char *val = v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
        char *end = NULL;
        if (!val)
            return err_set(err, ERR_INVALID,
                           "config '%s' line %zu: 'accounting.%s' must be a single value", path,
                           line, key);
        if (!strcmp(key, "url") || !strcmp(key, "cluster")) {
            char **slot = key[0] == 'u' ? &c->acct_url : &c->acct_cluster;
            free(*slot);
            *slot = xstrdup(val);
        } else if (!strcmp(key, "batch")) {
            unsigned long long n = strtoull(val, &end, 10);
            if (!*val || *end || n < 1 || n > 100000)
                return err_set(err, ERR_INVALID,
                               "config '%s' line %zu: 'accounting.batch' must be a number of "
                               "records from 1 to 100000, not '%s'",
                               path, line, val);
            c->acct_batch = (size_t)n;
        } else {
            return err_set(err, ERR_INVALID,
                           "config '%s' line %zu: unknown key 'accounting.%s' (known: url, "
                           "cluster, batch)",
                           path, line, key);
        }
    }
    if (!c->acct_url || !c->acct_url[0] || !c->acct_cluster || !c->acct_cluster[0])
        return err_set(err, ERR_INVALID,
                       "config '%s' line %zu: 'accounting' needs both 'url' "
                       "(postgresql://...) and 'cluster' (this cluster's name)",
                       path, map->start_mark.line + 1);
    return 0;
}

static int load_doc(struct server_config *c, const char *path, yaml_document_t *doc,
                    struct err *err)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    yaml_node_pair_t *pair;

    if (!root)
        return 0; /* an empty file keeps the defaults */
    if (root->type != YAML_MAPPING_NODE)
        return err_set(err, ERR_INVALID, "config '%s' line %zu: expected a mapping of keys", path,
                       root->start_mark.line + 1);
    for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(doc, pair->value);
        size_t line = k->start_mark.line + 1;
        if (k->type != YAML_SCALAR_NODE)
            return err_set(err, ERR_INVALID, "config '%s' line %zu: keys must be plain names", path,
                           line);
        const char *key = (const char *)k->data.scalar.value;
        if (v->type == YAML_SEQUENCE_NODE &&
            (!strcmp(key, "allowed_hosts") || !strcmp(key, "cors_origins"))) {
            if (set_list(c, doc, key, v, err) < 0)
                return err_prefix(err, "config '%s' line %zu", path, line);
            continue;
        }
        if (!strcmp(key, "accounting")) {
            if (v->type != YAML_MAPPING_NODE)
                return err_set(err, ERR_INVALID,
                               "config '%s' line %zu: 'accounting' must be a mapping {url, "
                               "cluster, batch}",
                               path, line);
            if (set_accounting(c, doc, v, path, err) < 0)
                return err->code;
            continue;
        }
        if (v->type != YAML_SCALAR_NODE)
            return err_set(err, ERR_INVALID, "config '%s' line %zu: '%s' must be a single value",
                           path, v->start_mark.line + 1, key);
        if (set_key(c, key, (const char *)v->data.scalar.value, err) < 0)
            return err_prefix(err, "config '%s' line %zu", path, line);
    }
    return 0;
}

int server_config_leader_elect(const struct server_config *c)
{
    return c->leader_elect >= 0 ? c->leader_elect : c->kubeconfig && c->scheduler_name;
}

/* Leader election's settings, as client-go's leaderelection.NewLeaderElector checks them. */
static int leader_elect_check(const struct server_config *c, struct err *err)
{
    if (!server_config_leader_elect(c))
        return 0;
    if (!c->kubeconfig || !c->scheduler_name)
        return err_set(err, ERR_INVALID,
                       "'leader_elect' needs bind mode: set kubeconfig and scheduler_name "
                       "(--kubeconfig, --scheduler-name); a mirror-only musterd writes nothing "
                       "to the API server, so every replica may run");
    if (c->le_renew_ms >= c->le_lease_ms)
        return err_set(err, ERR_INVALID,
                       "'leader_elect_renew_deadline' (%lld ms) must be shorter than "
                       "'leader_elect_lease_duration' (%lld ms)",
                       (long long)c->le_renew_ms, (long long)c->le_lease_ms);
    if (c->le_retry_ms >= c->le_renew_ms)
        return err_set(err, ERR_INVALID,
                       "'leader_elect_retry_period' (%lld ms) must be shorter than "
                       "'leader_elect_renew_deadline' (%lld ms)",
                       (long long)c->le_retry_ms, (long long)c->le_renew_ms);
    if (c->le_name && strpbrk(c->le_name, "/ "))
        return err_set(err, ERR_INVALID, "'leader_elect_name' '%s' is not a Lease name",
                       c->le_name);
    if (c->le_namespace && strpbrk(c->le_namespace, "/ "))
        return err_set(err, ERR_INVALID, "'leader_elect_namespace' '%s' is not a namespace",
                       c->le_namespace);
    return 0;
}

int server_config_check(const struct server_config *c, struct err *err)
{
    if (leader_elect_check(c, err) < 0)
        return err->code;
    if (c->acct_url && ship_cluster_check(c->acct_cluster, err) < 0)
        return err->code;
    if (!c->tls_cert != !c->tls_key)
        return err_set(err, ERR_INVALID,
                       "'%s' is set but '%s' is not: HTTPS needs both (tls_cert and tls_key in "
                       "the config, --tls-cert and --tls-key on the command line)",
                       c->tls_cert ? "tls_cert" : "tls_key", c->tls_cert ? "tls_key" : "tls_cert");
    if (c->tls_client_ca && !c->tls_cert)
        return err_set(err, ERR_INVALID,
                       "'tls_client_ca' needs HTTPS: set tls_cert and tls_key too (--tls-cert, "
                       "--tls-key)");
    return 0;
}

int server__config_set(struct server_config *c, const char *key, const char *v, struct err *err)
{
    return set_key(c, key, v, err);
}

int server_config_load(struct server_config *c, const char *path, struct err *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    FILE *f = fopen(path, "rb");
    int rc = 0;

    if (!f)
        return err_set(err, ERR_IO, "cannot open config '%s': %s", path, strerror(errno));
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = err_set(err, ERR_INVALID, "config '%s' line %zu: %s", path,
                     parser.problem_mark.line + 1, parser.problem ? parser.problem : "bad YAML");
        goto out;
    }
    rc = load_doc(c, path, &doc, err);
    yaml_document_delete(&doc);
out:
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}
