/*
 * test_queue_model.c - Queue objects and Volcano's PodGroups as objects: one document's
 * validation (the field named), the decoded views, the queue tree admitted at apply
 * (nothing written on a refusal) and the rules of deleting a queue.
 *
 * Upstream (volcano-sh/volcano, volcano-sh/apis) named in each test as "source: ...".
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "model.h"
#include "sched_util.h"
#include "check_run.h"

/* ---- one document ---- */

/* Validates yaml (one or more documents) in mode; the problems (new array). */
static json_t *problems(const char *yaml, enum model_fields mode)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    json_t *errors = json_array();
    ck_assert_msg(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_AUTO, &m, &err) == 0, "%s",
                  err.msg);
    model_validate_all(&m, yaml, strlen(yaml), mode, errors, NULL);
    model_manifest_free(&m);
    return errors;
}

/* yaml has exactly one problem, at field, whose message contains what. */
static void refused(const char *yaml, const char *field, const char *what)
{
    json_t *errs = problems(yaml, MODEL_FIELDS_STRICT);
    const char *msg = json_string_value(json_object_get(json_array_get(errs, 0), "message"));
    ck_assert_msg(json_array_size(errs) == 1, "want one problem at %s, got %zu (first: %s)", field,
                  json_array_size(errs), msg ? msg : "none");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(errs, 0), "field")), field);
    ck_assert_msg(strstr(msg, what), "'%s' lacks '%s'", msg, what);
    json_decref(errs);
}

static void accepted(const char *yaml)
{
    json_t *errs = problems(yaml, MODEL_FIELDS_STRICT);
    ck_assert_msg(json_array_size(errs) == 0, "%s",
                  json_string_value(json_object_get(json_array_get(errs, 0), "message")));
    json_decref(errs);
}

#define QUEUE "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
#define VPG                                                                                        \
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, "              \
    "namespace: team}\n"

/* source: volcano's CRD config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml: weight
 * is an integer, minimum 1, maximum 65535 (default 1 when absent; an explicit 0 fails the
 * schema, the mutating webhook's "0 -> 1" only fills in a weight that was never written). */
START_TEST(test_queue_model_weight)
{
    refused(QUEUE "spec: {weight: -1}\n", "spec.weight", "must be between 1 and 65535");
    refused(QUEUE "spec: {weight: 0}\n", "spec.weight", "must be between 1 and 65535");
    refused(QUEUE "spec: {weight: 65536}\n", "spec.weight", "must be between 1 and 65535");
    refused(QUEUE "spec: {weight: \"2\"}\n", "spec.weight", "must be an integer");
    accepted(QUEUE "spec: {weight: 65535}\n");
    accepted(QUEUE "spec: {}\n");
}
END_TEST

/* source: volcano pkg/webhooks/admission/queues/validate validateResourceQuantityOfQueue
 * (quantities valid; guarantee <= deserved <= capability: muster has no deserved field, so
 * guarantee <= capability) */
START_TEST(test_queue_model_quantities)
{
    refused(QUEUE "spec:\n  capability: {cpu: \"4\"}\n  guarantee: {resource: {cpu: \"8\"}}\n",
            "spec.guarantee.resource.cpu", "above spec.capability.cpu (4)");
    refused(QUEUE "spec:\n  capability: {memory: 12x}\n", "spec.capability.memory",
            "invalid quantity '12x'");
    refused(QUEUE "spec:\n  guarantee: {resource: {cpu: -1}}\n", "spec.guarantee.resource.cpu", "");
    /* a resource the capability does not name is not limited: any guarantee fits */
    accepted(QUEUE "spec:\n  capability: {cpu: \"4\"}\n  guarantee: {resource: {memory: 8Gi}}\n");
    accepted(QUEUE "spec:\n  capability: {cpu: 4500m}\n  guarantee: {resource: {cpu: \"4.5\"}}\n");
}
END_TEST

/* Strict field validation: a typo is a problem naming the nearest field; Volcano's fields
 * muster does not model are refused with what they would change (source: volcano-sh/apis
 * pkg/apis/scheduling/v1beta1/types.go QueueSpec); status is known and not read. */
START_TEST(test_queue_model_fields)
{
    refused(QUEUE "spec: {wieght: 2}\n", "spec.wieght",
            "unknown field (not in QueueSpec; did you mean 'weight'?)");
    refused(QUEUE "spec: {deserved: {cpu: \"2\"}}\n", "spec.deserved",
            "not supported by muster (a fixed deserved share");
    refused(QUEUE "spec: {extendClusters: [{name: c1}]}\n", "spec.extendClusters",
            "not supported by muster (Volcano's multi-cluster dispatch");
    refused(QUEUE "spec: {affinity: {nodeGroupAffinity: {}}}\n", "spec.affinity",
            "not supported by muster (node-group affinity");
    refused(QUEUE "spec: {type: batch}\n", "spec.type", "not supported by muster");
    refused(QUEUE "spec: {priority: 3}\n", "spec.priority",
            "not supported by muster (queue priority");
    refused(QUEUE "spec: {dequeueStrategy: lifo}\n", "spec.dequeueStrategy",
            "must be one of traverse, fifo");
    /* empty values ask for nothing; status is what Volcano reports, kept and not read */
    accepted(QUEUE "spec: {priority: 0, type: \"\", dequeueStrategy: traverse}\nstatus: {state: "
                   "Open, allocated: {cpu: \"1\"}, running: 2}\n");
    /* Warn drops an unknown field and applies the rest */
    json_t *errs = problems(QUEUE "spec: {wieght: 2}\n", MODEL_FIELDS_WARN);
    ck_assert_uint_eq(json_array_size(errs), 0);
    json_decref(errs);
}
END_TEST

/* source: volcano validateHierarchicalQueue ("queue %s cannot use itself as parent") and the
 * CRD's spec.parent pattern (a DNS-1123 subdomain, at most 253 characters). */
START_TEST(test_queue_model_parent_name)
{
    refused(QUEUE "spec: {parent: q}\n", "spec.parent", "a queue cannot be its own parent");
    refused(QUEUE "spec: {parent: Research}\n", "spec.parent",
            "invalid queue name 'Research': must be a lowercase DNS-1123 subdomain");
    refused(QUEUE "spec: {parent: [a]}\n", "spec.parent", "must be a string");
    accepted(QUEUE "spec: {parent: root}\n");
}
END_TEST

/* source: volcano's PodGroup CRD (config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml):
 * minMember optional with minimum 0, queue a DNS-1123 subdomain, minTaskMember a map of
 * int32, minResources quantities. scheduler-plugins' PodGroup keeps minMember required. */
START_TEST(test_queue_model_volcano_podgroup)
{
    accepted(VPG "spec: {queue: research, minTaskMember: {ps: 1, worker: 0}, minResources: {cpu: "
                 "\"4\", nvidia.com/gpu: 8}}\n");
    accepted(VPG "spec: {}\n");
    refused(VPG "spec: {queue: Research}\n", "spec.queue",
            "invalid queue name 'Research': must be a lowercase DNS-1123 subdomain");
    refused(VPG "spec: {queue: \"\"}\n", "spec.queue", "invalid queue name ''");
    refused(VPG "spec: {minTaskMember: {worker: -1}}\n", "spec.minTaskMember.worker",
            "must be between 0 and 2147483647");
    refused(VPG "spec: {minTaskMember: {worker: two}}\n", "spec.minTaskMember.worker",
            "must be an integer");
    refused(VPG "spec: {minTaskMember: [1]}\n", "spec.minTaskMember", "must be an object");
    refused(VPG "spec: {minResources: {cpu: lots}}\n", "spec.minResources.cpu",
            "invalid quantity 'lots'");
    refused(VPG "spec: {subGroupPolicy: [{name: a}]}\n", "spec.subGroupPolicy",
            "not supported by muster (Volcano's sub-groups");
    refused("apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
            "spec: {queue: research}\n",
            "spec.minMember", "missing required field");
    refused("apiVersion: volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {}\n",
            "apiVersion", "unknown apiVersion 'volcano.sh/v1beta1' for kind 'PodGroup'");
}
END_TEST

/* The first document of yaml, validated (quantities normalized to strings). New. */
static json_t *one(const char *yaml)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    json_t *errors = json_array();
    ck_assert_int_eq(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_AUTO, &m, &err), 0);
    ck_assert_int_eq(model_validate(&m.docs[0], errors), 0);
    json_decref(errors);
    json_t *obj = json_incref(m.docs[0].obj);
    model_manifest_free(&m);
    return obj;
}

START_TEST(test_queue_model_decode_podgroup_and_pod)
{
    struct model_podgroup g;
    struct model_pod p;
    struct err err = ERR_INIT;
    json_t *obj = one(VPG "spec:\n  queue: research\n  minMember: 0\n  minTaskMember: {worker: "
                          "3, ps: 1}\n  minResources: {nvidia.com/gpu: 8, cpu: 500m}\n");
    ck_assert_msg(model_podgroup_decode(obj, &g, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(g.queue, "research");
    ck_assert_int_eq(g.min_member, 1); /* Volcano's 0: a job still needs a pod */
    ck_assert_uint_eq(g.nmin_tasks, 2);
    ck_assert_str_eq(g.min_tasks[0].task, "ps"); /* sorted */
    ck_assert_int_eq(g.min_tasks[0].min, 1);
    ck_assert_str_eq(g.min_tasks[1].task, "worker");
    ck_assert_int_eq(g.min_tasks[1].min, 3);
    ck_assert_uint_eq(g.nmin_resources, 2);
    ck_assert_str_eq(g.min_resources[0].name, "cpu");
    ck_assert_int_eq(g.min_resources[0].value, 500);
    ck_assert_str_eq(g.min_resources[1].name, "nvidia.com/gpu");
    ck_assert_int_eq(g.min_resources[1].value, 8);
    model_podgroup_release(&g);
    json_decref(obj);

    /* source: volcano pkg/scheduler/api/job_info.go getJobID (the group-name annotation, in
     * the pod's namespace) and getTaskRole (volcano.sh/task-spec: annotation, then label) */
    const char *pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w-0\n  namespace: team\n"
                      "  labels: {%s}\n  annotations: {%s}\nspec:\n  containers: [{name: c}]\n";
    char buf[512];
    snprintf(buf, sizeof(buf), pod, "volcano.sh/task-spec: ps",
             "scheduling.k8s.io/group-name: job-a, volcano.sh/task-spec: worker");
    obj = one(buf);
    ck_assert_str_eq(model_pod_group_name(obj), "job-a");
    ck_assert_int_eq(model_pod_decode(obj, &p, &err), 0);
    ck_assert_str_eq(p.group, "job-a");
    ck_assert_str_eq(p.task, "worker");
    model_pod_release(&p);
    json_decref(obj);
    /* the scheduler-plugins label wins over the annotation; the task label is read too */
    snprintf(buf, sizeof(buf), pod,
             "pod-group.scheduling.sigs.k8s.io: gang, volcano.sh/task-spec: ps",
             "scheduling.k8s.io/group-name: job-a");
    obj = one(buf);
    ck_assert_int_eq(model_pod_decode(obj, &p, &err), 0);
    ck_assert_str_eq(p.group, "gang");
    ck_assert_str_eq(p.task, "ps");
    model_pod_release(&p);
    json_decref(obj);
    /* an empty annotation is no group */
    snprintf(buf, sizeof(buf), pod, "", "scheduling.k8s.io/group-name: ''");
    obj = one(buf);
    ck_assert_ptr_null(model_pod_group_name(obj));
    ck_assert_int_eq(model_pod_decode(obj, &p, &err), 0);
    ck_assert_ptr_null(p.group);
    ck_assert_ptr_null(p.task);
    model_pod_release(&p);
    json_decref(obj);
}
END_TEST

/* ---- the tree at apply, and deleting ---- */

static int apply_rc(struct sched_util *u, const char *yaml, struct err *err)
{
    struct model_manifest m = {0};
    ck_assert_int_eq(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_AUTO, &m, err), 0);
    int rc = sched_apply(u->s, &m, 5000, NULL, err);
    model_manifest_free(&m);
    return rc;
}

static json_t *stored(struct sched_util *u, enum model_kind kind, const char *key)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    ck_assert_int_eq(store_txn_begin(u->st, STORE_READ, &txn, NULL), 0);
    store_get(txn, kind, key, &obj, NULL);
    store_txn_abort(&txn);
    return obj;
}

/* The manifest is refused with ERR_INVALID at spec.parent, the message holding what, and
 * nothing of it is written: no object, no audit record. */
static void apply_refused(struct sched_util *u, const char *yaml, const char *field,
                          const char *what)
{
    struct err err = ERR_INIT;
    json_t *before = sched_util_audit(u);
    ck_assert_int_eq(apply_rc(u, yaml, &err), ERR_INVALID);
    ck_assert_str_eq(err.field, field);
    ck_assert_msg(strstr(err.msg, what), "'%s' lacks '%s'", err.msg, what);
    json_t *after = sched_util_audit(u);
    ck_assert_uint_eq(json_array_size(after), json_array_size(before));
    json_t *marker = stored(u, MODEL_POD, "default/marker");
    ck_assert_ptr_null(marker); /* the manifest's other document was not written either */
    json_decref(before);
    json_decref(after);
}

#define Q(name, parent)                                                                            \
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " name "}\n"    \
    "spec: {parent: " parent "}\n"
#define MARKER                                                                                     \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: marker}\nspec: {containers: [{name: c}]}\n"

/* source: volcano validateHierarchicalQueue (the parent must exist: "failed to get parent
 * queue"; not itself). muster refuses every cycle, also one closed by re-parenting a stored
 * queue and one within a manifest, and a parent on the queue tree's root. */
START_TEST(test_queue_model_apply_tree)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    apply_refused(&u, MARKER Q("a", "ghost"), "spec.parent",
                  "document 2 (Queue a): spec.parent: queue 'a' names parent 'ghost', which does "
                  "not exist");
    apply_refused(&u, Q("a", "b") Q("b", "a") MARKER, "spec.parent",
                  "document 1 (Queue a): spec.parent: the queues would form a cycle (a -> b -> a)");
    apply_refused(&u, Q("root", "a") Q("a", "root") MARKER, "spec.parent",
                  "queue 'root' is the root of the queue tree and cannot have a parent");
    apply_refused(&u,
                  MARKER "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: "
                         "{name: f}\nspec: {dequeueStrategy: fifo}\n",
                  "spec.dequeueStrategy", "'fifo' is not supported by muster");

    /* a child before its parent in one manifest; "root" and the built-in default exist */
    json_decref(sched_util_apply(&u, Q("b", "a") Q("a", "root") Q("c", "default"), 1000));
    json_t *b = stored(&u, MODEL_QUEUE, "b");
    ck_assert_str_eq(sched_util_str2(b, "spec", "parent"), "a");
    json_decref(b);

    /* across two applies: a -> b -> a closes when the stored a is re-parented */
    apply_refused(&u, Q("a", "b") MARKER, "spec.parent",
                  "document 1 (Queue a): spec.parent: the queues would form a cycle (a -> b -> a)");
    json_t *a = stored(&u, MODEL_QUEUE, "a");
    ck_assert_str_eq(sched_util_str2(a, "spec", "parent"), "root"); /* unchanged */
    json_decref(a);
    /* ... and a longer one: d -> b -> a -> d */
    apply_refused(&u, Q("d", "b") Q("a", "d"), "spec.parent", "(d -> b -> a -> d)");
    /* re-parenting without a cycle is fine */
    json_decref(sched_util_apply(&u, Q("a", "c"), 2000));
    sched_util_close(&u);

    /* mirrored: the API server admitted it; an unknown parent is stored as sent */
    struct sched_options o = {.mirrored = 1};
    sched_util_open(&u, &o);
    json_decref(sched_util_apply(&u, Q("a", "ghost"), 1000));
    a = stored(&u, MODEL_QUEUE, "a");
    ck_assert_str_eq(sched_util_str2(a, "spec", "parent"), "ghost");
    json_decref(a);
    sched_util_close(&u);
}
END_TEST

/* A Volcano PodGroup is the same kind and key as a scheduler-plugins one and keeps its
 * apiVersion; pods join it through the group-name annotation (source: volcano getJobID). */
START_TEST(test_queue_model_volcano_podgroup_job)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(
        &u,
        VPG "spec: {minMember: 2, queue: research}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n"
            "  name: w-0\n  namespace: team\n  annotations: {scheduling.k8s.io/group-name: g}\n"
            "spec: {containers: [{name: c}]}\n",
        1000));
    json_t *pg = stored(&u, MODEL_PODGROUP, "team/g");
    ck_assert_str_eq(json_string_value(json_object_get(pg, "apiVersion")),
                     "scheduling.volcano.sh/v1beta1");
    json_decref(pg);
    json_t *job = sched_util_job(&u, "team/g");
    ck_assert_str_eq(json_string_value(json_object_get(job, "kind")), "gang");
    ck_assert_int_eq(json_integer_value(json_object_get(job, "minMember")), 2);
    json_t *members = json_object_get(job, "members");
    ck_assert_uint_eq(json_array_size(members), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(members, 0), "name")), "w-0");
    json_decref(job);
    /* the pod's audit record names its job too (model_pod_group_name) */
    ck_assert_int_eq(sched_util_audit_count(&u, "applied", "team/g"), 2);
    /* the same name under scheduler-plugins' group replaces it */
    json_decref(sched_util_apply(&u,
                                 "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                                 "metadata: {name: g, namespace: team}\nspec: {minMember: 1}\n",
                                 2000));
    pg = stored(&u, MODEL_PODGROUP, "team/g");
    ck_assert_str_eq(json_string_value(json_object_get(pg, "apiVersion")),
                     "scheduling.sigs.k8s.io/v1alpha1");
    json_decref(pg);
    sched_util_close(&u);
}
END_TEST

#define NODE                                                                                       \
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"8\", "        \
    "pods: \"10\"}}\n"
#define POD(name, queue)                                                                           \
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\n  annotations: "                 \
    "{scheduling.volcano.sh/queue-name: " queue "}\nspec: {containers: [{name: c, resources: "     \
    "{requests: {cpu: \"1\"}}}]}\n"

static int delete_rc(struct sched_util *u, const char *name, struct err *err)
{
    return sched_delete(u->s, MODEL_QUEUE, name, 9000, err);
}

/* source: volcano validateQueueDeleting refuses a queue with child queues ("can not be
 * deleted because it has %d child queues") and, with EnableQueueAllocatedPodsCheck, one with
 * allocated pods; muster refuses a queue with any job that is not Finished (409). */
START_TEST(test_queue_model_delete)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u,
                                 NODE Q("research", "root") Q("team", "research") Q("empty", "root")
                                     POD("train", "research") POD("infer", "research")
                                         POD("web", "default"),
                                 1000));
    /* jobs: counted, the first by id named; err_http_status makes it a 409 */
    ck_assert_int_eq(delete_rc(&u, "research", &err), ERR_CONFLICT);
    ck_assert_int_eq(err_http_status(err.code), 409);
    ck_assert_str_eq(err.msg, "queue 'research' has 2 jobs that are not finished, among them "
                              "'default/infer': delete them or move them to another queue first");
    json_t *q = stored(&u, MODEL_QUEUE, "research");
    ck_assert_ptr_nonnull(q); /* still there */
    json_decref(q);
    /* finished jobs do not count; a child queue does */
    const char *done = "{\"phase\": \"Succeeded\"}";
    for (int i = 0; i < 2; i++) {
        json_t *pod = sched_util_pod(&u, i ? "default/infer" : "default/train");
        json_object_set_new(pod, "status", json_loads(done, 0, NULL));
        json_object_del(json_object_get(pod, "metadata"), "resourceVersion");
        char *text = model_yaml_dump(pod);
        json_decref(sched_util_apply(&u, text, 2000));
        free(text);
        json_decref(pod);
    }
    ck_assert_int_eq(delete_rc(&u, "research", &err), ERR_CONFLICT);
    ck_assert_str_eq(err.msg, "queue 'research' is the parent of 1 queue ('team'): delete it or "
                              "give it another parent first");
    /* one job */
    json_decref(sched_util_apply(&u, POD("solo", "team"), 3000));
    ck_assert_int_eq(delete_rc(&u, "team", &err), ERR_CONFLICT);
    ck_assert_str_eq(err.msg, "queue 'team' has 1 job that is not finished, 'default/solo': "
                              "delete it or move it to another queue first");
    /* without jobs or children: deleted, audited */
    ck_assert_msg(delete_rc(&u, "empty", &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(stored(&u, MODEL_QUEUE, "empty"));
    ck_assert_int_eq(delete_rc(&u, "empty", &err), ERR_NOT_FOUND);
    /* the built-in default is not stored; a stored default goes even with jobs (the built-in
     * takes them back) */
    ck_assert_int_eq(delete_rc(&u, "default", &err), ERR_NOT_FOUND);
    json_decref(sched_util_apply(&u, Q("default", "root"), 4000));
    ck_assert_msg(delete_rc(&u, "default", &err) == 0, "%s", err.msg);
    sched_util_close(&u);

    /* mirrored: the API server deleted it; never refused */
    struct sched_options o = {.mirrored = 1};
    sched_util_open(&u, &o);
    json_decref(sched_util_apply(&u, NODE Q("research", "root") POD("train", "research"), 1000));
    ck_assert_msg(delete_rc(&u, "research", &err) == 0, "%s", err.msg);
    sched_util_close(&u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queue_model");
    TCase *tc = tcase_create("queue_model");
    tcase_add_test(tc, test_queue_model_weight);
    tcase_add_test(tc, test_queue_model_quantities);
    tcase_add_test(tc, test_queue_model_fields);
    tcase_add_test(tc, test_queue_model_parent_name);
    tcase_add_test(tc, test_queue_model_volcano_podgroup);
    tcase_add_test(tc, test_queue_model_decode_podgroup_and_pod);
    tcase_add_test(tc, test_queue_model_apply_tree);
    tcase_add_test(tc, test_queue_model_volcano_podgroup_job);
    tcase_add_test(tc, test_queue_model_delete);
    suite_add_tcase(s, tc);
    return check_run(s);
}
