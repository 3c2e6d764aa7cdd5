/*
 * test_apply_prep.c - a big manifest's documents, made by a second thread ahead of the
 * transaction's pass (scheduler/apply_prep.c, apply.h), apply as a small manifest's do: the same
 * stored objects and resourceVersions, audit records, reply lines and view, for a
 * manifest whose classes, gangs, topology keys and repeated names all depend on the
 * documents around them; a refusal names the same document in the same words and stores
 * nothing; objects that exist are applied by the pass itself; as the Kubernetes mirror
 * applies, in a store whose map must grow, and in a what-if.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "check_run.h"
#include "model.h"
#include "sched_util.h"
#include "sched_whatif.h"
#include "store.h"
#include "store_util.h"

#define NODES 100
#define DOCS (2 * APPLY_PREP_SPLIT + 500) /* prepared: far more than the split */
#define CLASS_AT 150                      /* the PriorityClass, named by pods before it */
#define CHUNK 1000                        /* the small manifests: each below the split */
#define NOW 5000

#define DUP_SAME (DOCS - 2)    /* names pod p-201 again, unchanged */
#define DUP_CHANGED (DOCS - 1) /* names pod p-202 again, with a label more */

/* The kind of document i: nodes first, one PriorityClass (named by pods before and after
 * it), a PodGroup before every three gang members, and pods. */
static enum model_kind kind_of(int i)
{
    if (i < NODES)
        return MODEL_NODE;
    if (i == CLASS_AT)
        return MODEL_PRIORITYCLASS;
    if (i < DUP_SAME && i % 50 == 5)
        return MODEL_PODGROUP;
    return MODEL_POD;
}

/* Document i of the manifest, as YAML (new). */
static char *doc(int i)
{
    if (kind_of(i) == MODEL_NODE)
        return xasprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: n-%03d\n  labels:\n"
                         "    rack: r%d\nstatus:\n  allocatable: {cpu: \"32\", memory: 64Gi}\n",
                         i, i % 10);
    if (kind_of(i) == MODEL_PRIORITYCLASS)
        return xasprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n"
                         "  name: high\nvalue: 1000\n");
    if (kind_of(i) == MODEL_PODGROUP)
        return xasprintf("apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n"
                         "  name: g-%d\n  namespace: team\nspec:\n  minMember: 3\n",
                         i / 50);
    int p = i == DUP_SAME ? 201 : i == DUP_CHANGED ? 202 : i;
    char group[96] = "";
    if (p % 50 > 5 && p % 50 < 9) /* the three members of the PodGroup before them */
        snprintf(group, sizeof(group), "    pod-group.scheduling.sigs.k8s.io: g-%d\n", p / 50);
    const char *klass = p % 13 == 0 || p == NODES ? "  priorityClassName: high\n" : "";
    const char *anti =
        p % 11 == 0 ? "  affinity:\n    podAntiAffinity:\n"
                      "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                      "      - labelSelector: {matchLabels: {app: a0}}\n        topologyKey: rack\n"
                    : "";
    return xasprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-%d\n  namespace: team\n"
                     "  labels:\n    app: a%d\n%s%sspec:\n%s%s  containers:\n  - name: c\n"
                     "    image: i\n    resources: {requests: {cpu: 100m, memory: 100Mi}}\n",
                     p, p % 3, i == DUP_CHANGED ? "    changed: \"yes\"\n" : "", group, klass,
                     anti);
}

/* Documents [from, to) as one YAML stream (new). */
static char *stream(int from, int to)
{
    size_t cap = 1024, len = 0;
    char *s = xcalloc(cap, 1);
    for (int i = from; i < to; i++) {
        char *d = doc(i);
        size_t n = strlen(d);
        if (len + n + 8 > cap) {
            cap = 2 * (len + n + 8);
            s = xrealloc(s, cap);
        }
        len += (size_t)sprintf(s + len, "%s%s", i > from ? "---\n" : "", d);
        free(d);
    }
    return s;
}

/* m (zeroed) as the YAML y parses, validated as the API validates (fields checked) unless
 * mirrored; fails the test on any problem. */
static void manifest_of(const char *y, int mirrored, struct model_manifest *m)
{
    struct err err = ERR_INIT;
    json_t *errors = json_array();
    ck_assert_msg(model_manifest_parse(y, strlen(y), MODEL_FMT_AUTO, m, &err) == 0, "%s", err.msg);
    int bad = mirrored ? 0 : model_validate_all(m, y, strlen(y), MODEL_FIELDS_STRICT, errors, NULL);
    if (bad) {
        char *e = json_dumps(json_array_get(errors, 0), 0);
        ck_abort_msg("%d problems: %s", bad, e);
    }
    json_decref(errors);
}

/* Applies documents [from, to) as the API does (validated, fields checked), or when
 * mirrored as the mirror does (sched_apply validates them): the reply's lines, their
 * document numbers moved by from (new), or NULL with *err set. */
static json_t *apply_as(struct sched_util *u, int from, int to, int mirrored, struct err *err)
{
    char *y = stream(from, to);
    struct model_manifest m = {0};
    json_t *results = NULL;
    manifest_of(y, mirrored, &m);
    ck_assert_uint_eq(m.n, (size_t)(to - from));
    if (sched_apply(u->s, &m, NOW, &results, err) == 0) {
        size_t i;
        json_t *r;
        json_array_foreach(results, i, r)
        {
            json_int_t d = json_integer_value(json_object_get(r, "document"));
            json_object_set_new(r, "document", json_integer(d + from));
        }
    }
    model_manifest_free(&m);
    free(y);
    return results;
}

static json_t *apply_range(struct sched_util *u, int from, int to, struct err *err)
{
    return apply_as(u, from, to, 0, err);
}

/* The whole manifest in small manifests: the reply's lines of all (new); *first (new)
 * holds, for each audit record, the number of the first document of its manifest. */
static json_t *apply_small(struct sched_util *u, int mirrored, json_t **first)
{
    struct err err = ERR_INIT;
    json_t *all = json_array();
    *first = json_array();
    for (int from = 0; from < DOCS; from += CHUNK) {
        json_t *r = apply_as(u, from, from + CHUNK < DOCS ? from + CHUNK : DOCS, mirrored, &err);
        ck_assert_msg(r != NULL, "%s", err.msg);
        json_array_extend(all, r);
        json_decref(r);
        json_t *recs = sched_util_audit(u);
        while (json_array_size(*first) < json_array_size(recs))
            json_array_append_new(*first, json_integer(from));
        json_decref(recs);
    }
    return all;
}

static int collect(void *ctx, const char *key, json_t *obj)
{
    json_t *o = json_deep_copy(obj);
    json_object_del(json_object_get(o, "metadata"), "uid"); /* random */
    char *text = store_json_text(o, 0);
    json_object_set_new(ctx, key, json_string(text));
    free(text);
    json_decref(o);
    return 0;
}

/* Every stored object's text (its members in the stored order), by kind and key, without
 * uids (new). */
static json_t *stored(struct sched_util *u)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    json_t *all = json_object();
    ck_assert_int_eq(store_txn_begin(u->st, STORE_READ, &txn, &err), 0);
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        json_t *of = json_object();
        ck_assert_int_eq(store_each(txn, (enum model_kind)k, NULL, collect, of, &err), 0);
        json_object_set_new(all, model_kind_name((enum model_kind)k), of);
    }
    store_txn_abort(&txn);
    return all;
}

/* The audit records without what differs between two stores' histories (seq, ts, hash),
 * each "document" moved by first's number for it (NULL: none), new. */
static json_t *records(struct sched_util *u, json_t *first)
{
    json_t *all = sched_util_audit(u), *rec;
    size_t i;
    json_array_foreach(all, i, rec)
    {
        json_object_del(rec, "seq");
        json_object_del(rec, "ts");
        json_object_del(rec, "hash");
        json_int_t d = json_integer_value(json_object_get(rec, "document"));
        if (first && json_object_get(rec, "document"))
            json_object_set_new(rec, "document",
                                json_integer(d + json_integer_value(json_array_get(first, i))));
    }
    return all;
}

/* No object of any kind is stored in u's store. */
static void assert_nothing_stored(struct sched_util *u, const char *by)
{
    json_t *all = stored(u), *of;
    const char *kind;
    json_object_foreach(all, kind, of)
        ck_assert_msg(json_object_size(of) == 0, "%s objects stored %s", kind, by);
    json_decref(all);
}

static json_t *jobs(struct sched_util *u)
{
    struct err err = ERR_INIT;
    json_t *out = NULL;
    ck_assert_msg(sched_jobs(u->s, NULL, &out, &err) == 0, "%s", err.msg);
    return out;
}

/* The scheduler's muster_apply_prepared_total. */
static long prepared(struct sched_util *u)
{
    return sched_util_metric(u, "muster_apply_prepared_total");
}

static const char *action_of(json_t *results, size_t i)
{
    return json_string_value(json_object_get(json_array_get(results, i), "action"));
}

static void assert_same(json_t *a, json_t *b, const char *what)
{
    if (json_equal(a, b))
        return;
    char *x = json_dumps(a, JSON_SORT_KEYS), *y = json_dumps(b, JSON_SORT_KEYS);
    size_t at = 0;
    while (x[at] && x[at] == y[at])
        at++;
    ck_abort_msg("%s differ at byte %zu:\n  big   ...%.300s\n  small ...%.300s", what, at,
                 x + (at > 100 ? at - 100 : 0), y + (at > 100 ? at - 100 : 0));
}

/* The manifest applied whole and in small manifests, by the API (mirrored 0) or as the
 * Kubernetes mirror applies (mirrored 1: admitted by the API server, validated by
 * sched_apply itself). */
static void compare_whole_and_small(int mirrored)
{
    struct sched_util big, small;
    struct err err = ERR_INIT;
    struct sched_options opts = {.mirrored = mirrored};
    sched_util_open(&big, &opts);
    sched_util_open(&small, &opts);
    json_t *rb = apply_as(&big, 0, DOCS, mirrored, &err);
    ck_assert_msg(rb != NULL, "%s", err.msg);
    json_t *first = NULL, *rs = apply_small(&small, mirrored, &first);
    /* every object the big one created was prepared; none of the small ones' */
    ck_assert_int_eq(prepared(&big), DOCS - 1 - 2); /* not the class, nor the repetitions */
    ck_assert_int_eq(prepared(&small), 0);
    assert_same(rb, rs, "the replies");
    /* the repeated names: the same pod unchanged, then changed */
    ck_assert_str_eq(action_of(rb, DUP_SAME), "unchanged");
    ck_assert_str_eq(action_of(rb, DUP_CHANGED), "configured");
    /* the class applied first: a pod before it has its priority */
    json_t *early = sched_util_pod(&big, "team/p-100");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(early, "spec"), "priority")), 1000);
    json_decref(early);
    json_t *sb = stored(&big), *ss = stored(&small);
    assert_same(sb, ss, "the stored objects");
    size_t want[MODEL_KIND_COUNT] = {0};
    for (int i = 0; i < DOCS; i++)
        want[kind_of(i)] += i != DUP_SAME && i != DUP_CHANGED;
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        ck_assert_uint_eq(json_object_size(json_object_get(sb, model_kind_name(k))), want[k]);
    json_t *ab = records(&big, NULL), *as = records(&small, first);
    assert_same(ab, as, "the audit records");
    json_t *jb = jobs(&big), *js = jobs(&small);
    assert_same(jb, js, "the views' jobs");
    sched_util_reopen(&big); /* the view rebuilt from the store is the live one */
    json_t *again = jobs(&big);
    assert_same(again, jb, "the jobs rebuilt from the store");
    json_decref(again);
    json_decref(sched_util_cycle(&big, NOW + 1000));
    json_decref(sched_util_cycle(&small, NOW + 1000));
    json_decref(jb);
    json_decref(js);
    jb = jobs(&big);
    js = jobs(&small);
    assert_same(jb, js, "the jobs after a cycle");
    json_decref(jb);
    json_decref(js);
    json_decref(ab);
    json_decref(as);
    json_decref(first);
    json_decref(sb);
    json_decref(ss);
    json_decref(rb);
    json_decref(rs);
    sched_util_close(&big);
    sched_util_close(&small);
}

START_TEST(test_apply_prep_as_small_manifests)
{
    compare_whole_and_small(0);
}
END_TEST

START_TEST(test_apply_prep_as_small_manifests_mirrored)
{
    compare_whole_and_small(1);
}
END_TEST

/* Objects that exist are not prepared: applied again, every document is unchanged; applied
 * after a part of it, that part is unchanged and the rest created. */
START_TEST(test_apply_prep_existing_objects)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    json_decref(apply_range(&u, 0, CHUNK, &err));
    json_t *r = apply_range(&u, 0, DOCS, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_int_eq(prepared(&u), DOCS - CHUNK - 2); /* the ones it created */
    size_t i;
    json_t *line;
    json_array_foreach(r, i, line)
    {
        const char *action = action_of(r, i);
        const char *want = i < CHUNK || i == DUP_SAME ? "unchanged"
                           : i == DUP_CHANGED         ? "configured"
                                                      : "created";
        ck_assert_msg(!strcmp(action, want), "document %zu: %s, not %s", i, action, want);
    }
    json_decref(r);
    r = apply_range(&u, 0, DOCS, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    json_array_foreach(r, i, line) /* p-202 loses the label its repetition gave it */
        ck_assert_str_eq(action_of(r, i),
                         i == 202 || i == DUP_CHANGED ? "configured" : "unchanged");
    ck_assert_int_eq(prepared(&u), DOCS - CHUNK - 2); /* none prepared: they all exist */
    json_decref(r);
    sched_util_close(&u);
}
END_TEST

/* A document the admission refuses, deep in a big manifest: the error the pass gives for
 * it, and nothing stored. */
START_TEST(test_apply_prep_refusal_names_the_document)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    char *y = stream(0, DOCS);
    char *bad = strstr(y, "name: p-3001\n");
    ck_assert_ptr_nonnull(bad);
    char *spec = strstr(bad, "spec:\n");
    /* a class that does not exist */
    char *with = xasprintf("%.*sspec:\n  priorityClassName: nope\n%s", (int)(spec - y), y,
                           spec + strlen("spec:\n"));
    struct model_manifest m = {0};
    json_t *results = NULL;
    manifest_of(with, 0, &m);
    ck_assert_int_eq(sched_apply(u.s, &m, NOW, &results, &err), ERR_INVALID);
    /* documents count from 1 */
    ck_assert_str_eq(err.msg, "document 3002 (Pod team/p-3001): spec.priorityClassName: no "
                              "PriorityClass with name 'nope' was found");
    assert_nothing_stored(&u, "by a refused apply");
    json_t *j = jobs(&u);
    ck_assert_uint_eq(json_array_size(j), 0);
    json_decref(j);
    model_manifest_free(&m);
    free(with);
    free(y);
    sched_util_close(&u);
}
END_TEST

/* A store whose map is too small for the manifest: the transaction is run again after the
 * map grows (store_write), each time with its thread ahead, and ends as in a big enough
 * store; the prepared objects are counted once. */
START_TEST(test_apply_prep_small_map_retries)
{
    struct sched_util big, tiny;
    struct err err = ERR_INIT;
    sched_util_open(&big, NULL);
    memset(&tiny, 0, sizeof(tiny));
    tiny.dir = store_util_tmpdir();
    tiny.st = store_util_open(tiny.dir, 1 << 20, STORE_SYNC_NONE);
    ck_assert_msg(sched_open(tiny.st, &tiny.opts, &tiny.s, &err) == 0, "%s", err.msg);
    json_t *rb = apply_range(&big, 0, DOCS, &err), *rt = apply_range(&tiny, 0, DOCS, &err);
    ck_assert_msg(rt != NULL, "%s", err.msg);
    assert_same(rt, rb, "the replies");
    json_t *sb = stored(&big), *st = stored(&tiny);
    assert_same(st, sb, "the stored objects");
    json_t *ab = records(&big, NULL), *at = records(&tiny, NULL);
    assert_same(at, ab, "the audit records");
    ck_assert_int_eq(prepared(&tiny), DOCS - 1 - 2);
    struct store_stats stats;
    ck_assert_int_eq(store_stats(tiny.st, &stats, &err), 0);
    ck_assert_uint_gt(stats.map_size, 1 << 20); /* it grew: the transaction ran again */
    json_t *jb = jobs(&big), *jt = jobs(&tiny);
    assert_same(jt, jb, "the views' jobs");
    json_decref(jb);
    json_decref(jt);
    json_decref(ab);
    json_decref(at);
    json_decref(sb);
    json_decref(st);
    json_decref(rb);
    json_decref(rt);
    sched_util_close(&big);
    sched_util_close(&tiny);
}
END_TEST

/* u's view is the one rebuilt from its store, and holds pods pods. */
static void assert_view_is_store(struct sched_util *u, size_t pods, const char *when)
{
    struct err err = ERR_INIT;
    json_t *live = sched_view_dump(u->s), *rebuilt = NULL, *p = json_object_get(live, "pods");
    ck_assert_msg(sched_view_dump_store(u->s, &rebuilt, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(json_object_size(p) + json_array_size(p), pods);
    assert_same(live, rebuilt, when);
    json_decref(live);
    json_decref(rebuilt);
}

/* The view takes a big manifest beside its commit (staged.h). A commit that fails then has
 * the view rebuilt from the store: it holds none of the manifest. One that fails with
 * ERR_MAP_FULL is run again (store_write) on the rebuilt view and ends as in a store whose
 * commits succeed. */
START_TEST(test_apply_prep_failed_commit_rebuilds_view)
{
    struct sched_util ok, failing;
    struct err err = ERR_INIT;
    sched_util_open(&ok, NULL);
    sched_util_open(&failing, NULL);
    store_test_fail_commits(failing.st, 1, ERR_STORE);
    ck_assert_ptr_null(apply_range(&failing, 0, DOCS, &err));
    ck_assert_int_eq(err.code, ERR_STORE);
    assert_nothing_stored(&failing, "by a failed commit");
    assert_view_is_store(&failing, 0, "the views after the failed apply");

    store_test_fail_commits(failing.st, 1, ERR_MAP_FULL);
    json_t *ro = apply_range(&ok, 0, DOCS, &err), *rf = apply_range(&failing, 0, DOCS, &err);
    ck_assert_msg(rf != NULL, "%s", err.msg);
    assert_same(rf, ro, "the replies");
    json_t *so = stored(&ok), *sf = stored(&failing);
    assert_same(sf, so, "the stored objects");
    json_t *ao = records(&ok, NULL), *af = records(&failing, NULL);
    assert_same(af, ao, "the audit records");
    json_t *jo = jobs(&ok), *jf = jobs(&failing);
    assert_same(jf, jo, "the views' jobs");
    size_t pods = 0;
    for (int i = 0; i < DOCS; i++)
        pods += kind_of(i) == MODEL_POD && i != DUP_SAME && i != DUP_CHANGED;
    assert_view_is_store(&failing, pods, "the views after the apply run again");
    assert_view_is_store(&ok, pods, "the views after the apply");
    json_decref(jo);
    json_decref(jf);
    json_decref(ao);
    json_decref(af);
    json_decref(so);
    json_decref(sf);
    json_decref(ro);
    json_decref(rf);
    sched_util_close(&ok);
    sched_util_close(&failing);
}
END_TEST

/* A what-if of the whole manifest (a dry session, the thread ahead in it too) lists the
 * changes its apply makes and writes nothing. */
START_TEST(test_apply_prep_whatif)
{
    struct sched_util u, real;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    sched_util_open(&real, NULL);
    char *y = stream(0, DOCS);
    struct model_manifest m = {0};
    json_t *out = NULL;
    manifest_of(y, 0, &m);
    struct sched_whatif in = {&m, NULL, 0, NULL, 0};
    ck_assert_msg(sched_whatif(u.s, &in, NOW, &out, &err) == 0, "%s", err.msg);
    json_t *r = apply_range(&real, 0, DOCS, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    assert_same(json_object_get(out, "changes"), r, "the what-if's changes");
    assert_nothing_stored(&u, "by a what-if");
    json_decref(r);
    json_decref(out);
    model_manifest_free(&m);
    free(y);
    sched_util_close(&u);
    sched_util_close(&real);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_apply_prep_as_small_manifests,
                            test_apply_prep_failed_commit_rebuilds_view,
                            test_apply_prep_as_small_manifests_mirrored,
                            test_apply_prep_existing_objects,
                            test_apply_prep_refusal_names_the_document,
                            test_apply_prep_small_map_retries,
                            test_apply_prep_whatif,
                            NULL};
    return check_run(check_suite("apply_prep", NULL, NULL, tests));
}
