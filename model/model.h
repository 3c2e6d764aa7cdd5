/*
 * model.h - the object model, all of it: kinds, Kubernetes quantities, manifest decoding
 * and validation, and typed views of Node, Pod, PodGroup, ClusterNetworkTopology,
 * PriorityClass, Queue and PodDisruptionBudget.
 *
 * Objects travel through muster as jansson documents in Kubernetes shape (what the store
 * keeps and the API returns). model/ turns manifest bytes into such documents, validates
 * them with precise errors, decodes validated documents into the small typed structs the
 * scheduler works on, and owns the Pod fields the scheduler writes back (and the rules
 * "a pod is terminal", "a pod is pending").
 *
 * An umbrella for the other folders: each part has its own header, which says what it is
 * for and who owns what, and model/'s own files include only the parts they use:
 *
 *     model_kind.h      kinds, their names, the store key
 *     model_quantity.h  quantities and resource lists
 *     model_manifest.h  parsing, validation, the field schema, YAML and JSON output
 *     model_select.h    labels, selectors, affinity, spread, taints and tolerations
 *     model_pod.h       Pod: typed view, gang labels, the pod rules and setters
 *     model_objects.h   Node, PodGroup, topology, PriorityClass, Queue, PDB
 *
 * Ownership follows jansson's words: *new* (caller frees / decrefs), *borrowed* (valid
 * while the owner lives). Typed structs own their strings; release them with the matching
 * *_release (NULL-safe, idempotent).
 */
#ifndef MUSTER_MODEL_H
#define MUSTER_MODEL_H

#include "model_kind.h"
#include "model_manifest.h"
#include "model_objects.h"
#include "model_pod.h"
#include "model_quantity.h"
#include "model_select.h"

#endif
