/*
 * audit.c - the audit guard: verifies the chain on start (a broken chain makes musterd
 * read-only), and signs checkpoints every audit_checkpoint_records records and every
 * audit_checkpoint_interval seconds into the chain and the witness file.
 *
 * Read-only rather than refusing to start: the evidence stays readable over the API (the
 * export, the verdict in /api/v1/health) for the post-mortem, while nothing is scheduled
 * and nothing more is appended to, or signed on top of, a chain that cannot be trusted.
 *
 * The start-up check verifies every record from the witness's checkpoint (or the newest
 * checkpoint record) to the head before musterd serves; the records before it, which a
 * signed checkpoint covers only through their stored hashes, are verified by a thread of
 * their own right after (full_main), in batches of read transactions, and a break found
 * there makes musterd read-only too. No checkpoint is signed until that walk is done.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "api.h"
#include "audit_sig.h"
#include "clock.h"
#include "err.h"
#include "internal.h"
#include "kube.h"
#include "log.h"
#include "store.h"

/* Records per read transaction of the background check: a long read transaction keeps
 * LMDB from reusing the pages freed after it began. */
#define FULL_BATCH 50000

enum full_state { FULL_NONE, FULL_RUNNING, FULL_OK, FULL_BROKEN, FULL_STOPPED };

struct server__audit {
    struct store_audit_key *key;
    char *witness;
    char *archive;           /* retention: where pruned segments go, or NULL */
    uint64_t keep;           /* retention: records kept, 0: all */
    int hold_unshipped;      /* accounting on: retention never prunes what is not shipped */
    struct kube_witness *cm; /* mirror mode: the ConfigMap witness, or NULL */
    char cm_name[300];
    uint64_t every_records;
    double every_seconds;
    int rotate; /* retired keys configured: the first tick signs with the current key */
    struct store *st;
    struct api *api;

    mtx_t mu; /* guards everything below */
    cnd_t cv;
    int kicked, stop, have_thread, final;
    thrd_t thread;
    int have_full;                    /* full_thread runs or ran */
    thrd_t full_thread;               /* the background check */
    enum full_state full;             /* its state */
    uint64_t full_end, full_checked;  /* it walks records 1..full_end (the head on start) */
    struct store_audit_verdict fullv; /* its verdict when broken */
    char *read_only;
    struct store_audit_verdict verdict; /* of the start-up check */
    int checked;
    struct store_ckpt last; /* newest checkpoint this process signed */
    int have_last;
    int64_t last_ms;
};

/* 1 when path (existing or not) lies inside dir. */
static int inside(const char *dir, const char *path)
{
    char d[PATH_MAX], p[PATH_MAX], parent[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n;

    if (!realpath(dir, d))
        return 0;
    snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!parent[0] || !realpath(parent, p))
        return 0;
    n = strlen(d);
    return !strncmp(p, d, n) && (p[n] == '/' || p[n] == '\0');
}

static int open_configmap(struct server__audit *g, const struct server_config *c, struct err *err)
{
    struct kube_options ko = KUBE_OPTIONS_INIT;
    int rc;

    ko.kubeconfig = strcmp(c->kubeconfig, "in-cluster") ? c->kubeconfig : NULL;
    ko.context = c->kube_context;
    rc = kube_witness_open(
        &ko, c->audit_witness_configmap ? c->audit_witness_configmap : "muster-audit-witness",
        &g->cm, err);
    if (rc == 0)
        kube_witness_name(g->cm, g->cm_name, sizeof(g->cm_name));
    return rc;
}

int server__audit_open(const struct server_config *c, struct server__audit **out, struct err *err)
{
    struct server__audit *g = xcalloc(1, sizeof(*g));
    int rc = 0;

    mtx_init(&g->mu, mtx_plain);
    cnd_init(&g->cv);
    g->every_records = c->audit_checkpoint_records ? c->audit_checkpoint_records : 1000;
    g->every_seconds = c->audit_checkpoint_interval > 0 ? c->audit_checkpoint_interval : 60;
    *out = g;
    if ((c->audit_witness || c->audit_keep_records || c->audit_key_retired) && !c->audit_key)
        return err_set(err, ERR_INVALID, "%s needs audit_key: checkpoints are signed",
                       c->audit_witness        ? "audit_witness"
                       : c->audit_keep_records ? "audit_keep_records"
                                               : "audit_key_retired");
    if (!c->audit_key)
        return 0;
    if ((rc = store_audit_key_load(c->audit_key, &g->key, err)) < 0)
        return rc;
    if (!store_audit_key_can_sign(g->key))
        return err_set(err, ERR_INVALID,
                       "audit_key '%s' holds a public key: musterd needs the private key to sign "
                       "checkpoints",
                       c->audit_key);
    if ((rc = store_audit_key_retire_list(g->key, c->audit_key_retired, err)) < 0)
        return err_prefix(err, "audit_key_retired");
    g->rotate = c->audit_key_retired != NULL;
    if (inside(c->data_dir, c->audit_key))
        return err_set(err, ERR_INVALID,
                       "audit_key '%s' is inside the data directory '%s': "
                       "whoever can write the store could read it",
                       c->audit_key, c->data_dir);
    if (c->audit_witness && inside(c->data_dir, c->audit_witness))
        return err_set(err, ERR_INVALID,
                       "audit_witness '%s' is inside the data directory '%s': "
                       "it must be on another path",
                       c->audit_witness, c->data_dir);
    if (c->audit_keep_records && !c->audit_archive)
        return err_set(err, ERR_INVALID,
                       "audit_keep_records needs audit_archive: the directory "
                       "that receives the records it prunes");
    if (c->audit_archive && access(c->audit_archive, W_OK) != 0)
        return err_set(err, ERR_INVALID, "audit_archive '%s' is not a writable directory: %s",
                       c->audit_archive, strerror(errno));
    g->witness = c->audit_witness ? xstrdup(c->audit_witness) : NULL;
    g->archive = c->audit_archive ? xstrdup(c->audit_archive) : NULL;
    g->keep = c->audit_keep_records;
    g->hold_unshipped = c->acct_url != NULL;
    if (c->kubeconfig && (!c->audit_witness_configmap || strcmp(c->audit_witness_configmap, "-")))
        return open_configmap(g, c, err);
    return 0;
}

static void go_read_only(struct server__audit *g, const struct store_audit_verdict *v)
{
    char why[512];

    snprintf(why, sizeof(why), "audit chain broken at record %" PRIu64 ": %s", v->first_bad,
             v->reason);
    log_error("audit: %s; musterd is read-only (reads work; changes and cycles answer 503)", why);
    mtx_lock(&g->mu);
    free(g->read_only);
    g->read_only = xstrdup(why);
    mtx_unlock(&g->mu);
    if (g->api)
        api_set_read_only(g->api, why);
}

/* The ConfigMap's checkpoint, when there is one and it can be read (a cluster that cannot
 * be reached must not stop musterd: the file still witnesses). */
static int configmap_last(struct server__audit *g, struct store_ckpt *out)
{
    struct err err = ERR_INIT;
    char *line = NULL;
    json_t *doc = NULL;
    int found = 0;

    if (g->cm && kube_witness_get(g->cm, &line, &err) < 0)
        log_warn("audit: %s; checking against the witness file only", err.msg);
    if (line && (!(doc = json_loads(line, 0, NULL)) || store_ckpt_parse(doc, out, &err) < 0))
        log_warn("audit: the witness ConfigMap '%s' holds no checkpoint: %s", g->cm_name,
                 doc ? err.msg : "not JSON");
    else if (line)
        found = 1;
    json_decref(doc);
    free(line);
    return found;
}

/* The newest checkpoint of each witness, the newer first. Returns how many (0..2) or
 * ERR_* (a witness file that cannot be read). */
static int witnesses(struct server__audit *g, struct store_ckpt w[2], struct err *err)
{
    int found = 0, n, rc;

    if (g->witness && (rc = store_witness_last(g->witness, &w[0], &found, err)) < 0)
        return rc;
    n = found;
    n += configmap_last(g, &w[n]);
    if (n == 2 && w[1].seq > w[0].seq) {
        struct store_ckpt t = w[0];
        w[0] = w[1];
        w[1] = t;
    }
    return n;
}

int server__audit_witness(void *ctx, struct store_ckpt *out, struct err *err)
{
    struct server__audit *g = ctx;
    struct store_ckpt w[2];
    int n = witnesses(g, w, err);

    if (n > 0)
        *out = w[0];
    return n < 0 ? n : n > 0;
}

int server__audit_check(struct server__audit *g, struct store *st, struct err *err)
{
    struct store_audit_verdict v;
    struct store_ckpt w[2];
    MDB_txn *txn = NULL;
    int n, rc;

    if ((n = witnesses(g, w, err)) < 0)
        return n;
    rc = store_txn_begin(st, STORE_READ, &txn, err);
    for (int i = 0; rc == 0 && i < (n ? n : 1); i++)
        if ((rc = store_audit_check_start(txn, g->key, n ? &w[i] : NULL, &v, err)) == 0 && !v.ok)
            break;
    store_txn_abort(&txn);
    if (rc < 0)
        return rc;
    mtx_lock(&g->mu);
    g->verdict = v;
    g->checked = 1;
    g->full_end = v.ok ? v.to : 0;
    g->full = g->full_end ? FULL_RUNNING : FULL_OK;
    mtx_unlock(&g->mu);
    if (!v.ok)
        go_read_only(g, &v);
    else
        log_info("audit: chain verified from record %" PRIu64 " to %" PRIu64 " (%" PRIu64
                 " records%s%s)",
                 v.from, v.to, v.checked, n ? ", anchored at the witness" : "",
                 g->key ? ", signatures checked" : ", no audit_key: checkpoints off");
    return 0;
}

const char *server__audit_read_only(struct server__audit *g)
{
    const char *r;

    mtx_lock(&g->mu);
    r = g->read_only;
    mtx_unlock(&g->mu);
    return r;
}

const struct store_audit_key *server__audit_key(struct server__audit *g)
{
    return g ? g->key : NULL; /* NULL before the guard is open (server_run's api_check) */
}

json_t *server__audit_health(void *ctx)
{
    struct server__audit *g = ctx;
    json_t *doc;

    mtx_lock(&g->mu);
    doc = json_pack("{s:b, s:b, s:s?, s:s?, s:s?}", "checkpoints", g->key != NULL, "ok",
                    !g->read_only, "reason", g->read_only, "witness", g->witness,
                    "witnessConfigMap", g->cm ? g->cm_name : NULL);
    if (g->key) {
        const char *ids[16];
        size_t n = store_audit_key_retired(g->key, ids, 16);
        json_t *old = json_array();
        for (size_t i = 0; i < n && i < 16; i++)
            json_array_append_new(old, json_string(ids[i]));
        json_object_set_new(doc, "key", json_string(store_audit_key_id(g->key)));
        json_object_set_new(doc, "retiredKeys", old);
    }
    if (g->checked)
        json_object_set_new(
            doc, "startCheck",
            json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:s}", "ok", g->verdict.ok, "from",
                      (json_int_t)g->verdict.from, "to", (json_int_t)g->verdict.to, "checked",
                      (json_int_t)g->verdict.checked, "firstBad", (json_int_t)g->verdict.first_bad,
                      "signedTo", (json_int_t)g->verdict.signed_to, "reason", g->verdict.reason));
    if (g->full != FULL_NONE) {
        static const char *const states[] = {"", "running", "ok", "broken", "stopped"};
        json_t *full = json_pack("{s:s, s:I, s:I}", "state", states[g->full], "to",
                                 (json_int_t)g->full_end, "checked", (json_int_t)g->full_checked);
        if (g->full == FULL_BROKEN) {
            json_object_set_new(full, "firstBad", json_integer((json_int_t)g->fullv.first_bad));
            json_object_set_new(full, "reason", json_string(g->fullv.reason));
        }
        json_object_set_new(doc, "fullCheck", full);
    }
    if (g->have_last)
        json_object_set_new(
            doc, "lastCheckpoint",
            json_pack("{s:I, s:s}", "seq", (json_int_t)g->last.seq, "time", g->last.time));
    mtx_unlock(&g->mu);
    return doc;
}

static int checkpoint_txn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct server__audit *g = ((void **)ctx)[0];

    return store_audit_checkpoint(txn, g->key, ((void **)ctx)[1], err);
}

/* Signs a checkpoint when one is due (force: whenever there is something new). The
 * records since the previous checkpoint are verified first: a chain broken under a running
 * musterd is never signed. */
static void tick(struct server__audit *g, int force)
{
    struct store_audit_verdict v;
    struct store_ckpt cp;
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    uint64_t ckpt = 0, head = 0;
    int64_t now = clock_now_ms();
    int rc;

    if (server__audit_read_only(g))
        return;
    mtx_lock(&g->mu);
    int full_ok = g->full == FULL_OK;
    mtx_unlock(&g->mu);
    if (!full_ok)
        return; /* the records before the start-up check's are not verified yet */
    if ((rc = store_txn_begin(g->st, STORE_READ, &txn, &err)) == 0)
        rc = store_audit_ckpt_state(txn, &ckpt, &head, &err);
    if (rc == 0 &&
        (g->rotate || (head > ckpt && (force || head - ckpt >= g->every_records ||
                                       (double)(now - g->last_ms) >= g->every_seconds * 1000.0))))
        rc = store_audit_verify_signed(txn, ckpt, 0, g->key, &v, &err) < 0 ? -1 : 1;
    store_txn_abort(&txn);
    if (rc <= 0) {
        if (rc < 0)
            log_warn("audit: cannot check for a checkpoint: %s", err.msg);
        return;
    }
    if (!v.ok) {
        go_read_only(g, &v);
        return;
    }
    void *ctx[2] = {g, &cp};
    rc = store_write(g->st, checkpoint_txn, ctx, &err);
    if (rc >= 0)
        g->rotate = 0; /* signed, or the head is already signed by this key */
    if (rc != 0) {
        if (rc < 0)
            log_warn("audit: cannot write a checkpoint: %s", err.msg);
        return;
    }
    /* A witness must never sign more than the disk holds: with sync meta or none a power
     * loss could take the signed records and make an honest store look cut. */
    if (store_sync(g->st, &err) < 0) {
        log_warn("audit: cannot flush the store before the witness: %s", err.msg);
        return;
    }
    if (g->witness && store_witness_append(g->witness, &cp, &err) < 0)
        log_error("audit: %s (the checkpoint of record %" PRIu64 " is only in the store)", err.msg,
                  cp.seq);
    if (g->cm) {
        json_t *doc = store_ckpt_json(&cp);
        char *line = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
        if (kube_witness_put(g->cm, line, &err) < 0)
            log_warn("audit: %s", err.msg);
        free(line);
        json_decref(doc);
    }
    log_debug("audit: signed a checkpoint of record %" PRIu64, cp.seq);
    if (g->keep &&
        server__audit_retain(g->st, g->archive, g->keep, g->hold_unshipped, g->key, &err) < 0)
        log_error("audit: retention: %s", err.msg);
    mtx_lock(&g->mu);
    g->last = cp;
    g->have_last = 1;
    g->last_ms = now;
    mtx_unlock(&g->mu);
}

static int checkpoint_main(void *arg)
{
    struct server__audit *g = arg;
    double wait = g->every_seconds < 1.0 ? g->every_seconds : 1.0;
    struct timespec deadline;

    mtx_lock(&g->mu);
    while (!g->stop) {
        timespec_get(&deadline, TIME_UTC);
        double s = (double)deadline.tv_nsec / 1e9 + wait;
        deadline.tv_sec += (time_t)s;
        deadline.tv_nsec = (long)((s - (double)(time_t)s) * 1e9);
        while (!g->kicked && !g->stop && cnd_timedwait(&g->cv, &g->mu, &deadline) == thrd_success)
            ;
        if (g->stop)
            break;
        g->kicked = 0;
        mtx_unlock(&g->mu);
        tick(g, 0);
        mtx_lock(&g->mu);
    }
    mtx_unlock(&g->mu);
    return 0;
}

/* The background half of the start-up check: records 1..full_end, in batches. */
static int full_main(void *arg)
{
    struct server__audit *g = arg;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    uint64_t from = 0, end = g->full_end;
    enum full_state st = FULL_OK;
    int64_t t0 = clock_now_ms();

    while (from <= end) {
        MDB_txn *txn = NULL;
        uint64_t to = end - from >= FULL_BATCH ? from + FULL_BATCH - 1 : end;
        mtx_lock(&g->mu);
        int stop = g->stop;
        mtx_unlock(&g->mu);
        if (stop) {
            st = FULL_STOPPED;
            break;
        }
        int rc = store_txn_begin(g->st, STORE_READ, &txn, &err);
        if (rc == 0)
            rc = store_audit_verify_signed(txn, from, to, g->key, &v, &err);
        store_txn_abort(&txn);
        if (rc < 0) {
            log_warn("audit: the background check of the chain stopped: %s", err.msg);
            st = FULL_STOPPED;
            break;
        }
        mtx_lock(&g->mu);
        g->full_checked += v.checked;
        if (!v.ok)
            g->fullv = v;
        mtx_unlock(&g->mu);
        if (!v.ok) {
            st = FULL_BROKEN;
            go_read_only(g, &v);
            break;
        }
        from = (v.to > to ? v.to : to) + 1;
    }
    mtx_lock(&g->mu);
    g->full = st;
    uint64_t checked = g->full_checked;
    mtx_unlock(&g->mu);
    if (st == FULL_OK)
        log_info("audit: the whole chain to record %" PRIu64 " verified in the background (%" PRIu64
                 " records, %.1f s)",
                 end, checked, (double)(clock_now_ms() - t0) / 1000.0);
    return 0;
}

int server__audit_start(struct server__audit *g, struct store *st, struct api *api, struct err *err)
{
    g->st = st;
    g->api = api;
    g->last_ms = clock_now_ms();
    if (g->full == FULL_RUNNING) {
        if (thrd_create(&g->full_thread, full_main, g) != thrd_success)
            return err_set(err, ERR_INTERNAL, "cannot start the audit check's thread");
        g->have_full = 1;
    }
    if (!g->key || server__audit_read_only(g))
        return 0;
    if (thrd_create(&g->thread, checkpoint_main, g) != thrd_success)
        return err_set(err, ERR_INTERNAL, "cannot start the audit checkpoint thread");
    g->have_thread = 1;
    return 0;
}

void server__audit_kick(struct server__audit *g)
{
    mtx_lock(&g->mu);
    g->kicked = 1;
    cnd_signal(&g->cv);
    mtx_unlock(&g->mu);
}

void server__audit_stop(struct server__audit *g)
{
    if (!g || (!g->have_thread && !g->have_full))
        return;
    mtx_lock(&g->mu);
    g->stop = 1;
    cnd_signal(&g->cv);
    mtx_unlock(&g->mu);
    if (g->have_full)
        thrd_join(g->full_thread, NULL);
    g->have_full = 0;
    if (g->have_thread)
        thrd_join(g->thread, NULL);
    g->final = g->have_thread;
    g->have_thread = 0;
    g->api = NULL;
}

void server__audit_close(struct server__audit *g)
{
    if (!g)
        return;
    server__audit_stop(g);
    if (g->final)
        tick(g, 1); /* a clean stop leaves the head signed */
    store_audit_key_free(g->key);
    kube_witness_close(g->cm);
    free(g->witness);
    free(g->archive);
    free(g->read_only);
    cnd_destroy(&g->cv);
    mtx_destroy(&g->mu);
    free(g);
}
