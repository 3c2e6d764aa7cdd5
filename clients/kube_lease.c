/*
 * kube_lease.c - leader election with a coordination.k8s.io/v1 Lease, as client-go's
 * tools/leaderelection does it (leaderelection.go, resourcelock/leaselock.go).
 *
 * tryAcquireOrRenew, every retry period: GET the Lease (create it when absent); when its
 * spec differs from the one last observed, remember it and the local CLOCK_MONOTONIC
 * time of that observation (the remote clock is never trusted: renewTime is only
 * written, never compared); a Lease held by another identity is valid until lease
 * duration after that observation; otherwise PUT it with the observed resourceVersion,
 * so that a 409 Conflict means another replica wrote first. leaseTransitions grows when
 * the holder changes.
 *
 * Terms. Winning the Lease does not make a replica act at once: it first relists every
 * source (its store becomes the API server's state again: kube_mirror.c resets the pods
 * an earlier term placed but never wrote) and waits for a cycle of an earlier term to
 * end; then, in one transaction, the write-back records not yet written are abandoned
 * and a "leader" audit record names the previous holder, the
 * transitions and how many records were abandoned. Only then does the term start: the
 * cycle thread runs cycles (kube_cycle_begin) and, once the write-back thread has taken
 * the term up (kube__writeback_turn), kube__may_write answers 1 (those questions are
 * answered in kube_term.c; this file is the thread that changes the answers).
 *
 * Losing: a renewal that fails until renew deadline passed, or a Lease that names another
 * holder, ends the term at once (a "leader" record says why). kube__may_write also checks
 * the age of the last renewal itself, by CLOCK_MONOTONIC, so a process that was paused
 * (SIGSTOP) past its deadline fails its next check before any write, whatever the lease
 * thread has not noticed yet. A write already on the wire when the process was paused
 * cannot be recalled (client-go has the same limit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_internal.h"
#include "log.h"
#include "store.h"

#define LEASE_API "/apis/coordination.k8s.io/v1"

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* MicroTime, as metav1.MicroTime marshals: "2006-01-02T15:04:05.000000Z". */
static void micro_time(char *buf, size_t n)
{
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    char day[24];
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%06dZ", day, (int)(tv.tv_usec % 1000000));
}

static const char *spec_str(json_t *spec, const char *name)
{
    const char *v = json_string_value(json_object_get(spec, name));
    return v ? v : "";
}

struct elector {
    struct kube *k;
    struct kube_http *h;
    char *path;          /* .../namespaces/NS/leases/NAME */
    json_t *observed;    /* the Lease's spec as last observed (NULL: none yet) */
    int64_t observed_ms; /* CLOCK_MONOTONIC ms of that observation */
};

static void observe(struct elector *e, json_t *spec)
{
    if (e->observed && json_equal(e->observed, spec))
        return;
    json_decref(e->observed);
    e->observed = json_deep_copy(spec);
    e->observed_ms = clock_mono_ms();
    struct kube *k = e->k;
    const char *holder = spec_str(spec, "holderIdentity");
    pthread_mutex_lock(&k->mu);
    snprintf(k->lease.holder, sizeof(k->lease.holder), "%s", holder);
    if (*holder && strcmp(holder, k->lease.identity))
        snprintf(k->lease.prev_holder, sizeof(k->lease.prev_holder), "%s", holder);
    k->lease.transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    pthread_mutex_unlock(&k->mu);
}

static json_t *new_spec(struct elector *e, const char *holder, int64_t duration_s,
                        const char *acquire, int64_t transitions)
{
    char now[48];
    micro_time(now, sizeof(now));
    return json_pack("{s:s,s:I,s:s,s:s,s:I}", "holderIdentity", holder, "leaseDurationSeconds",
                     (json_int_t)duration_s, "acquireTime", acquire ? acquire : now, "renewTime",
                     now, "leaseTransitions", (json_int_t)transitions);
}

static void failed(struct elector *e, const char *what, struct kube_resp *r, struct err *err)
{
    struct kube *k = e->k;
    pthread_mutex_lock(&k->mu);
    k->lease.renew_failures++;
    int leading = k->lease.role != KUBE_FOLLOWING;
    pthread_mutex_unlock(&k->mu);
    if (r && r->status)
        log_msg(leading ? LOG_WARN : LOG_DEBUG, "kube: lease '%s': %s: HTTP %ld", e->path, what,
                r->status);
    else
        log_msg(leading ? LOG_WARN : LOG_DEBUG, "kube: lease '%s': %s: %s", e->path, what,
                err->msg);
}

/* client-go's tryAcquireOrRenew. Returns 1 when this replica holds the Lease now (created,
 * acquired or renewed), 0 otherwise; *other set when it is validly held by someone else. */
static int try_acquire_or_renew(struct elector *e, int *other)
{
    struct kube *k = e->k;
    struct kube_resp r = {0};
    struct err err = ERR_INIT;
    json_t *lease = NULL, *body = NULL, *spec = NULL;
    int64_t dur_s = max64(1, (k->opts.lease_duration_ms + 999) / 1000);
    long timeout = (long)k->opts.renew_deadline_ms;
    const char *id = k->lease.identity; /* set once at open */
    int ok = 0;
    *other = 0;
    if (kube__http_request(e->h, "GET", e->path, NULL, NULL, timeout, &r, &err) < 0) {
        failed(e, "get", NULL, &err);
        goto out;
    }
    if (r.status == 404) {
        char *coll = xasprintf(LEASE_API "/namespaces/%s/leases", k->lease.ns);
        spec = new_spec(e, id, dur_s, NULL, 0);
        body = json_pack("{s:s,s:s,s:{s:s,s:s},s:O}", "apiVersion", "coordination.k8s.io/v1",
                         "kind", "Lease", "metadata", "name", k->lease.name, "namespace",
                         k->lease.ns, "spec", spec);
        char *text = json_dumps(body, JSON_COMPACT);
        int rc = kube__http_request(e->h, "POST", coll, NULL, text, timeout, &r, &err);
        free(text);
        free(coll);
        if (rc == 0 && r.status == 201) {
            observe(e, spec);
            ok = 1;
        } else {
            failed(e, "create", rc == 0 ? &r : NULL, &err);
        }
        goto out;
    }
    if (r.status != 200 || !(lease = json_loadb(r.body, r.len, 0, NULL)) ||
        !json_is_object(json_object_get(lease, "spec"))) {
        failed(e, "get", r.status != 200 ? &r : NULL,
               (err_set(&err, ERR_INVALID, "malformed Lease"), &err));
        goto out;
    }
    json_t *old = json_object_get(lease, "spec");
    observe(e, old);
    const char *holder = spec_str(old, "holderIdentity");
    int mine = !strcmp(holder, id);
    if (*holder && !mine && clock_mono_ms() < e->observed_ms + k->opts.lease_duration_ms) {
        *other = 1; /* held by someone else, and valid by our observation */
        goto out;
    }
    int64_t trans = json_integer_value(json_object_get(old, "leaseTransitions"));
    /* client-go: a holder that is us keeps acquireTime and the transitions */
    spec =
        new_spec(e, id, dur_s, mine ? json_string_value(json_object_get(old, "acquireTime")) : NULL,
                 mine ? trans : trans + 1);
    json_object_set(lease, "spec", spec);
    json_object_del(json_object_get(lease, "metadata"), "managedFields");
    char *text = json_dumps(lease, JSON_COMPACT); /* with the observed resourceVersion */
    int rc = kube__http_request(e->h, "PUT", e->path, NULL, text, timeout, &r, &err);
    free(text);
    if (rc == 0 && r.status == 200) {
        observe(e, spec);
        ok = 1;
    } else {
        failed(e,
               rc == 0 && r.status == 409 ? "update conflict (another replica wrote first)"
                                          : "update",
               rc == 0 ? &r : NULL, &err);
    }
out:
    json_decref(lease);
    json_decref(body);
    json_decref(spec);
    kube__resp_release(&r);
    return ok;
}

static int append_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    return store_audit_append(txn, ctx, NULL, err);
}

static void audit_leader(struct kube *k, json_t *rec)
{
    struct err err = ERR_INIT;
    if (store_write(k->store, append_fn, rec, &err) < 0)
        log_warn("kube: cannot record the leader change: %s", err.msg);
}

/* Lock held: every watcher drops its stream and lists again. */
static void request_relists(struct kube *k)
{
    k->lease.relist_gen++;
    for (int i = 0; i < KUBE_NSOURCES; i++)
        k->src[i].relist_req = 1;
    pthread_cond_broadcast(&k->cond);
}

/* Ends the term (lock not held). The store is relisted too: a follower's reads then show
 * the API server's state, not the placements of the term that ended unwritten. */
static void lose(struct kube *k, const char *why)
{
    pthread_mutex_lock(&k->mu);
    enum kube_role was = k->lease.role;
    k->lease.role = KUBE_FOLLOWING; /* acting stops here */
    if (was != KUBE_FOLLOWING && !k->stop)
        request_relists(k);
    uint64_t term = k->lease.term;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
    if (was == KUBE_FOLLOWING)
        return;
    log_warn("kube: no longer the leader (%s)", why);
    json_t *rec =
        json_pack("{s:s,s:s,s:{s:s,s:s,s:I}}", "kind", "leader", "reason", why, "details", "event",
                  "stopped", "identity", k->lease.identity, "term", (json_int_t)term);
    audit_leader(k, rec);
    json_decref(rec);
    /* counted once the record is written: whoever sees the loss finds it in the log */
    pthread_mutex_lock(&k->mu);
    k->lease.losses++;
    snprintf(k->lease.last_loss, sizeof(k->lease.last_loss), "%s", why);
    pthread_mutex_unlock(&k->mu);
}

/* Won the Lease: relist every source before acting. */
static void start_syncing(struct kube *k)
{
    pthread_mutex_lock(&k->mu);
    k->lease.role = KUBE_SYNCING;
    request_relists(k);
    pthread_mutex_unlock(&k->mu);
    log_info("kube: acquired lease '%s/%s' as '%s'; relisting before acting", k->lease.ns,
             k->lease.name, k->lease.identity);
}

/* Lock held. Every source applied a list started after the relist request (or is not
 * served), and no cycle of an earlier term runs. */
static int synced(struct kube *k)
{
    if (k->lease.cycling)
        return 0;
    for (int i = 0; i < KUBE_NSOURCES; i++)
        if (k->src[i].applied_gen < k->lease.relist_gen && k->src[i].state != KUBE_MISSING)
            return 0;
    return !k->head && !k->writer_busy;
}

/* The records whose write-back carries a decision to the API server (a binding, a
 * nomination, an eviction): what an abandoned term leaves unwritten. */
static int decision(const char *name)
{
    enum store_audit_kind kind;
    if (store_audit_kind_parse(name, &kind, NULL) < 0)
        return 0;
    return kind == STORE_AUDIT_PLACED || kind == STORE_AUDIT_NOMINATED ||
           kind == STORE_AUDIT_PREEMPTED || kind == STORE_AUDIT_EVICTED;
}

static int count_fn(void *ctx, uint64_t seq, const char *json, size_t len)
{
    json_t *rec = json_loadb(json, len, 0, NULL);
    (void)seq;
    *(uint64_t *)ctx += decision(json_string_value(json_object_get(rec, "kind")));
    json_decref(rec);
    return 0;
}

/* In txn: the write-back of the records after the acknowledged one, up to the last audit
 * record (*to), is abandoned: the persisted writeback document moves to *to, *count is
 * the number of decisions among them (approximate where a record was half written). */
static int abandon(struct kube *k, MDB_txn *txn, uint64_t *from, uint64_t *to, uint64_t *count,
                   struct err *err)
{
    pthread_mutex_lock(&k->mu);
    *from = k->c.ack_seq + 1;
    pthread_mutex_unlock(&k->mu);
    *count = 0;
    int rc = store_audit_last_seq(txn, to, err);
    if (rc == 0 && *to >= *from)
        rc = store_audit_scan(txn, *from, *to, count_fn, count, err);
    if (rc < 0)
        return rc;
    json_t *doc = json_pack("{s:I,s:{}}", "ackSeq", (json_int_t)*to, "done");
    rc = store_doc_put(txn, STORE_DB_MIRROR, "writeback", doc, err);
    json_decref(doc);
    return rc;
}

struct start_ctx {
    struct kube *k;
    uint64_t from, to, abandoned;
    char prev[256];
    int64_t transitions;
};

static int start_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct start_ctx *c = ctx;
    int rc = 0;
    c->from = c->to = c->abandoned = 0;
    if (c->k->scheduler_name && (rc = abandon(c->k, txn, &c->from, &c->to, &c->abandoned, err)) < 0)
        return rc;
    json_t *rec = json_pack("{s:s,s:s,s:{s:s,s:s,s:s?,s:I,s:I,s:I,s:I}}", "kind", "leader",
                            "reason", "acquired the lease; the API server's state relisted",
                            "details", "event", "started", "identity", c->k->lease.identity,
                            "previousHolder", c->prev[0] ? c->prev : NULL, "leaseTransitions",
                            (json_int_t)c->transitions, "abandoned", (json_int_t)c->abandoned,
                            "abandonedFrom", (json_int_t)c->from, "abandonedTo", (json_int_t)c->to);
    rc = store_audit_append(txn, rec, NULL, err);
    json_decref(rec);
    return rc;
}

/* Synced: abandon the earlier terms' records, record the start, then lead. */
static void start_leading(struct kube *k)
{
    struct start_ctx c = {.k = k};
    struct err err = ERR_INIT;
    pthread_mutex_lock(&k->mu);
    snprintf(c.prev, sizeof(c.prev), "%s", k->lease.prev_holder);
    c.transitions = k->lease.transitions;
    pthread_mutex_unlock(&k->mu);
    if (store_write(k->store, start_fn, &c, &err) < 0) {
        log_warn("kube: cannot start the term: %s", err.msg);
        return; /* tried again at the next tick, as long as the Lease is ours */
    }
    pthread_mutex_lock(&k->mu);
    k->lease.abandon_seq = c.to;
    if (k->c.ack_seq < c.to)
        k->c.ack_seq = c.to;
    k->lease.term++;
    k->lease.acquisitions++;
    k->lease.role = KUBE_LEADING;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
    log_info("kube: leading as '%s' (previous holder '%s', %lld transitions, %llu write-back "
             "records of earlier terms abandoned)",
             k->lease.identity, c.prev, (long long)c.transitions, (unsigned long long)c.abandoned);
    if (k->opts.on_leading)
        k->opts.on_leading(k->opts.on_leading_ctx);
}

/* client-go's ReleaseOnCancel: holderIdentity cleared, leaseDurationSeconds 1. */
static void release(struct elector *e)
{
    struct kube *k = e->k;
    struct kube_resp r = {0};
    struct err err = ERR_INIT;
    json_t *lease = NULL;
    struct kube_http *h = kube__http_new(k->conn, NULL); /* lease_stop is set by now */
    if (!h || kube__http_request(h, "GET", e->path, NULL, NULL, 5000, &r, &err) < 0 ||
        r.status != 200 || !(lease = json_loadb(r.body, r.len, 0, NULL)))
        goto out;
    json_t *old = json_object_get(lease, "spec");
    if (strcmp(spec_str(old, "holderIdentity"), k->lease.identity))
        goto out; /* not ours any more: nothing to release */
    json_t *spec =
        new_spec(e, "", 1, NULL, json_integer_value(json_object_get(old, "leaseTransitions")));
    json_object_set_new(lease, "spec", spec);
    char *text = json_dumps(lease, JSON_COMPACT);
    if (kube__http_request(h, "PUT", e->path, NULL, text, 5000, &r, &err) == 0 && r.status == 200)
        log_info("kube: released lease '%s/%s'", k->lease.ns, k->lease.name);
    else
        log_warn("kube: cannot release lease '%s/%s'", k->lease.ns, k->lease.name);
    free(text);
out:
    json_decref(lease);
    kube__resp_release(&r);
    kube__http_free(h);
}

/* Waits up to ms or until lease_stop. */
static void lease_sleep(struct kube *k, int64_t ms)
{
    struct timespec ts;
    kube__deadline_ts(ms, &ts);
    pthread_mutex_lock(&k->mu);
    while (!k->lease_stop && pthread_cond_timedwait(&k->cond, &k->mu, &ts) == 0)
        if (k->lease.role == KUBE_SYNCING && synced(k))
            break;
    pthread_mutex_unlock(&k->mu);
}

/* One retry period's attempt and what follows from it. */
static void tick(struct elector *e)
{
    struct kube *k = e->k;
    int64_t sent = clock_mono_ms(), wall = clock_now_ms();
    int other = 0;
    int ok = try_acquire_or_renew(e, &other);
    char why[320] = "";
    pthread_mutex_lock(&k->mu);
    enum kube_role role = k->lease.role;
    if (ok) {
        k->lease.renewed_ms = sent;
        k->lease.renewed_wall_ms = wall;
    } else if (role != KUBE_FOLLOWING && (other || !kube__lease_fresh(k, clock_mono_ms()))) {
        if (other)
            snprintf(why, sizeof(why), "the lease is held by '%s'", k->lease.holder);
        else
            snprintf(why, sizeof(why), "renew deadline of %lld ms passed without a renewal",
                     (long long)k->opts.renew_deadline_ms);
    }
    pthread_mutex_unlock(&k->mu);
    if (why[0])
        lose(k, why);
    else if (ok && role == KUBE_FOLLOWING)
        start_syncing(k);
}

void *kube__lease_main(void *arg)
{
    struct kube *k = arg;
    struct elector e = {.k = k, .h = kube__http_new(k->conn, &k->lease_stop)};
    e.path = xasprintf(LEASE_API "/namespaces/%s/leases/%s", k->lease.ns, k->lease.name);
    int64_t next = 0;
    while (e.h && !k->lease_stop) {
        int64_t now = clock_mono_ms();
        if (now >= next) {
            tick(&e);
            pthread_mutex_lock(&k->mu);
            int follower = k->lease.role == KUBE_FOLLOWING;
            pthread_mutex_unlock(&k->mu);
            int64_t p = k->opts.retry_period_ms;
            /* client-go: a follower's retries are jittered (factor 1.2) */
            next = clock_mono_ms() + (follower ? p + random() % (p / 5 + 1) : p);
        }
        pthread_mutex_lock(&k->mu);
        int start =
            k->lease.role == KUBE_SYNCING && synced(k) && kube__lease_fresh(k, clock_mono_ms());
        pthread_mutex_unlock(&k->mu);
        if (start) {
            start_leading(k);
            continue;
        }
        int64_t wait = next - clock_mono_ms();
        if (wait > 0)
            lease_sleep(k, wait);
    }
    /* kube_close joined the other threads first: nothing writes any more */
    pthread_mutex_lock(&k->mu);
    int held = k->lease.role != KUBE_FOLLOWING;
    pthread_mutex_unlock(&k->mu);
    if (held) {
        lose(k, "shutting down: lease released");
        release(&e);
    }
    json_decref(e.observed);
    free(e.path);
    kube__http_free(e.h);
    return NULL;
}

void kube__lease_init(struct kube *k)
{
    struct kube_options *o = &k->opts;
    struct kube_lease *l = &k->lease;
    if (o->lease_duration_ms <= 0)
        o->lease_duration_ms = 15000;
    if (o->renew_deadline_ms <= 0)
        o->renew_deadline_ms = 10000;
    if (o->retry_period_ms <= 0)
        o->retry_period_ms = 2000;
    if (o->identity && *o->identity) {
        snprintf(l->identity, sizeof(l->identity), "%s", o->identity);
    } else {
        char host[200] = "";
        gethostname(host, sizeof(host) - 1);
        snprintf(l->identity, sizeof(l->identity), "%s_%ld", host[0] ? host : "muster",
                 (long)getpid());
    }
    snprintf(l->ns, sizeof(l->ns), "%s",
             o->lease_namespace && *o->lease_namespace ? o->lease_namespace
             : k->conn->ns                             ? k->conn->ns
                                                       : "default");
    snprintf(l->name, sizeof(l->name), "%s",
             o->lease_name && *o->lease_name ? o->lease_name : "muster");
    o->identity = o->lease_namespace = o->lease_name = NULL; /* copied */
    if (o->leader_elect) {
        free(k->conn->user_agent);
        k->conn->user_agent = xasprintf("muster/" MUSTER_VERSION " (%s)", l->identity);
    }
}
