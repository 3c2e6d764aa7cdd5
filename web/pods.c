/* pods.c - GET /api/v1/pods?namespace=&node=&phase=, GET and DELETE /api/v1/pods/{ns}/{name}. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "model.h"
#include "store.h"

struct filter {
    const char *ns;
    const char *phase;
    MDB_txn *txn;
    json_t *items;
    struct err *err;
    struct api_page page; /* ?node= pages here; other lists in api__object_list */
};

static int keep(json_t *obj, void *ctx)
{
    struct filter *f = ctx;

    if (f->ns) {
        const char *ns =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
        if (!ns || strcmp(ns, f->ns))
            return 0;
    }
    if (f->phase) {
        const char *phase =
            json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
        if (strcmp(phase ? phase : "Pending", f->phase))
            return 0;
    }
    return 1;
}

static int add_bound(void *ctx, const char *key)
{
    struct filter *f = ctx;
    json_t *obj = NULL;

    if (f->page.after && strcmp(key, f->page.after) <= 0)
        return 0;
    int rc = store_get(f->txn, MODEL_POD, key, &obj, f->err);
    if (rc == ERR_NOT_FOUND)
        return 0;
    if (rc < 0)
        return rc;
    if (keep(obj, f)) {
        if (!api__page_take(&f->page, key))
            rc = 1; /* the page is full and another pod exists */
        else
            json_array_append(f->items, obj);
    }
    json_decref(obj);
    return rc;
}

/* node= goes through the pods-by-node index instead of scanning every pod. */
static void list_on_node(struct req *r, struct filter *f, const char *node)
{
    struct err err = ERR_INIT;
    int rc;

    if (api__page_or_reply(r, "Pod", &f->page) < 0) {
        api__page_release(&f->page);
        return;
    }
    f->items = json_array();
    f->err = &err;
    rc = store_txn_begin(r->api->st, STORE_READ, &f->txn, &err);
    if (rc == 0)
        rc = store_pods_on_node(f->txn, node, add_bound, f, &err);
    store_txn_abort(&f->txn);
    if (rc < 0) {
        json_decref(f->items);
        api__reply_error(r, &err);
    } else {
        json_t *list =
            json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "PodList", "items", f->items);
        if (f->page.on)
            json_object_set_new(list, "metadata", api__page_meta(&f->page));
        api__reply_json(r, 200, list);
    }
    api__page_release(&f->page);
}

void api__pods_list(struct req *r)
{
    char *ns = NULL, *node = NULL, *phase = NULL, *prefix = NULL;
    struct filter f = {0};

    if (api__query_str_or_reply(r, "namespace", &ns) < 0 ||
        api__query_str_or_reply(r, "node", &node) < 0 ||
        api__query_str_or_reply(r, "phase", &phase) < 0)
        goto out;
    static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
    size_t i = 0;
    while (phase && i < sizeof(phases) / sizeof(phases[0]) && strcmp(phase, phases[i]))
        i++;
    if (phase && i == sizeof(phases) / sizeof(phases[0])) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, "phase",
                 "query parameter 'phase': unknown pod phase '%s'; one of Pending, Running, "
                 "Succeeded, Failed, Unknown",
                 phase);
        api__reply_error(r, &err);
        goto out;
    }
    f.ns = ns;
    f.phase = phase;
    if (node) {
        list_on_node(r, &f, node);
        goto out;
    }
    prefix = ns ? xasprintf("%s/", ns) : NULL;
    api__object_list(r, MODEL_POD, prefix, keep, &f);
out:
    free(ns);
    free(node);
    free(phase);
    free(prefix);
}

void api__pod_get(struct req *r)
{
    char *key = api__ns_key(r);
    json_t *obj = api__object_or_reply(r, MODEL_POD, key);

    if (obj)
        api__reply_json(r, 200, obj);
    free(key);
}

void api__pod_delete(struct req *r)
{
    char *key = api__ns_key(r);

    api__object_delete(r, MODEL_POD, key);
    free(key);
}
