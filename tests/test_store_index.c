/* test_store_index.c - the store's pod indexes: by node, by PodGroup (label or Volcano's
 * annotation), and pending (the model's one rule). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "model.h"
#include "store.h"
#include "store_util.h"

static char *dir;
static struct store *st;

/* A pod is in the PodGroup of its pod-group label or, without one, of Volcano's
 * scheduling.k8s.io/group-name annotation (model_pod_group_name): the index follows it. */
START_TEST(test_store_pod_index_volcano_group_annotation)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *a = store_util_pod("ns", "v1", NULL, NULL, NULL);
    json_t *b = store_util_pod("ns", "v2", NULL, "label", NULL); /* the label wins */
    for (int i = 0; i < 2; i++)
        json_object_set_new(json_object_get(i ? b : a, "metadata"), "annotations",
                            json_pack("{s:s}", "scheduling.k8s.io/group-name", "job"));
    store_util_put(txn, MODEL_POD, a);
    store_util_put(txn, MODEL_POD, b);
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_of_group(txn, "ns/job"), store_util_strings("ns/v1", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/label"), store_util_strings("ns/v2", NULL));
    store_txn_abort(&txn);
}
END_TEST

START_TEST(test_store_pod_index_transitions)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);

    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p1", NULL, "g", NULL));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p2", NULL, "g", "Pending"));
    store_util_put(txn, MODEL_POD, store_util_pod("other", "p3", NULL, "g", NULL));
    store_util_commit(&txn);

    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn),
                           store_util_strings("ns/p1", "ns/p2", "other/p3", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/g"),
                           store_util_strings("ns/p1", "ns/p2", NULL));
    store_util_assert_keys(store_util_of_group(txn, "other/g"),
                           store_util_strings("other/p3", NULL));
    store_util_assert_keys(store_util_on_node(txn, "n1"), store_util_strings(NULL));
    store_txn_abort(&txn);

    /* pending -> bound */
    txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p1", "n1", "g", "Running"));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p2", "n1", "g", NULL));
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn), store_util_strings("other/p3", NULL));
    store_util_assert_keys(store_util_on_node(txn, "n1"),
                           store_util_strings("ns/p1", "ns/p2", NULL));
    store_txn_abort(&txn);

    /* moved to another node, group changed; p3 terminating and failed */
    txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p2", "n2", "h", NULL));
    json_t *p3 = store_util_pod("other", "p3", NULL, "g", NULL);
    json_object_set_new(json_object_get(p3, "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    store_util_put(txn, MODEL_POD, p3);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p4", NULL, NULL, "Failed"));
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn), store_util_strings(NULL));
    store_util_assert_keys(store_util_on_node(txn, "n1"), store_util_strings("ns/p1", NULL));
    store_util_assert_keys(store_util_on_node(txn, "n2"), store_util_strings("ns/p2", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/g"), store_util_strings("ns/p1", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/h"), store_util_strings("ns/p2", NULL));
    store_txn_abort(&txn);

    /* deleted: every index entry goes */
    txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/p1", NULL, NULL), 0);
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/p2", NULL, NULL), 0);
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "other/p3", NULL, NULL), 0);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p5", NULL, NULL, NULL));
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn), store_util_strings("ns/p5", NULL));
    store_util_assert_keys(store_util_on_node(txn, "n1"), store_util_strings(NULL));
    store_util_assert_keys(store_util_on_node(txn, "n2"), store_util_strings(NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/g"), store_util_strings(NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/h"), store_util_strings(NULL));
    store_util_assert_keys(store_util_of_group(txn, "other/g"), store_util_strings(NULL));
    store_txn_abort(&txn);
}
END_TEST

/* The pending index holds exactly the pods model_pod_json_pending calls pending: a null
 * deletionTimestamp is no deletion, an empty nodeName no binding. */
START_TEST(test_store_pending_index_is_the_model_rule)
{
    /* in key order, as the index scan returns them */
    json_t *pods[] = {
        store_util_pod("ns", "bound", "n1", NULL, "Pending"),
        store_util_pod("ns", "deleting", NULL, NULL, NULL),
        store_util_pod("ns", "empty-node", "", NULL, "Pending"),
        store_util_pod("ns", "new", NULL, NULL, NULL),
        store_util_pod("ns", "null-deletion", NULL, NULL, NULL),
        store_util_pod("ns", "running", NULL, NULL, "Running"),
    };
    json_object_set_new(json_object_get(pods[1], "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    json_object_set_new(json_object_get(pods[4], "metadata"), "deletionTimestamp", json_null());
    json_t *want = json_array();
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        json_t *name = json_object_get(json_object_get(pods[i], "metadata"), "name");
        if (model_pod_json_pending(pods[i]))
            json_array_append_new(want, json_sprintf("ns/%s", json_string_value(name)));
        store_util_put(txn, MODEL_POD, pods[i]);
    }
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn),
                           store_util_strings("ns/empty-node", "ns/new", "ns/null-deletion", NULL));
    store_util_assert_keys(store_util_pending(txn), want);
    store_txn_abort(&txn);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_pod_index_transitions,
                            test_store_pending_index_is_the_model_rule,
                            test_store_pod_index_volcano_group_annotation, NULL};
    return check_run(store_util_suite("store_index", &dir, &st, tests));
}
