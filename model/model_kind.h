/*
 * model_kind.h - the kinds of object muster keeps, their names, and the store key.
 *
 * A closed set (enum model_kind) that every layer indexes tables by: the store's
 * databases, the API's routes, the CLI's resource names. Everything here is static
 * storage or a pure function of its arguments, except model_object_key's new string.
 */
#ifndef MUSTER_MODEL_KIND_H
#define MUSTER_MODEL_KIND_H

#include <jansson.h>

struct err;

enum model_kind {
    MODEL_NODE,
    MODEL_POD,
    MODEL_PODGROUP,
    MODEL_TOPOLOGY,
    MODEL_PRIORITYCLASS,
    MODEL_QUEUE,
    MODEL_PDB, /* PodDisruptionBudget, policy/v1 */
    MODEL_KIND_COUNT
};

/* "Node", "Pod", "PodGroup", "ClusterNetworkTopology", "PriorityClass", "Queue",
 * "PodDisruptionBudget". Static storage. */
const char *model_kind_name(enum model_kind kind);
/* The apiVersion muster writes: "v1", "scheduling.sigs.k8s.io/v1alpha1", ... */
const char *model_kind_api_version(enum model_kind kind);
/* Volcano's API group: Queue's, and PodGroup's second group (a PodGroup is read alike from
 * scheduling.sigs.k8s.io and scheduling.volcano.sh; the stored document keeps its own). */
#define MODEL_GROUP_VOLCANO "scheduling.volcano.sh"
/* Plural resource name used in URLs and the CLI: "nodes", "pods", "podgroups",
 * "clusternetworktopologies", "priorityclasses", "queues", "poddisruptionbudgets". */
const char *model_kind_plural(enum model_kind kind);
/* Resolves a plural or singular resource name, case-insensitively ("pods", "pod", "po",
 * "podgroup", "pg", "nodes", "no", "cnt", "pc", "q", "pdb"). Returns 0 or ERR_INVALID. */
int model_kind_from_resource(const char *resource, enum model_kind *out);
/* Resolves a document's kind and apiVersion (apiVersion must match the kind's group, for
 * PodGroup one of its two groups; version may be any except for the core kinds' "v1").
 * Returns 0 or ERR_INVALID naming what is unknown. */
int model_kind_from_doc(const char *kind, const char *api_version, enum model_kind *out,
                        struct err *err);
/* 1 when objects of this kind live in a namespace (Pod, PodGroup, PodDisruptionBudget). */
int model_kind_namespaced(enum model_kind kind);
/* The store key of a validated object: "name" or "namespace/name". New string. */
char *model_object_key(enum model_kind kind, json_t *obj);

#endif
