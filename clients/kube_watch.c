/*
 * kube_watch.c - one thread per resource: list (paginated) then watch (chunked
 * stream of newline-delimited JSON events), resume from the last
 * resourceVersion after a drop, relist on 410 Gone, backoff with jitter.
 *
 * The watcher only parses and queues; the writer applies. The in-memory resume
 * point (src->rv) advances as events are queued: the queue lives in the same
 * process, and the persisted resume point (written by the writer after it
 * applied) lags behind it, so a crash replays events, which is harmless since
 * applying an object is a replace and deleting a missing one is ignored.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_internal.h"
#include "log.h"

struct watch_ctx {
    struct kube_source *src;
    int gone;      /* ERROR event with code 410 */
    int malformed; /* a line that is not JSON */
    uint64_t lines;
    char error[256];
};

static void set_state(struct kube_source *src, enum kube_state st)
{
    pthread_mutex_lock(&src->k->mu);
    src->state = st;
    pthread_mutex_unlock(&src->k->mu);
}

/* In bind mode an unbound pod of another scheduler is not ours to mirror. */
static int foreign_pending(struct kube *k, struct kube_source *src, json_t *obj)
{
    if (!k->scheduler_name || src->kind != MODEL_POD)
        return 0;
    json_t *spec = json_object_get(obj, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *sn = json_string_value(json_object_get(spec, "schedulerName"));
    if (node && *node)
        return 0;
    return !sn || strcmp(sn, k->scheduler_name) != 0;
}

static struct kube_ev *ev_new(enum kube_op op, struct kube_source *src, const char *rv)
{
    struct kube_ev *ev = xcalloc(1, sizeof(*ev));
    ev->op = op;
    ev->src = src;
    if (rv)
        snprintf(ev->rv, sizeof(ev->rv), "%s", rv);
    return ev;
}

/* An APPLY event of obj (a reference is taken), validated here rather than by the writer,
 * which every event waits for. */
static struct kube_ev *apply_ev(struct kube_source *src, json_t *obj, const char *rv)
{
    struct kube_ev *ev = ev_new(KUBE_EV_APPLY, src, rv);
    struct model_doc doc = {.index = 1, .obj = obj};
    json_t *errors = json_array();
    if (model_validate(&doc, errors) > 0) {
        const char *msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
        ev->invalid = xstrdup(msg ? msg : "invalid object");
    }
    json_decref(errors);
    ev->obj = json_incref(obj);
    return ev;
}

static const char *obj_rv(json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* One list page's items into the queue; listed keys into keys. */
static void queue_items(struct kube_source *src, json_t *items, json_t *keys)
{
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        kube__normalize(src->kind, src->api_version, it);
        char *key = model_object_key(src->kind, it);
        if (!key || foreign_pending(src->k, src, it)) {
            free(key);
            continue;
        }
        json_object_set_new(keys, key, json_true());
        free(key);
        kube__enqueue(src->k, apply_ev(src, it, NULL));
    }
}

static int http_error(struct kube_source *src, const char *what, struct kube_resp *r,
                      struct err *err)
{
    json_t *doc = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
    const char *msg = json_string_value(json_object_get(doc, "message"));
    int code = r->status == 410 ? ERR_GONE : r->status == 404 ? ERR_NOT_FOUND : ERR_NETWORK;
    err_set(err, code, "%s '%s': HTTP %ld%s%s", what, src->resource, r->status, msg ? ": " : "",
            msg ? msg : "");
    json_decref(doc);
    return code;
}

static int do_list(struct kube_source *src, struct kube_http *h, struct err *err)
{
    struct kube *k = src->k;
    json_t *keys = json_object(), *doc = NULL;
    char *cont = NULL, *list_rv = NULL;
    struct kube_resp r = {0};
    int rc = 0;
    set_state(src, KUBE_LISTING);
    for (;;) {
        char *path;
        if (cont) {
            char *esc = curl_easy_escape(NULL, cont, 0);
            path = xasprintf("%s?limit=%d&continue=%s", src->path, k->opts.page_size, esc);
            curl_free(esc);
        } else {
            path = xasprintf("%s?limit=%d", src->path, k->opts.page_size);
        }
        rc = kube__http_request(h, "GET", path, NULL, NULL, 120000, &r, err);
        free(path);
        if (rc < 0)
            goto out;
        if (r.status == 410 && cont) { /* continue token expired: start over */
            free(cont);
            cont = NULL;
            json_object_clear(keys);
            continue;
        }
        if (r.status != 200) {
            rc = http_error(src, "list", &r, err);
            goto out;
        }
        json_decref(doc);
        json_error_t je;
        doc = model_json_load(r.body, r.len, &je); /* a page of 500 objects */
        json_t *items = json_object_get(doc, "items");
        json_t *md = json_object_get(doc, "metadata");
        const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
        if (!doc || !json_is_array(items) || !rv) {
            rc = err_set(err, ERR_INVALID, "list '%s': malformed response: %s", src->resource,
                         doc ? "no items or resourceVersion" : je.text);
            goto out;
        }
        queue_items(src, items, keys);
        if (!list_rv)
            list_rv = xstrdup(rv);
        const char *next = json_string_value(json_object_get(md, "continue"));
        free(cont);
        cont = next && *next ? xstrdup(next) : NULL;
        if (!cont)
            break;
    }
    struct kube_ev *ev = ev_new(KUBE_EV_SYNC, src, list_rv);
    ev->gen = src->list_gen;
    ev->obj = keys;
    keys = NULL;
    kube__enqueue(k, ev);
    pthread_mutex_lock(&k->mu);
    snprintf(src->rv, sizeof(src->rv), "%s", list_rv);
    src->relists++;
    pthread_mutex_unlock(&k->mu);
out:
    json_decref(keys);
    json_decref(doc);
    free(cont);
    free(list_rv);
    kube__resp_release(&r);
    return rc;
}

static int on_event(struct watch_ctx *w, json_t *evdoc)
{
    struct kube_source *src = w->src;
    struct kube *k = src->k;
    const char *type = json_string_value(json_object_get(evdoc, "type"));
    json_t *obj = json_object_get(evdoc, "object");
    if (!type || !json_is_object(obj)) {
        snprintf(w->error, sizeof(w->error), "watch '%s': event without type or object",
                 src->resource);
        return 1;
    }
    if (!strcmp(type, "ERROR")) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        if (code == 410) {
            w->gone = 1;
        } else {
            const char *m = json_string_value(json_object_get(obj, "message"));
            snprintf(w->error, sizeof(w->error), "watch '%s': error event %d: %s", src->resource,
                     (int)code, m ? m : "");
        }
        return 1;
    }
    const char *rv = obj_rv(obj);
    struct kube_ev *ev;
    if (!strcmp(type, "BOOKMARK")) {
        ev = ev_new(KUBE_EV_RV, src, rv);
    } else {
        kube__normalize(src->kind, src->api_version, obj);
        char *key = model_object_key(src->kind, obj);
        if (!key) {
            snprintf(w->error, sizeof(w->error), "watch '%s': object without name", src->resource);
            return 1;
        }
        int del = !strcmp(type, "DELETED") || foreign_pending(k, src, obj);
        ev = del ? ev_new(KUBE_EV_DELETE, src, rv) : apply_ev(src, obj, rv);
        if (del)
            ev->key = key;
        else
            free(key);
    }
    pthread_mutex_lock(&k->mu);
    if (rv)
        snprintf(src->rv, sizeof(src->rv), "%s", rv);
    if (ev->op != KUBE_EV_RV) {
        src->events++;
        src->last_event_ms = clock_now_ms();
    }
    pthread_mutex_unlock(&k->mu);
    kube__enqueue(k, ev);
    return 0;
}

static int line_cb(void *ctx, const char *line, size_t len)
{
    struct watch_ctx *w = ctx;
    json_error_t je;
    w->lines++;
    json_t *doc = model_json_load(line, len, &je);
    if (!doc) {
        w->malformed = 1;
        snprintf(w->error, sizeof(w->error), "watch '%s': malformed event: %s", w->src->resource,
                 je.text);
        return 1;
    }
    int rc = on_event(w, doc);
    json_decref(doc);
    return rc;
}

/* Returns 0 (stream ended, resume), ERR_GONE (relist), or an error; *progress set when
 * at least one line arrived (a healthy stream that dropped reconnects at once). */
static int do_watch(struct kube_source *src, struct kube_http *h, const char *rv, int *progress,
                    struct err *err)
{
    struct kube *k = src->k;
    struct watch_ctx w = {src, 0, 0, 0, ""};
    struct kube_resp r = {0};
    int aborted = 0;
    char *path = xasprintf("%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s"
                           "&timeoutSeconds=%d",
                           src->path, rv, k->opts.watch_timeout_s);
    set_state(src, KUBE_WATCHING);
    int rc = kube__http_stream(h, path, (k->opts.watch_timeout_s + 30) * 1000L, line_cb, &w, &r,
                               &aborted, err);
    free(path);
    *progress = w.lines > 0;
    if (w.gone)
        rc = err_set(err, ERR_GONE, "watch '%s': resourceVersion %s is too old", src->resource, rv);
    else if (aborted && w.error[0])
        rc = err_set(err, ERR_INVALID, "%s", w.error);
    else if (rc == 0 && r.status != 200)
        rc = http_error(src, "watch", &r, err);
    kube__resp_release(&r);
    return rc;
}

static int64_t jitter(int64_t ms)
{
    return ms / 2 + (ms > 1 ? random() % (ms / 2 + 1) : 0);
}

void *kube__watch_main(void *arg)
{
    struct kube_source *src = arg;
    struct kube *k = src->k;
    struct kube_http *h = kube__http_new(k->conn, &k->stop);
    int64_t backoff = 0;
    if (h) /* a new term's relist drops the stream at once */
        kube__http_abort_on(h, &src->relist_req);
    while (h && !k->stop) {
        struct err err = ERR_INIT;
        char rv[64];
        int progress = 0, rc;
        pthread_mutex_lock(&k->mu);
        if (src->relist_req) {
            src->relist_req = 0;
            src->rv[0] = '\0';
            src->list_gen = k->lease.relist_gen;
        }
        snprintf(rv, sizeof(rv), "%s", src->rv);
        pthread_mutex_unlock(&k->mu);
        rc = rv[0] ? do_watch(src, h, rv, &progress, &err) : do_list(src, h, &err);
        if (k->stop)
            break;
        if (src->relist_req)
            continue; /* aborted for a relist: not an error */
        if (rc == 0) {
            backoff = 0;
            continue;
        }
        if (rc == ERR_GONE) {
            log_info("kube: %s; relisting", err.msg);
            pthread_mutex_lock(&k->mu);
            src->rv[0] = '\0';
            k->c.relists++;
            pthread_mutex_unlock(&k->mu);
            continue;
        }
        if (rc == ERR_NOT_FOUND && !rv[0]) {
            pthread_mutex_lock(&k->mu);
            int first = !src->missing_logged;
            src->missing_logged = 1;
            src->state = KUBE_MISSING;
            pthread_mutex_unlock(&k->mu);
            if (first)
                log_warn("kube: resource '%s' is not served (CRD not installed?); skipping it",
                         src->resource);
            kube__sleep(k, k->opts.missing_retry_ms);
            continue;
        }
        kube__source_error(src, err.msg);
        if (progress && rc == ERR_NETWORK) {
            backoff = 0; /* a healthy stream dropped: resume at once */
            continue;
        }
        backoff = backoff ? backoff * 2 : k->opts.backoff_min_ms;
        if (backoff > k->opts.backoff_max_ms)
            backoff = k->opts.backoff_max_ms;
        set_state(src, KUBE_BACKOFF);
        kube__sleep(k, jitter(backoff));
    }
    kube__http_free(h);
    return NULL;
}
