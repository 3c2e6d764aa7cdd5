/*
 * test_api_page.c - list pagination (?limit= and ?continue=, as the Kubernetes API does it)
 * over HTTP on a real musterd: for every paged list, walking the pages at several limits
 * yields the unpaged list exactly, each page within its limit and only the last without
 * metadata.continue; a bad limit or token is a 400 naming the parameter; items created and
 * deleted between pages are seen at most once and nothing is seen twice; the scheduler's
 * read answers, kept between commits, show every change at the next read.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"

static struct musterd md;

static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static json_t *call(const char *method, const char *path, const char *body, long want)
{
    return api_util_call(&md, method, path, body, body ? api_util_yaml : NULL, want);
}

/* 7 nodes, 2 PodGroups in "a", 23 pods in "a" and "b" (two in each group). */
static void apply_cluster(void)
{
    char doc[512], *all = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&all, &len);
    for (int i = 0; i < 7; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n",
                i);
    for (int g = 0; g < 2; g++)
        fprintf(f,
                "---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                "metadata: {name: g%d, namespace: a}\nspec: {minMember: 2}\n",
                g);
    for (int i = 0; i < 23; i++) {
        const char *group = i < 4 ? (i < 2 ? "g0" : "g1") : NULL;
        snprintf(doc, sizeof(doc),
                 "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%02d\n  namespace: %s\n"
                 "%s%s%s"
                 "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n",
                 i, i % 3 ? "a" : "b", group ? "  labels: {pod-group.scheduling.sigs.k8s.io: " : "",
                 group ? group : "", group ? "}\n" : "");
        fputs(doc, f);
    }
    fclose(f);
    json_decref(call("POST", "/api/v1/manifests", all, 201));
    free(all);
    api_util_settle(&md, NULL);
}

/* The key an item is paged by (new): the job's id, "ns/name", or the name. */
static char *key_of(json_t *item)
{
    json_t *id = json_object_get(item, "id");
    if (id)
        return strdup(json_string_value(id));
    json_t *md_ = json_object_get(item, "metadata");
    const char *ns = json_string_value(json_object_get(md_, "namespace"));
    const char *name = json_string_value(json_object_get(md_, "name"));
    char *k = NULL;
    ck_assert_int_ge(asprintf(&k, "%s%s%s", ns ? ns : "", ns ? "/" : "", name), 0);
    return k;
}

/* The keys of path's unpaged list, in order (new array). */
static json_t *keys_of(const char *path)
{
    json_t *list = call("GET", path, NULL, 200), *keys = json_array();
    /* without limit: no continue (the jobs list's metadata says its resourceVersion) */
    ck_assert_msg(!json_object_get(json_object_get(list, "metadata"), "continue"),
                  "%s: continue without limit", path);
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        char *k = key_of(it);
        json_array_append_new(keys, json_string(k));
        free(k);
    }
    json_decref(list);
    return keys;
}

/* Walks path's pages of limit items; returns their keys in order (new array). */
static json_t *walk(const char *path, int limit)
{
    json_t *keys = json_array();
    char *tok = NULL;
    for (int pages = 0;; pages++) {
        char url[1024];
        ck_assert_int_lt(pages, 100);
        snprintf(url, sizeof(url), "%s%slimit=%d%s%s", path, strchr(path, '?') ? "&" : "?", limit,
                 tok ? "&continue=" : "", tok ? tok : "");
        json_t *page = call("GET", url, NULL, 200);
        json_t *items = json_object_get(page, "items");
        ck_assert_uint_le(json_array_size(items), (size_t)limit);
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            char *k = key_of(it);
            json_array_append_new(keys, json_string(k));
            free(k);
        }
        json_t *meta = json_object_get(page, "metadata");
        ck_assert_ptr_nonnull(meta);
        const char *next = json_string_value(json_object_get(meta, "continue"));
        free(tok);
        tok = next ? strdup(next) : NULL;
        if (tok) /* only the last page may be short */
            ck_assert_uint_eq(json_array_size(items), (size_t)limit);
        json_decref(page);
        if (!tok)
            break;
    }
    return keys;
}

START_TEST(test_api_page_pages_cover_every_item_once)
{
    apply_cluster();
    /* the node holding the most pods, for ?node= */
    json_t *nodes = call("GET", "/api/v1/nodes", NULL, 200);
    const char *busiest = NULL;
    size_t most = 0, i;
    json_t *n;
    json_array_foreach(json_object_get(nodes, "items"), i, n)
    {
        size_t c = json_array_size(json_object_get(n, "pods"));
        if (c >= most)
            most = c,
            busiest = json_string_value(json_object_get(json_object_get(n, "metadata"), "name"));
    }
    ck_assert_uint_ge(most, 2);
    char on_node[128];
    snprintf(on_node, sizeof(on_node), "/api/v1/pods?node=%s", busiest);
    const char *paths[] = {"/api/v1/pods",
                           "/api/v1/pods?namespace=a",
                           on_node,
                           "/api/v1/pods?phase=Pending",
                           "/api/v1/nodes",
                           "/api/v1/podgroups",
                           "/api/v1/jobs",
                           "/api/v1/jobs?state=Scheduled",
                           "/api/v1/poddisruptionbudgets"};
    const int limits[] = {1, 2, 3, 7, 100};
    for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
        json_t *all = keys_of(paths[p]);
        if (p < 4 || p == 6)
            ck_assert_uint_ge(json_array_size(all), 2);
        for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
            json_t *paged = walk(paths[p], limits[l]);
            ck_assert_msg(json_equal(all, paged), "%s limit %d: pages differ from the list",
                          paths[p], limits[l]);
            json_decref(paged);
        }
        json_decref(all);
    }
    json_decref(nodes);
}
END_TEST

/* path's items, whole (new array): every page of limit items joined, or (limit 0) the
 * unpaged list. */
static json_t *items_of(const char *path, int limit)
{
    json_t *all = json_array();
    char *tok = NULL;
    do {
        char url[1024];
        if (limit)
            snprintf(url, sizeof(url), "%s%slimit=%d%s%s", path, strchr(path, '?') ? "&" : "?",
                     limit, tok ? "&continue=" : "", tok ? tok : "");
        else
            snprintf(url, sizeof(url), "%s", path);
        json_t *page = call("GET", url, NULL, 200);
        json_array_extend(all, json_object_get(page, "items"));
        const char *next =
            json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
        free(tok);
        tok = next ? strdup(next) : NULL;
        json_decref(page);
    } while (tok);
    return all;
}

/* A whole list is read on several threads (web/objects.c, store_each_par), a page on one:
 * 5,000 pods over several of the parallel reader's chunks, most bound (their binding
 * records applied), the rest pending, give the same items, whole and in the same order,
 * either way, and so does a filter. */
START_TEST(test_api_page_whole_list_of_many_equals_its_pages)
{
    char *all = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&all, &len);
    for (int i = 0; i < 40; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%02d}\n"
                "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '110'}}\n",
                i);
    for (int i = 0; i < 5000; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%04d, namespace: %s}\n"
                "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n",
                i, i % 2 ? "a" : "b");
    fclose(f);
    json_decref(call("POST", "/api/v1/manifests", all, 201));
    free(all);
    api_util_settle(&md, NULL);
    const char *paths[] = {"/api/v1/pods", "/api/v1/pods?namespace=a"};
    for (size_t p = 0; p < 2; p++) {
        json_t *whole = items_of(paths[p], 0), *paged = items_of(paths[p], 1000);
        ck_assert_uint_eq(json_array_size(whole), p ? 2500 : 5000);
        size_t bound = 0, i;
        json_t *it;
        json_array_foreach(whole, i, it)
        {
            bound += json_object_get(json_object_get(it, "spec"), "nodeName") != NULL;
        }
        if (!p) /* 40 nodes of 110 pods: the rest pending */
            ck_assert_uint_eq(bound, 4400);
        ck_assert_msg(json_equal(whole, paged), "%s: the whole list differs from its pages",
                      paths[p]);
        json_decref(whole);
        json_decref(paged);
    }
}
END_TEST

/* A 400 whose message names what; nothing else is answered. */
static void bad(const char *path, const char *what)
{
    json_t *j = call("GET", path, NULL, 400);
    const char *msg = api_util_err_msg(j);
    ck_assert_msg(msg && strstr(msg, what), "%s: '%s' lacks '%s'", path, msg ? msg : "(none)",
                  what);
    ck_assert_str_eq(api_util_err_code(j), "Invalid");
    json_decref(j);
}

START_TEST(test_api_page_bad_limit_and_continue_are_400)
{
    apply_cluster();
    bad("/api/v1/pods?limit=0", "'limit'");
    bad("/api/v1/pods?limit=-1", "'limit'");
    bad("/api/v1/pods?limit=ten", "'limit'");
    bad("/api/v1/jobs?limit=10001", "between 1 and 10000");
    bad("/api/v1/nodes?limit=", "'limit'");
    bad("/api/v1/pods?limit=2&continue=%21%21notatoken", "'continue'");
    bad("/api/v1/pods?continue=Zm9v", "is not a continue token");
    /* a token of the pod list given to the node list */
    json_t *page = call("GET", "/api/v1/pods?limit=2", NULL, 200);
    const char *tok =
        json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
    ck_assert_ptr_nonnull(tok);
    char url[512];
    snprintf(url, sizeof(url), "/api/v1/nodes?limit=2&continue=%s", tok);
    bad(url, "another list");
    snprintf(url, sizeof(url), "/api/v1/jobs?continue=%s", tok);
    bad(url, "another list");
    /* the largest limit is accepted; continue without limit is the rest of the list */
    json_decref(call("GET", "/api/v1/pods?limit=10000", NULL, 200));
    snprintf(url, sizeof(url), "/api/v1/pods?continue=%s", tok);
    json_t *rest = call("GET", url, NULL, 200);
    ck_assert_uint_eq(json_array_size(json_object_get(rest, "items")), 21);
    ck_assert_ptr_null(json_object_get(json_object_get(rest, "metadata"), "continue"));
    json_decref(rest);
    json_decref(page);
}
END_TEST

static int has(json_t *keys, const char *k)
{
    size_t i;
    json_t *v;
    json_array_foreach(keys, i, v) if (!strcmp(json_string_value(v), k)) return 1;
    return 0;
}

START_TEST(test_api_page_items_changing_between_pages)
{
    apply_cluster();
    /* first page of pods in "a": a/p01, a/p02, a/p04, a/p05 */
    json_t *page = call("GET", "/api/v1/pods?namespace=a&limit=4", NULL, 200);
    json_t *first = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(page, "items"), i, it)
    {
        char *k = key_of(it);
        json_array_append_new(first, json_string(k));
        free(k);
    }
    ck_assert(has(first, "a/p05"));
    char *tok =
        strdup(json_string_value(json_object_get(json_object_get(page, "metadata"), "continue")));
    json_decref(page);
    /* meanwhile: one before the cursor and one after it created, one after it deleted */
    json_decref(call("POST", "/api/v1/manifests",
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: p00x, namespace: a}\n"
                     "spec: {containers: [{name: c, image: x}]}\n---\n"
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: p99, namespace: a}\n"
                     "spec: {containers: [{name: c, image: x}]}\n",
                     201));
    json_decref(call("DELETE", "/api/v1/pods/a/p07", NULL, 200));
    json_t *rest = json_array();
    while (tok) {
        char url[512];
        snprintf(url, sizeof(url), "/api/v1/pods?namespace=a&limit=4&continue=%s", tok);
        free(tok);
        tok = NULL;
        page = call("GET", url, NULL, 200);
        json_array_foreach(json_object_get(page, "items"), i, it)
        {
            char *k = key_of(it);
            ck_assert_msg(!has(first, k) && !has(rest, k), "'%s' seen twice", k);
            json_array_append_new(rest, json_string(k));
            free(k);
        }
        const char *next =
            json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
        tok = next ? strdup(next) : NULL;
        json_decref(page);
    }
    ck_assert(!has(rest, "a/p00x")); /* created before the cursor: not on a later page */
    ck_assert(has(rest, "a/p99"));   /* created after it: seen */
    ck_assert(!has(rest, "a/p07"));  /* deleted: gone */
    ck_assert(has(rest, "a/p08"));
    ck_assert_uint_eq(json_array_size(first) + json_array_size(rest), 15 - 1 + 1);
    json_decref(first);
    json_decref(rest);
}
END_TEST

/* The scheduler's read answers are kept until the store commits again (readcache.c): a
 * repeated read answers the same, and every change shows in the next read. */
START_TEST(test_api_page_reads_follow_changes)
{
    apply_cluster();
    const char *paths[] = {"/api/v1/jobs?limit=100", "/api/v1/jobs", "/api/v1/topology",
                           "/api/v1/jobs/b/p06/why", "/api/v1/jobs/b/p06"};
    json_t *before[5];
    for (size_t i = 0; i < 5; i++) {
        before[i] = call("GET", paths[i], NULL, 200);
        json_t *again = call("GET", paths[i], NULL, 200);
        ck_assert_msg(json_equal(before[i], again), "%s: a repeated read differs", paths[i]);
        json_decref(again);
    }
    json_decref(call("POST", "/api/v1/manifests",
                     "apiVersion: v1\nkind: Node\nmetadata: {name: n9}\n"
                     "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\n"
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: b}\n"
                     "spec: {containers: [{name: c, image: x}]}\n",
                     201));
    json_decref(call("DELETE", "/api/v1/pods/b/p06", NULL, 200));
    for (size_t i = 0; i < 3; i++) {
        json_t *now = call("GET", paths[i], NULL, 200);
        ck_assert_msg(!json_equal(before[i], now), "%s: the change does not show", paths[i]);
        json_decref(now);
    }
    json_t *list = call("GET", "/api/v1/jobs?limit=100", NULL, 200), *it;
    int found_new = 0, found_old = 0;
    size_t i;
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        const char *id = json_string_value(json_object_get(it, "id"));
        found_new |= !strcmp(id, "b/new");
        found_old |= !strcmp(id, "b/p06");
    }
    ck_assert(found_new && !found_old);
    json_decref(list);
    json_decref(call("GET", "/api/v1/jobs/b/p06/why", NULL, 404));
    json_decref(call("GET", "/api/v1/jobs/b/p06", NULL, 404));
    json_decref(call("GET", "/api/v1/jobs/b/new/why", NULL, 200));
    for (size_t k = 0; k < 5; k++)
        json_decref(before[k]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_page");
    TCase *tc = tcase_create("page");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_page_pages_cover_every_item_once);
    tcase_add_test(tc, test_api_page_whole_list_of_many_equals_its_pages);
    tcase_add_test(tc, test_api_page_bad_limit_and_continue_are_400);
    tcase_add_test(tc, test_api_page_items_changing_between_pages);
    tcase_add_test(tc, test_api_page_reads_follow_changes);
    suite_add_tcase(s, tc);
    return check_run(s);
}
