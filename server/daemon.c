/* daemon.c - musterd's life: open, serve, run cycles, stop cleanly on SIGTERM / SIGINT. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include "api.h"
#include "clock.h"
#include "err.h"
#include "internal.h"
#include "kube.h"
#include "log.h"
#include "scheduler.h"
#include "server.h"
#include "ship.h"
#include "store.h"
#include "thread.h"

struct cycler {
    struct sched *sched;
    struct kube *kube;           /* NULL: no mirror; with leader election, cycles only as leader */
    struct server__audit *guard; /* read-only: no cycles; kicked after each cycle */
    double interval;             /* seconds; 0: only when kicked */
    struct cpus cycle_cpus;      /* the thread's CPUs (cycle_cpus), unset: any */
    mtx_t mu;
    cnd_t cv;
    int kicked;
    int stop;
};

static void kick(void *ctx)
{
    struct cycler *cy = ctx;

    mtx_lock(&cy->mu);
    cy->kicked = 1;
    cnd_signal(&cy->cv);
    mtx_unlock(&cy->mu);
    server__audit_kick(cy->guard);
}

static void run_cycle(struct cycler *cy)
{
    struct err err = ERR_INIT;
    json_t *summary = NULL;

    if (server__audit_read_only(cy->guard))
        return; /* a chain broken at run time: the checkpoint thread said so in the log */
    if (cy->kube && !kube_cycle_begin(cy->kube))
        return; /* a follower decides nothing (housekeeping included) */
    int rc = sched_cycle(cy->sched, clock_now_ms(), &summary, &err);
    if (cy->kube)
        kube_cycle_end(cy->kube);
    if (rc < 0) {
        log_warn("cycle failed: %s", err.msg);
        return;
    }
    json_int_t placed = json_integer_value(json_object_get(summary, "placed"));
    json_int_t cycle = json_integer_value(json_object_get(summary, "cycle"));
    if (placed)
        log_info("cycle %lld placed %lld pods", (long long)cycle, (long long)placed);
    else
        log_debug("cycle %lld placed nothing", (long long)cycle);
    json_decref(summary);
    server__audit_kick(cy->guard);
}

static int cycle_main(void *arg)
{
    struct cycler *cy = arg;
    struct timespec deadline;

    /* the long slice: requests that wake the front end run ahead of it (thread.h) */
    thread_long_slice("musterd-cycle");
    thread_pin("cycle", "cycle_cpus", &cy->cycle_cpus);

    mtx_lock(&cy->mu);
    while (!cy->stop) {
        if (!cy->kicked && cy->interval > 0) {
            timespec_get(&deadline, TIME_UTC);
            double s = (double)deadline.tv_nsec / 1e9 + cy->interval;
            deadline.tv_sec += (time_t)s;
            deadline.tv_nsec = (long)((s - (double)(time_t)s) * 1e9);
            while (!cy->kicked && !cy->stop &&
                   cnd_timedwait(&cy->cv, &cy->mu, &deadline) == thrd_success)
                ;
        } else {
            while (!cy->kicked && !cy->stop)
                cnd_wait(&cy->cv, &cy->mu);
        }
        if (cy->stop)
            break;
        cy->kicked = 0;
        mtx_unlock(&cy->mu);
        run_cycle(cy); /* outside the lock: on_change must never wait for a cycle */
        mtx_lock(&cy->mu);
    }
    mtx_unlock(&cy->mu);
    return 0;
}

/* Written to a temporary name and renamed, so a reader never sees a partial file. */
static int write_port_file(const char *path, int port, struct err *err)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        return err_set(err, ERR_IO, "cannot write port file '%s': %s", path, strerror(errno));
    fprintf(f, "%d\n", port);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return err_set(err, ERR_IO, "cannot write port file '%s': %s", path, strerror(errno));
    return 0;
}

static void listen_host(const char *listen, char *buf, size_t n)
{
    const char *colon = strrchr(listen, ':');

    if (!colon || colon == listen)
        snprintf(buf, n, "0.0.0.0");
    else
        snprintf(buf, n, "%.*s", (int)(colon - listen), listen);
}

static json_t *sources_json(void *ctx)
{
    return kube_sources_json(ctx);
}

static json_t *leader_json(void *ctx)
{
    return kube_leader_json(ctx);
}

/* Only the leader ships (docs/accounting.md); without election every musterd leads. */
static int ship_leading(void *ctx)
{
    json_t *st = kube_leader_json(ctx);
    int lead = !st || !strcmp(json_string_value(json_object_get(st, "role")), "leader");
    json_decref(st);
    return lead;
}

static json_t *ship_state_json(void *ctx)
{
    return ship_state(ctx);
}

/* The shipper (accounting: in the config), started once the store and mirror are open. */
static int start_ship(const struct server_config *c, struct store *st, struct kube *kube,
                      struct ship **out, struct err *err)
{
    struct ship_options so = {.url = c->acct_url,
                              .cluster = c->acct_cluster,
                              .batch = c->acct_batch,
                              .leading =
                                  kube && server_config_leader_elect(c) ? ship_leading : NULL,
                              .leading_ctx = kube};
    int rc;
    if (!c->acct_url)
        return 0;
    if ((rc = ship_open(st, &so, out, err)) < 0 || (rc = ship_start(*out, err)) < 0)
        return err_prefix(err, "accounting");
    return 0;
}

/* The mirror's options from the config (strings borrowed from c). */
static struct kube_options mirror_options(const struct server_config *c, struct cycler *cy)
{
    struct kube_options ko = KUBE_OPTIONS_INIT;

    ko.kubeconfig = strcmp(c->kubeconfig, "in-cluster") ? c->kubeconfig : NULL;
    ko.context = c->kube_context;
    ko.scheduler_name = c->scheduler_name;
    ko.writeback_giveup_ms = c->writeback_giveup_ms;
    ko.leader_elect = server_config_leader_elect(c);
    ko.lease_duration_ms = c->le_lease_ms;
    ko.renew_deadline_ms = c->le_renew_ms;
    ko.retry_period_ms = c->le_retry_ms;
    ko.lease_namespace = c->le_namespace;
    ko.lease_name = c->le_name;
    ko.identity = c->le_identity;
    ko.on_leading = kick; /* a new leader's first cycle at once, not at the next tick */
    ko.on_leading_ctx = cy;
    return ko;
}

/* Opens the Kubernetes mirror from the kubeconfig ("in-cluster": the service account) and
 * starts its threads; it syncs in the background while the API already answers. */
static int start_mirror(const struct server_config *c, struct cycler *cy, struct store *st,
                        struct kube **out, struct err *err)
{
    struct kube_options ko = mirror_options(c, cy);
    int rc;
    if ((rc = kube_open(cy->sched, st, &ko, out, err)) < 0 || (rc = kube_start(*out, err)) < 0)
        return err_prefix(err, "kubernetes mirror");
    log_info("musterd: mirroring the cluster of '%s'%s%s", c->kubeconfig,
             c->scheduler_name ? ", binding pods of scheduler " : " (mirror only)",
             c->scheduler_name ? c->scheduler_name : "");
    return 0;
}

/* Reloads what can change under a running musterd; force: SIGHUP (read again even when the
 * files look unchanged). Other reloadable settings belong here too, one call each. */
static void reload(struct api *api, int force)
{
    struct err err = ERR_INIT;

    if (api_tls_reload(api, force, &err) < 0)
        log_error("%s", err.msg);
}

/* Blocks until SIGTERM or SIGINT (blocked in every thread, so only this wait sees them);
 * SIGHUP reloads, and once a second the TLS files are checked for changes. */
static void serve_until_signal(struct api *api, const sigset_t *set)
{
    for (;;) {
        struct timespec second = {1, 0};
        int sig = sigtimedwait(set, NULL, &second);
        if (sig == SIGHUP) {
            log_info("musterd: SIGHUP received, reloading");
            reload(api, 1);
        } else if (sig == SIGTERM || sig == SIGINT) {
            log_info("musterd: %s received, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
            return;
        } else if (sig < 0 && errno == EAGAIN) {
            reload(api, 0);
        }
    }
}

/* SIGTERM, SIGINT and SIGHUP into *set and blocked, before any thread starts, so every
 * thread inherits the mask and only serve_until_signal sees them; SIGPIPE ignored. */
static void block_signals(sigset_t *set)
{
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* The store (*st new), the scheduler on it (cy->sched) and the audit guard (cy->guard)
 * with its start-up check. On failure what was opened stays set for server_run to close. */
static int open_state(const struct server_config *c, struct store **st, struct cycler *cy,
                      struct err *err)
{
    struct store_options so = {.dir = c->data_dir, .map_size = c->map_size, .sync = c->sync};
    /* in mirror mode pod status comes from the API server, never from muster */
    struct sched_options sopts = {.mark_running = c->mark_running && !c->kubeconfig,
                                  /* grace_period: 0 means at the next cycle, not the
                                     scheduler's default */
                                  .grace_ms = c->grace_ms > 0 ? c->grace_ms : 1,
                                  .mirrored = c->kubeconfig != NULL,
                                  /* bind mode: muster ends its own pods past their deadline */
                                  .bind_scheduler = c->kubeconfig ? c->scheduler_name : NULL,
                                  .retention_ms = c->retention_ms,
                                  .max_wait_ms = c->max_wait_ms,
                                  .default_queueing = c->default_queueing};
    int rc;

    /* the audit files before the store: a bad key leaves the data directory as it was */
    if ((rc = server__audit_open(c, &cy->guard, err)) < 0 || (rc = store_open(&so, st, err)) < 0 ||
        (rc = sched_open(*st, &sopts, &cy->sched, err)) < 0 ||
        (rc = server__audit_check(cy->guard, *st, err)) < 0)
        return rc;
    /* the log says where the scheduler's memory started afresh (the replay check reads it) */
    struct err e2 = ERR_INIT;
    if (sched_started(cy->sched, clock_now_ms(), &e2) < 0)
        log_warn("could not record the start in the audit log: %s", e2.msg);
    return 0;
}

/* The API's options from the config (strings borrowed from c), wired to the cycle thread
 * (on_change), the mirror (kube, may be NULL) and the audit guard. */
static struct api_options api_options_of(const struct server_config *c, struct cycler *cy,
                                         struct kube *kube, struct ship *sh, const char *read_only)
{
    struct api_options ao = {
        .listen = c->listen,
        .token = c->token,
        .tokens_file = c->tokens_file,
        .auth_reads = c->auth_reads,
        .auth_failures = c->auth_failures,
        .authenticate = kube ? server__kube_authenticate : NULL,
        .authenticate_ctx = kube,
        .body_limit = c->body_limit,
        .body_memory = c->http_body_memory,
        .field_validation = c->field_validation,
        .ui_dir = c->ui_dir,
        .threads = c->threads,
        .head_timeout_ms = c->http_head_ms,
        .body_timeout_ms = c->http_body_ms,
        .idle_timeout_ms = c->http_idle_ms,
        .write_timeout_ms = c->http_write_ms,
        .max_connections = c->http_max_connections,
        .front_realtime = c->front_realtime,
        .front_cpus = c->front_cpus,
        .allowed_hosts = c->allowed_hosts,
        .cors_origins = c->cors_origins,
        .timeseries_interval = c->timeseries_interval,
        .on_change = kick,
        .on_change_ctx = cy,
        .sources = kube ? sources_json : NULL,
        .sources_ctx = kube,
        .leader = kube && server_config_leader_elect(c) ? leader_json : NULL,
        .leader_ctx = kube,
        .tls_cert = c->tls_cert,
        .tls_key = c->tls_key,
        .tls_client_ca = c->tls_client_ca,
        .read_only = read_only,
        .audit_health = server__audit_health,
        .audit_health_ctx = cy->guard,
        .audit_key = server__audit_key(cy->guard),
        .audit_witness = server__audit_witness,
        .accounting = sh ? ship_state_json : NULL,
        .accounting_ctx = sh,
    };
    memcpy(ao.rate, c->rate, sizeof(ao.rate));
    return ao;
}

/* Says where musterd listens, and writes the port file when one is configured. */
static int announce(const struct server_config *c, const struct api *api, struct err *err)
{
    char host[256];

    listen_host(c->listen, host, sizeof(host));
    log_info("musterd listening on %s://%s:%d (data dir '%s', sync %s)", api_scheme(api), host,
             api_port(api), c->data_dir, store_sync_name(c->sync));
    if (c->port_file)
        return write_port_file(c->port_file, api_port(api), err);
    return 0;
}

/* Ends the cycle thread; a running cycle completes its commit first. */
static void stop_cycles(struct cycler *cy, thrd_t thread)
{
    mtx_lock(&cy->mu);
    cy->stop = 1;
    cnd_signal(&cy->cv);
    mtx_unlock(&cy->mu);
    thrd_join(thread, NULL);
}

int server_run(const struct server_config *c, struct err *err)
{
    struct cycler cy = {.interval = c->cycle_interval, .cycle_cpus = c->cycle_cpus};
    struct store *st = NULL;
    struct api *api = NULL;
    struct kube *kube = NULL;
    struct ship *sh = NULL;
    struct server__sampler *sampler = NULL;
    thrd_t thread;
    int have_thread = 0, rc;
    const char *read_only = NULL;
    sigset_t set;

    log_set_level(c->log_level);
    thread_background_nice(c->background_nice);
    block_signals(&set);
    mtx_init(&cy.mu, mtx_plain);
    cnd_init(&cy.cv);

    /* Everything the configuration names that can be refused is refused before the store
     * is opened (or made): bad input changes nothing. */
    struct api_options pre = api_options_of(c, &cy, NULL, NULL, NULL);
    struct kube_options kpre = c->kubeconfig ? mirror_options(c, &cy) : (struct kube_options){0};
    if ((rc = api_check(&pre, err)) < 0)
        goto out;
    if ((rc = cpus_allowed(&c->cycle_cpus, err)) < 0) {
        err_prefix(err, "cycle_cpus");
        goto out;
    }
    if (c->kubeconfig && (rc = kube_check(&kpre, err)) < 0) {
        err_prefix(err, "kubernetes mirror");
        goto out;
    }
    if ((rc = open_state(c, &st, &cy, err)) < 0)
        goto out;
    read_only = server__audit_read_only(cy.guard);
    if (c->kubeconfig && read_only)
        log_warn("musterd: read-only, so the Kubernetes mirror is not started");
    else if (c->kubeconfig && (rc = start_mirror(c, &cy, st, &kube, err)) < 0)
        goto out;
    cy.kube = kube;
    if ((rc = start_ship(c, st, kube, &sh, err)) < 0)
        goto out;
    if (thrd_create(&thread, cycle_main, &cy) != thrd_success) {
        rc = err_set(err, ERR_INTERNAL, "cannot start the cycle thread");
        goto out;
    }
    have_thread = 1;
    struct api_options ao = api_options_of(c, &cy, kube, sh, read_only);
    if ((rc = api_start(&ao, cy.sched, st, &api, err)) < 0 ||
        (rc = server__audit_start(cy.guard, st, api, err)) < 0 ||
        (rc = server__sampler_start(cy.sched, c, cy.guard, &sampler, err)) < 0 ||
        (rc = announce(c, api, err)) < 0)
        goto out;
    serve_until_signal(api, &set);
out:
    server__audit_stop(cy.guard); /* it may make the api read-only: stop it first */
    api_stop(api);                /* stop accepting; running requests finish first */
    server__sampler_stop(sampler);
    if (have_thread)
        stop_cycles(&cy, thread);
    ship_close(sh); /* before the mirror it asks about leadership */
    kube_close(kube);
    server__audit_close(cy.guard); /* signs the head after the last cycle */
    sched_close(cy.sched);
    if (st)
        store_sync(st, NULL);
    store_close(st);
    cnd_destroy(&cy.cv);
    mtx_destroy(&cy.mu);
    if (rc == 0)
        log_info("musterd stopped");
    return rc;
}
