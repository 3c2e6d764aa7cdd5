#!/usr/bin/env node
// gen_schema.mjs - writes model/schema_k8s*.{c,h}, the field schema of the kinds muster
// models: one file per part (FILES below), so none grows past a reader's page count.
//
// Usage (from the repository root):
//   npm install --prefix /tmp/k8s @kubernetes/client-node@1.0.0
//   node scripts/gen_schema.mjs /tmp/k8s/node_modules/@kubernetes/client-node/dist/gen/models \
//       model && clang-format -i model/schema_k8s*.[ch]
//
// Pod and Node come from the Kubernetes API as @kubernetes/client-node 1.0.0 generates it
// (Kubernetes 1.32: the 1.31 API plus the pod-level spec.resources). PodGroup,
// ClusterNetworkTopology and Queue are written out below; PriorityClass is
// scheduling.k8s.io/v1, PodDisruptionBudget policy/v1. Every field is "known" (accepted,
// stored, not read) unless CLASSES says it is honoured (muster's scheduler reads it) or unsupported (kube-scheduler's, or for
// Volcano's kinds Volcano's, placement depends on it and muster does not model it). A class
// given to a field holds for the field only; a class given to a type ("Affinity": "honoured")
// holds for each of its fields.
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const outDir = process.argv[3];
if (!dir || !outDir) {
  console.error('usage: gen_schema.mjs <client-node dist/gen/models dir> <output dir>');
  process.exit(2);
}

const VOLUME = 'VolumeBinding, VolumeZone and NodeVolumeLimits: the nodes that can reach the volume';
const DRA = 'DynamicResources: the nodes that can hold the claimed devices';
const DISK = 'VolumeRestrictions and NodeVolumeLimits: where the disk can be attached';

const CLASSES = {
  Pod: {apiVersion: 'h', kind: 'h', metadata: 'h', spec: 'h', status: 'h'},
  Node: {apiVersion: 'h', kind: 'h', metadata: 'h', spec: 'h', status: 'h'},
  ObjectMeta: {
    name: 'h', namespace: 'h', labels: 'h', annotations: 'h', uid: 'h',
    creationTimestamp: 'h', deletionTimestamp: 'h',
  },
  PodSpec: {
    nodeSelector: 'h', affinity: 'h', tolerations: 'h', topologySpreadConstraints: 'h',
    overhead: 'h', containers: 'h', initContainers: 'h', priority: 'h',
    priorityClassName: 'h', preemptionPolicy: 'h', nodeName: 'h', schedulingGates: 'h',
    schedulerName: 'h',
    resourceClaims: ['u', DRA],
    runtimeClassName: ['u', 'RuntimeClass: node selection, tolerations and pod overhead'],
    resources: ['u', 'pod-level resources: the pod requests spec.resources, not the sum of its containers'],
  },
  Affinity: 'h', NodeAffinity: 'h', PodAffinity: 'h', PodAntiAffinity: 'h', NodeSelector: 'h',
  NodeSelectorTerm: 'h', NodeSelectorRequirement: 'h', PreferredSchedulingTerm: 'h',
  WeightedPodAffinityTerm: 'h', PodAffinityTerm: 'h', LabelSelector: 'h',
  LabelSelectorRequirement: 'h', Toleration: 'h', TopologySpreadConstraint: 'h',
  PodSchedulingGate: 'h',
  Container: {name: 'h', resources: 'h', restartPolicy: 'h'},
  ResourceRequirements: {requests: 'h', limits: 'h', claims: ['u', DRA]},
  ContainerPort: {hostPort: ['u', 'NodePorts: one pod per host port and protocol on a node']},
  Volume: {
    persistentVolumeClaim: ['u', VOLUME],
    ephemeral: ['u', VOLUME],
    gcePersistentDisk: ['u', DISK],
    awsElasticBlockStore: ['u', DISK],
    azureDisk: ['u', DISK],
    cinder: ['u', DISK],
    iscsi: ['u', DISK],
    rbd: ['u', DISK],
  },
  PodStatus: 'h',
  NodeSpec: {unschedulable: 'h', taints: 'h'},
  Taint: 'h',
  NodeStatus: {allocatable: 'h', capacity: 'h'},
  PodGroup: {apiVersion: 'h', kind: 'h', metadata: 'h', spec: 'h', status: 'h'},
  PodGroupSpec: {
    minMember: 'h', scheduleTimeoutSeconds: 'h', priorityClassName: 'h', queue: 'h',
    minResources: 'h', minTaskMember: 'h',
    networkTopology: ['u', "Volcano's network topology: the HyperNode tier the job's pods may span"],
    subGroupPolicy: ['u', "Volcano's sub-groups: gangs within the job, each kept within a network tier"],
  },
  Queue: {apiVersion: 'h', kind: 'h', metadata: 'h', spec: 'h', status: 'k'},
  QueueSpec: {
    weight: 'h', capability: 'h', guarantee: 'h', reclaimable: 'h', parent: 'h',
    extendClusters: ['u', "Volcano's multi-cluster dispatch: the clusters the queue's jobs go to"],
    affinity: ['u', "node-group affinity: the node groups the queue's pods must, should or must not land on"],
    type: ['u', "a queue type, which selects how Volcano schedules the queue's jobs"],
    deserved: ['u', "a fixed deserved share (Volcano's capacity plugin): muster derives it from the weights"],
    priority: ['u', 'queue priority: higher-priority queues are served first and reclaimed from last'],
  },
  Guarantee: 'h',
  ClusterNetworkTopology: {apiVersion: 'h', kind: 'h', metadata: 'h', spec: 'h', status: 'h'},
  ClusterNetworkTopologySpec: 'h',
  NetworkTopologySpec: 'h',
  PriorityClass: {
    apiVersion: 'h', kind: 'h', metadata: 'h', value: 'h', globalDefault: 'h',
    preemptionPolicy: 'h',
  },
  PodDisruptionBudget: {apiVersion: 'h', kind: 'h', metadata: 'h', spec: 'h', status: 'h'},
  PodDisruptionBudgetSpec: {
    minAvailable: 'h', maxUnavailable: 'h', selector: 'h', unhealthyPodEvictionPolicy: 'h',
  },
  PodDisruptionBudgetStatus: {disruptionsAllowed: 'h', disruptedPods: 'h'},
};

// The CRDs, as muster reads them (Koordinator's PodGroup is scheduler-plugins'
// scheduling.sigs.k8s.io/v1alpha1, and Volcano's scheduling.volcano.sh/v1beta1 is the same
// kind: its schema is the union of the two; ClusterNetworkTopology is Koordinator's; Queue
// is Volcano's scheduling.volcano.sh/v1beta1, as volcano-sh/apis pkg/apis/scheduling/v1beta1
// types.go has it).
const EXTRA = {
  PodGroup: {
    apiVersion: 'string', kind: 'string', metadata: 'V1ObjectMeta', spec: 'PodGroupSpec',
    status: 'PodGroupStatus',
  },
  PodGroupSpec: {
    minMember: 'number', minResources: '{ [key: string]: string; }',
    scheduleTimeoutSeconds: 'number', priorityClassName: 'string',
    // Volcano's (scheduling.volcano.sh/v1beta1)
    queue: 'string', minTaskMember: '{ [key: string]: number; }', networkTopology: 'object',
    subGroupPolicy: 'Array<object>',
  },
  PodGroupStatus: {
    phase: 'string', occupiedBy: 'string', scheduled: 'number', running: 'number',
    succeeded: 'number', failed: 'number', scheduleStartTime: 'Date',
    conditions: 'Array<object>', // Volcano's
  },
  Queue: {
    apiVersion: 'string', kind: 'string', metadata: 'V1ObjectMeta', spec: 'QueueSpec',
    status: 'QueueStatus',
  },
  QueueSpec: {
    weight: 'number', capability: '{ [key: string]: string; }', reclaimable: 'boolean',
    extendClusters: 'Array<object>', guarantee: 'Guarantee', affinity: 'object', type: 'string',
    parent: 'string', deserved: '{ [key: string]: string; }', priority: 'number',
    dequeueStrategy: 'string',
  },
  Guarantee: {resource: '{ [key: string]: string; }'},
  QueueStatus: {
    state: 'string', unknown: 'number', pending: 'number', running: 'number', inqueue: 'number',
    completed: 'number', reservation: 'object', allocated: '{ [key: string]: string; }',
  },
  ClusterNetworkTopology: {
    apiVersion: 'string', kind: 'string', metadata: 'V1ObjectMeta',
    spec: 'ClusterNetworkTopologySpec', status: 'ClusterNetworkTopologyStatus',
  },
  ClusterNetworkTopologySpec: {networkTopologySpec: 'Array<NetworkTopologySpec>'},
  NetworkTopologySpec: {
    topologyLayer: 'string', parentTopologyLayer: 'string', labelKey: 'Array<string>',
  },
  ClusterNetworkTopologyStatus: {detailStatus: 'Array<NetworkTopologyDetail>'},
  NetworkTopologyDetail: {
    topologyInfo: 'NetworkTopologyInfo', parentTopologyInfo: 'NetworkTopologyInfo',
    childTopologyLayer: 'string', childTopologyNames: 'Array<string>', nodeNum: 'number',
  },
  NetworkTopologyInfo: {topologyLayer: 'string', topologyName: 'string'},
};

// Status reports what is, it asks for nothing: the resources a container status reports are
// ResourceRequirements under another name, all of it known (its claims are not a request).
const COPIES = {ContainerStatusResources: 'V1ResourceRequirements'};
const REFS = {'ContainerStatus.resources': 'ContainerStatusResources'};

const ROOTS = [
  ['MODEL_NODE', 'V1Node'],
  ['MODEL_POD', 'V1Pod'],
  ['MODEL_PODGROUP', 'PodGroup'],
  ['MODEL_TOPOLOGY', 'ClusterNetworkTopology'],
  ['MODEL_PRIORITYCLASS', 'V1PriorityClass'],
  ['MODEL_QUEUE', 'Queue'],
  ['MODEL_PDB', 'V1PodDisruptionBudget'],
];

const short = (t) => t.replace(/^V1/, '');

function fieldsOf(type) {
  if (COPIES[type]) return fieldsOf(COPIES[type]);
  if (EXTRA[type]) return Object.entries(EXTRA[type]).map(([n, t]) => ({baseName: n, type: t}));
  const file = path.join(dir, `${type}.js`);
  const src = fs.readFileSync(file, 'utf8');
  const m = src.match(/attributeTypeMap = (\[[\s\S]*?\n\]);/);
  if (!m) throw new Error(`no attributeTypeMap in ${file}`);
  return JSON.parse(m[1]);
}

// shape and referenced type of a TypeScript type string
function shapeOf(t) {
  let m;
  if ((m = t.match(/^Array<(.*)>$/))) {
    const inner = shapeOf(m[1]);
    if (inner.shape === 'OBJ') return {shape: 'OBJS', ref: inner.ref};
    return {shape: inner.shape === 'ANY' ? 'ANY' : 'LIST'};
  }
  if ((m = t.match(/^\{ \[key: string\]: (.*); \}$/))) {
    const inner = shapeOf(m[1]);
    if (inner.shape === 'OBJ') return {shape: 'MAPOBJ', ref: inner.ref};
    return {shape: inner.shape === 'SCALAR' ? 'MAP' : 'ANY'};
  }
  if (['string', 'number', 'boolean', 'Date', 'IntOrString'].includes(t)) return {shape: 'SCALAR'};
  if (t === 'any' || t === 'object') return {shape: 'ANY'};
  return {shape: 'OBJ', ref: t};
}

const types = new Map(); // name -> [{name, shape, ref, cls, why}]
function visit(type) {
  if (types.has(type)) return;
  types.set(type, null);
  const cls = CLASSES[short(type)];
  const out = [];
  for (const a of fieldsOf(type)) {
    const s = shapeOf(a.type);
    if (REFS[`${short(type)}.${a.baseName}`]) s.ref = REFS[`${short(type)}.${a.baseName}`];
    let c = typeof cls === 'string' ? cls : (cls && cls[a.baseName]) || 'k';
    let why = null;
    if (Array.isArray(c)) [c, why] = c;
    out.push({name: a.baseName, shape: s.shape, ref: s.ref, cls: c, why});
    if (s.ref) visit(s.ref);
  }
  out.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  types.set(type, out);
}
ROOTS.forEach(([, t]) => visit(t));

// every class named must exist, so a renamed field cannot silently fall back to "known"
for (const [t, c] of Object.entries(CLASSES)) {
  const full = types.has(t) ? t : `V1${t}`;
  if (!types.has(full)) throw new Error(`CLASSES names unknown type ${t}`);
  if (typeof c === 'object')
    for (const f of Object.keys(c))
      if (!types.get(full).some((x) => x.name === f))
        throw new Error(`CLASSES names unknown field ${t}.${f}`);
}

const cstr = (s) => JSON.stringify(s);

// The parts: a type goes to the first part whose roots reach it, so the types several
// kinds share (metadata, selectors) sit in the first part.
const FILES = [
  ['schema_k8s_meta.c', 'object metadata and label selectors, which every kind shares',
   ['V1ObjectMeta', 'V1LabelSelector']],
  ['schema_k8s_node.c', 'Node', ['V1Node']],
  ['schema_k8s_volume.c', "a Pod's volumes", ['V1Volume']],
  ['schema_k8s_pod.c', 'Pod (but its volumes)', ['V1Pod']],
  ['schema_k8s_crd.c',
   'PodGroup, ClusterNetworkTopology, Queue, PriorityClass and PodDisruptionBudget',
   ROOTS.map(([, t]) => t)],
];
function reach(t, seen) {
  if (seen.has(t)) return;
  seen.add(t);
  for (const f of types.get(t)) if (f.ref) reach(f.ref, seen);
}
const part = new Map(); // type -> index in FILES
FILES.forEach(([, , roots], i) => {
  const seen = new Set();
  roots.forEach((r) => reach(r, seen));
  for (const t of seen) if (!part.has(t)) part.set(t, i);
});

const GENERATED = `GENERATED by scripts/gen_schema.mjs from the Kubernetes API (@kubernetes/client-node
 * 1.0.0's models: Kubernetes 1.32) and the CRDs as muster reads them. Do not edit: change
 * the classes in the script and run it again (its header says how).`;
const cname = (t) => `model__k8s_${short(t)}`;
const write = (name, lines) => fs.writeFileSync(path.join(outDir, name), lines.join('\n') + '\n');

const h = [];
h.push(`/*
 * schema_k8s.h - the field schema of Node, Pod, PodGroup, ClusterNetworkTopology,
 * PriorityClass, Queue and PodDisruptionBudget: one table per object type, its fields
 * sorted by name (schema.c searches them), nested types by reference. The tables are in
 * schema_k8s_*.c, model__schema_root in schema_k8s.c.
 *
 * ${GENERATED}
 *
 * HON: muster's scheduler reads the field; KNOWN: accepted and stored, not read;
 * UNS(why): kube-scheduler's (for Volcano's kinds, Volcano's) placement depends on it and
 * muster does not model it, refused in standalone mode and a blocker in mirror mode.
 */
#ifndef MUSTER_MODEL_SCHEMA_K8S_H
#define MUSTER_MODEL_SCHEMA_K8S_H

#include "schema.h"

#define HON MODEL__HONOURED, NULL
#define KNOWN MODEL__KNOWN, NULL
#define UNS(why) MODEL__UNSUPPORTED, why
#define SCALAR MODEL__SCALAR, NULL
#define LIST MODEL__LIST, NULL
#define MAP MODEL__MAP, NULL
#define ANY MODEL__ANY, NULL
#define OBJ(t) MODEL__OBJECT, &t
#define OBJS(t) MODEL__OBJECTS, &t
#define MAPOBJ(t) MODEL__MAP_OBJECTS, &t
`);
for (const t of types.keys()) h.push(`extern const struct model__type ${cname(t)};`);
h.push('');
h.push('#endif');
write('schema_k8s.h', h);

FILES.forEach(([name, what], i) => {
  const lines = [`/*
 * ${name} - the field schema of ${what} (schema_k8s.h).
 *
 * ${GENERATED}
 */
#include "schema_k8s.h"
`];
  for (const [t, fields] of types) {
    if (part.get(t) !== i) continue;
    lines.push(`static const struct model__field f_${short(t)}[] = {`);
    for (const f of fields) {
      const shape = f.ref ? `${f.shape}(${cname(f.ref)})` : f.shape;
      const cls = f.cls === 'h' ? 'HON' : f.cls === 'u' ? `UNS(${cstr(f.why)})` : 'KNOWN';
      lines.push(`    {${cstr(f.name)}, ${shape}, ${cls}},`);
    }
    lines.push('};');
    lines.push(`const struct model__type ${cname(t)} = {${cstr(short(t))}, f_${short(t)}, ` +
               `sizeof(f_${short(t)}) / sizeof(f_${short(t)}[0])};`);
    lines.push('');
  }
  write(name, lines);
});

const lines = [`/*
 * schema_k8s.c - the root type of each kind muster models (schema_k8s.h).
 *
 * ${GENERATED}
 */
#include "schema_k8s.h"
`];
lines.push('const struct model__type *model__schema_root(enum model_kind kind)');
lines.push('{');
lines.push('    switch (kind) {');
for (const [k, t] of ROOTS) {
  lines.push(`    case ${k}:`);
  lines.push(`        return &${cname(t)};`);
}
lines.push('    default:');
lines.push('        return NULL;');
lines.push('    }');
lines.push('}');
write('schema_k8s.c', lines);
