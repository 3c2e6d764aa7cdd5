#!/usr/bin/env python3
"""A small, faithful Kubernetes API server for muster's mirror tests (stdlib only).

Serves Nodes, Pods, PodGroups (scheduling.sigs.k8s.io/v1alpha1, and Volcano's
scheduling.volcano.sh/v1beta1 as the resource "podgroups.scheduling.volcano.sh"),
ClusterNetworkTopologies (scheduling.koordinator.sh/v1alpha1), PriorityClasses
(scheduling.k8s.io/v1; the built-in system- classes are not pre-created), Volcano's
Queues (scheduling.volcano.sh/v1beta1, cluster-scoped) and PodDisruptionBudgets
(policy/v1), whose status the server computes as the disruption controller does:

  * lists with metadata.resourceVersion and pagination (limit/continue over a
    snapshot taken at the first page; an expired snapshot answers 410),
  * chunked watch streams (ADDED/MODIFIED/DELETED/BOOKMARK, allowWatchBookmarks,
    timeoutSeconds); a resourceVersion older than the bounded event history gets
    an ERROR event with code 410 (Expired), as the real API server sends,
  * ConfigMaps (get, create, merge-patch: musterd's audit witness),
  * pods/{name}/binding, pods/{name}/status (merge-patch and strategic-merge-patch),
    pods/{name}/eviction (policy/v1: the PodDisruptionBudget check with the real 429;
    429 on demand too),
  * bearer-token auth (--token) and TLS (--cert/--key),
  * TokenReview (authentication.k8s.io/v1) and SubjectAccessReview
    (authorization.k8s.io/v1) as a real server answers them: the tokens it knows and
    what each user or group may do are set with /control/identities,
  * Events (core v1 and events.k8s.io/v1: create, list with fieldSelector), and the
    status subresource of every resource (PodGroups of both groups included: a merge
    patch changes only status, bumps resourceVersion, emits MODIFIED; counted in stats
    as "status_patch:<resource>"),
  * Leases (coordination.k8s.io/v1: get, create, update with resourceVersion optimistic
    concurrency answering 409 Conflict on a stale one, delete) for leader election,
  * clients told apart by the identity in their User-Agent ("muster/V (IDENTITY)"), with
    per-client counters, a log of every binding and eviction call naming the Lease holder
    at that moment (/control/writes), and faults on the next N Lease calls of a client
    (/control/lease-fault: 409, 429, 5xx or a dropped connection),
  * control endpoints under /control/ for the tests (no auth): apply, delete, drop,
    compact, fail-binding (all bindings, or one pod's: {"pod", "count" | "seconds",
    "code", "drop"}), fail-events, evict-429, slow, binding-delay ({"ms": n}: each binding
    held that long; stats "binding_max_inflight" counts how many were in flight at once),
    malformed, crd, object, stats,
    generate, churn, identities, lease-fault, writes, kubelet ({"start": true}: a kubelet
    that marks each pod Running with a startTime once bound, and enforces no
    activeDeadlineSeconds).

The listening port is written to --port-file once the server is ready.
"""
import argparse
import base64
import calendar
import collections
import copy
import json
import random
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

RESOURCES = {
    # id (as the mirror names its sources): (api prefix, plural, kind, namespaced). Volcano's
    # PodGroups are a second resource of kind PodGroup, served under their own group.
    "nodes": ("/api/v1", "nodes", "Node", False),
    "pods": ("/api/v1", "pods", "Pod", True),
    "podgroups": ("/apis/scheduling.sigs.k8s.io/v1alpha1", "podgroups", "PodGroup", True),
    "podgroups.scheduling.volcano.sh": ("/apis/scheduling.volcano.sh/v1beta1", "podgroups",
                                        "PodGroup", True),
    "clusternetworktopologies": ("/apis/scheduling.koordinator.sh/v1alpha1",
                                 "clusternetworktopologies", "ClusterNetworkTopology", False),
    "priorityclasses": ("/apis/scheduling.k8s.io/v1", "priorityclasses", "PriorityClass", False),
    "queues": ("/apis/scheduling.volcano.sh/v1beta1", "queues", "Queue", False),
    # musterd's audit witness (docs/security.md): get, create (409 when it exists), patch
    "configmaps": ("/api/v1", "configmaps", "ConfigMap", True),
    # Events, both groups: create (409 on a name that exists), get, list with
    # fieldSelector (involvedObject.name, regarding.name, reason, type, ...: any dotted
    # path), watch. /control/crd {"resource": "events.events.k8s.io", "installed": false}
    # makes a server without the events.k8s.io group; /control/fail-events answers errors.
    "events": ("/api/v1", "events", "Event", True),
    "events.events.k8s.io": ("/apis/events.k8s.io/v1", "events", "Event", True),
    # PodDisruptionBudgets: the disruption controller and the Eviction API's check (below)
    "poddisruptionbudgets": ("/apis/policy/v1", "poddisruptionbudgets", "PodDisruptionBudget",
                             True),
    # leader election (musterd --leader-elect)
    "leases": ("/apis/coordination.k8s.io/v1", "leases", "Lease", True),
}
API_VERSION = {"/api/v1": "v1", "/apis/scheduling.sigs.k8s.io/v1alpha1":
               "scheduling.sigs.k8s.io/v1alpha1",
               "/apis/scheduling.koordinator.sh/v1alpha1": "scheduling.koordinator.sh/v1alpha1",
               "/apis/scheduling.k8s.io/v1": "scheduling.k8s.io/v1",
               "/apis/scheduling.volcano.sh/v1beta1": "scheduling.volcano.sh/v1beta1",
               "/apis/events.k8s.io/v1": "events.k8s.io/v1",
               "/apis/policy/v1": "policy/v1",
               "/apis/coordination.k8s.io/v1": "coordination.k8s.io/v1"}


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def field_selector(text):
    """ "a.b=c,d==e" -> [("a.b", "c"), ("d", "e")] (only equality, as the tests need)."""
    out = []
    for part in (text or "").split(","):
        if "=" in part:
            f, v = part.split("=", 1)
            out.append((f.strip(), v.lstrip("=").strip()))
    return out


def field_at(obj, path):
    for p in path.split("."):
        obj = obj.get(p) if isinstance(obj, dict) else None
    return "" if obj is None else str(obj)


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge_patch(target, patch, key=None):
    """Strategic merge patch for the fields the tests use: lists of conditions merge by type."""
    if isinstance(patch, list) and key == "conditions" and isinstance(target, list):
        out = [copy.deepcopy(c) for c in target]
        for c in patch:
            for i, old in enumerate(out):
                if old.get("type") == c.get("type"):
                    out[i] = merge_patch(old, c)
                    break
            else:
                out.append(copy.deepcopy(c))
        return out
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = strategic_merge_patch(out.get(k), v, k)
    return out


class State:
    def __init__(self, history):
        self.lock = threading.Condition()
        self.rv = 1
        self.objects = {r: {} for r in RESOURCES}
        self.history = {r: collections.deque() for r in RESOURCES}
        self.history_max = history
        self.oldest = {r: 1 for r in RESOURCES}  # watch from rv >= oldest is served
        self.installed = {r: True for r in RESOURCES}
        self.drop_gen = 0
        self.snapshots = {}
        self.fail_bindings = 0
        self.fail_binding_code = 500
        # per pod: key -> {"count": n, "until": monotonic deadline, "code": c, "drop": bool}
        self.fail_pod = {}
        self.fail_events = 0
        self.fail_events_code = 500
        self.evict_429 = 0
        self.slow_ms = 0
        self.binding_delay_ms = 0
        # /control/kubelet: a kubelet that starts every pod bound from then on (status
        # phase Running, startTime) and enforces no activeDeadlineSeconds (as a virtual or
        # failed kubelet); off by default: bound pods stay as the binding left them
        self.kubelet = False
        self.binding_inflight = 0
        self.malformed = 0
        self.stats = collections.Counter()
        # TokenReview / SubjectAccessReview: token -> {"username", "uid", "groups"}, and
        # user or group name -> [{"apiGroups", "resources", "verbs"}] (RBAC PolicyRules)
        self.tokens = {}
        self.rules = {}
        # ---- leader election: per-client faults, counters and the write log ----
        self.lease_faults = {}  # client ("*": any) -> [fault, ...]; a fault is "drop" or a code
        self.by_client = collections.defaultdict(collections.Counter)
        self.writes = []  # {"client", "verb", "pod", "holder", "code"} per binding/eviction
        self.fail_binding_client = None

    def lease_holder(self):
        """The holder of the (only) Lease the tests use, "" when none; lock held."""
        for obj in self.objects["leases"].values():
            return (obj.get("spec") or {}).get("holderIdentity") or ""
        return ""

    def take_lease_fault(self, client):
        """The fault to apply to this Lease call, or None; lock held."""
        for who in (client, "*"):
            f = self.lease_faults.get(who)
            if f:
                return f.pop(0)
        return None

    @staticmethod
    def key(res, obj):
        md = obj.get("metadata", {})
        if RESOURCES[res][3]:
            return "%s/%s" % (md.get("namespace", "default"), md["name"])
        return md["name"]

    def _event(self, res, etype, obj):
        """Records an event; lock held."""
        h = self.history[res]
        if len(h) >= self.history_max:
            self.oldest[res] = h.popleft()[0]
        h.append((int(obj["metadata"]["resourceVersion"]), etype, obj))
        self.lock.notify_all()

    def upsert(self, res, obj):
        """Creates or replaces; lock held. Returns the stored object."""
        obj = copy.deepcopy(obj)
        prefix, _, kind, namespaced = RESOURCES[res]
        obj["apiVersion"] = API_VERSION[prefix]
        obj["kind"] = kind
        md = obj.setdefault("metadata", {})
        if namespaced:
            md.setdefault("namespace", "default")
        k = self.key(res, obj)
        old = self.objects[res].get(k)
        self.rv += 1
        md["resourceVersion"] = str(self.rv)
        if old is not None:
            md["uid"] = old["metadata"]["uid"]
            md["creationTimestamp"] = old["metadata"]["creationTimestamp"]
        else:
            md.setdefault("uid", str(uuid.uuid4()))
            md.setdefault("creationTimestamp", now_rfc3339())
        md["managedFields"] = [{"manager": "kubeapi-test", "operation": "Update"}]
        self.objects[res][k] = obj
        self._event(res, "MODIFIED" if old is not None else "ADDED", obj)
        self.pdb_sync(res, obj)
        return obj

    def delete(self, res, k):
        """Deletes; lock held. Returns the deleted object or None."""
        old = self.objects[res].pop(k, None)
        if old is None:
            return None
        self.rv += 1
        old = copy.deepcopy(old)
        old["metadata"]["resourceVersion"] = str(self.rv)
        self._event(res, "DELETED", old)
        self.pdb_sync(res, old)
        return old

    def pdb_sync(self, res, obj):
        pdb_sync_all(self, res, obj)

    def compact(self, drop):
        """Forgets the event history: a watch from any revision before now gets 410."""
        with self.lock:
            self.rv += 1
            for r in RESOURCES:
                self.history[r].clear()
                self.oldest[r] = self.rv + 1
            self.snapshots.clear()
            if drop:
                self.drop_gen += 1
            self.lock.notify_all()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without TCP_NODELAY the body waits for the
    # client's delayed ACK (~40 ms per request on a kept-alive connection), which a real
    # API server never makes its clients wait
    disable_nagle_algorithm = True
    server_version = "kubeapi-test/1"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("kubeapi: " + (fmt % args) + "\n")

    # ---- plumbing ----
    @property
    def st(self):
        return self.server.state

    def send_json(self, code, doc, raw=None):
        body = raw if raw is not None else json.dumps(doc, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        # read once: an error answered before a handler reads the body must still consume
        # it, or the next request on the kept-alive connection starts inside it
        if getattr(self, "_body", None) is None:
            n = int(self.headers.get("Content-Length") or 0)
            self._body = self.rfile.read(n) if n else b""
        return self._body

    def read_json(self):
        data = self.read_body()
        try:
            return json.loads(data or b"{}")
        except ValueError:
            return None

    def client(self):
        """Who calls: the identity musterd puts in its User-Agent, else the User-Agent."""
        ua = self.headers.get("User-Agent") or ""
        if "(" in ua and ua.endswith(")"):
            return ua[ua.index("(") + 1:-1]
        return ua

    def lease_fault(self, res):
        """Applies an injected fault to a Lease call; True when the call was answered."""
        if res != "leases":
            return False
        client = self.client()
        with self.st.lock:
            self.st.by_client[client]["lease_" + self.command.lower()] += 1
            fault = self.st.take_lease_fault(client)
            if fault is not None:
                self.st.by_client[client]["lease_faults"] += 1
        if fault is None:
            return False
        self.read_body()
        if fault == "drop":  # the connection dies without an answer
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return True
        code = int(fault)
        reason = {409: "Conflict", 429: "TooManyRequests"}.get(code, "InternalError")
        msg = ('Operation cannot be fulfilled on leases.coordination.k8s.io: the object has '
               'been modified; please apply your changes to the latest version and try again'
               if code == 409 else "injected by the test")
        body = json.dumps(status(code, reason, msg), separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if code == 429:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(body)
        return True

    def log_write(self, verb, pod, code):
        """A binding or eviction call, with the Lease holder at that moment; lock held."""
        client = self.client()
        self.st.by_client[client][verb] += 1
        self.st.writes.append({"client": client, "verb": verb, "pod": pod,
                               "holder": self.st.lease_holder(), "code": code})

    def authorized(self):
        tok = self.server.token
        if not tok:
            return True
        if self.headers.get("Authorization") == "Bearer " + tok:
            return True
        self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
        return False

    def route(self):
        """Returns (resource, namespace, name, subresource) or None."""
        path = urlparse(self.path).path.rstrip("/")
        for res, (prefix, plural, _, namespaced) in RESOURCES.items():
            if not path.startswith(prefix + "/"):
                continue
            rest = path[len(prefix) + 1:].split("/")
            ns = None
            if namespaced and len(rest) >= 3 and rest[0] == "namespaces" and rest[2] == plural:
                ns = rest[1]
                rest = rest[2:]
            if rest[0] != plural:
                continue
            name = rest[1] if len(rest) > 1 else None
            sub = rest[2] if len(rest) > 2 else None
            return res, ns, name, sub
        return None

    def parse_request(self):
        self._body = None  # per request: a kept-alive connection carries many
        return super().parse_request()

    def api_prelude(self):
        if self.command in ("POST", "PATCH", "PUT"):
            self.read_body()
        if not self.authorized():
            return None
        with self.st.lock:
            slow = self.st.slow_ms
        if slow:
            time.sleep(slow / 1000.0)
        r = self.route()
        if r is None:
            self.send_json(404, status(404, "NotFound", "the server could not find the "
                                       "requested resource"))
            return None
        if not self.st.installed[r[0]]:
            self.send_json(404, status(404, "NotFound", "the server could not find the "
                                       "requested resource"))
            return None
        if self.lease_fault(r[0]):
            return None
        return r

    def take_malformed(self):
        with self.st.lock:
            if self.st.malformed > 0:
                self.st.malformed -= 1
                return True
        return False

    # ---- verbs ----
    def do_GET(self):
        if self.path.startswith("/control/"):
            return self.control_get()
        r = self.api_prelude()
        if r is None:
            return
        res, ns, name, sub = r
        q = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        if name:
            k = "%s/%s" % (ns, name) if RESOURCES[res][3] else name
            with self.st.lock:
                obj = self.st.objects[res].get(k)
            if obj is None:
                return self.send_json(404, status(404, "NotFound", '%s "%s" not found'
                                                  % (res, name)))
            return self.send_json(200, obj)
        if q.get("watch") in ("1", "true"):
            return self.watch(res, ns, q)
        return self.list(res, ns, q)

    def list(self, res, ns, q):
        st = self.st
        self.st.stats["list"] += 1
        limit = int(q.get("limit") or 0)
        cont = q.get("continue")
        with st.lock:
            if cont:
                try:
                    tok = json.loads(base64.b64decode(cont))
                    snap_id, start = tok["id"], tok["start"]
                except (ValueError, KeyError):
                    return self.send_json(400, status(400, "BadRequest", "invalid continue"))
                snap = st.snapshots.get(snap_id)
                if snap is None:
                    return self.send_json(410, status(
                        410, "Expired", "The provided continue parameter is too old to display"
                        " a consistent list result. You can start a new list without the "
                        "continue parameter."))
                list_rv, items = snap
            else:
                list_rv = st.rv
                items = [st.objects[res][k] for k in sorted(st.objects[res])]
                if ns:
                    items = [o for o in items if o["metadata"].get("namespace") == ns]
                sel = field_selector(q.get("fieldSelector"))
                if sel:
                    items = [o for o in items if all(field_at(o, f) == v for f, v in sel)]
                start = 0
                snap_id = None
            end = len(items) if not limit else min(len(items), start + limit)
            page = items[start:end]
            md = {"resourceVersion": str(list_rv)}
            if end < len(items):
                if snap_id is None:
                    snap_id = uuid.uuid4().hex
                    st.snapshots[snap_id] = (list_rv, items)
                md["continue"] = base64.b64encode(json.dumps(
                    {"id": snap_id, "start": end}).encode()).decode()
                md["remainingItemCount"] = len(items) - end
            elif snap_id is not None:
                st.snapshots.pop(snap_id, None)
        prefix, _, kind, _ = RESOURCES[res]
        doc = {"kind": kind + "List", "apiVersion": API_VERSION[prefix], "metadata": md,
               "items": page}
        if self.take_malformed():
            return self.send_json(200, None, raw=b'{"kind": "' + kind.encode() + b'List", "items": [{')
        self.send_json(200, doc)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, res, ns, q):
        st = self.st
        st.stats["watch"] += 1
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true")
        timeout = float(q.get("timeoutSeconds") or 1800)
        rv_s = q.get("resourceVersion") or "0"
        deadline = time.monotonic() + timeout
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        prefix, _, kind, _ = RESOURCES[res]
        with st.lock:
            gen = st.drop_gen
            if rv_s == "0":
                # Synthetic ADDED events for the current state, then live events.
                pending = [(st.rv, "ADDED", o) for _, o in sorted(st.objects[res].items())]
                last = st.rv
            else:
                last = int(rv_s)
                if last < st.oldest[res] - 1:
                    st.stats["expired"] += 1
                    self.chunk(json.dumps({"type": "ERROR", "object": status(
                        410, "Expired", "too old resource version: %d (%d)"
                        % (last, st.oldest[res]))}).encode() + b"\n")
                    self.chunk(b"")
                    return
                pending = []
        last_bookmark = time.monotonic()
        try:
            while True:
                out = []
                for _, etype, obj in pending:
                    if ns and obj["metadata"].get("namespace") != ns:
                        continue
                    out.append(json.dumps({"type": etype, "object": obj},
                                          separators=(",", ":")).encode() + b"\n")
                if out:
                    if self.take_malformed():
                        out.insert(0, b'{"type": "MODIFIED", "object": {"metadata": \n')
                    self.chunk(b"".join(out))
                now = time.monotonic()
                if bookmarks and now - last_bookmark >= self.server.bookmark_s:
                    self.chunk(json.dumps({"type": "BOOKMARK", "object": {
                        "kind": kind, "apiVersion": API_VERSION[prefix],
                        "metadata": {"resourceVersion": str(last)}}}).encode() + b"\n")
                    last_bookmark = now
                if now >= deadline:
                    self.chunk(b"")
                    return
                with st.lock:
                    if st.drop_gen != gen:
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    h = st.history[res]
                    if not h or h[-1][0] <= last:
                        st.lock.wait(min(0.2, max(0.0, deadline - now)))
                    if st.drop_gen != gen:
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if last < st.oldest[res] - 1:
                        self.chunk(json.dumps({"type": "ERROR", "object": status(
                            410, "Expired", "too old resource version")}).encode() + b"\n")
                        self.chunk(b"")
                        return
                    pending = [e for e in h if e[0] > last] if h and h[-1][0] > last else []
                    # Every event of this resource up to st.rv is now taken: a bookmark may
                    # carry the current revision, as the real server's do.
                    last = st.rv
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def do_POST(self):
        if self.path.startswith("/control/"):
            return self.control_post()
        path = urlparse(self.path).path.rstrip("/")
        if path in ("/apis/authentication.k8s.io/v1/tokenreviews",
                    "/apis/authorization.k8s.io/v1/subjectaccessreviews"):
            if not self.authorized():
                return
            body = self.read_json()
            if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
                return self.send_json(400, status(400, "BadRequest", "invalid review"))
            if path.endswith("tokenreviews"):
                return self.token_review(body)
            return self.access_review(body)
        r = self.api_prelude()
        if r is None:
            return
        res, ns, name, sub = r
        body = self.read_json()
        if body is None:
            return self.send_json(400, status(400, "BadRequest", "invalid json"))
        if res == "pods" and name and sub == "binding":
            return self.binding(ns, name, body)
        if res == "pods" and name and sub == "eviction":
            return self.eviction(ns, name)
        if not name and not sub:
            with self.st.lock:
                if res.startswith("events"):
                    self.st.stats["event_create"] += 1
                    if self.st.fail_events > 0:
                        self.st.fail_events -= 1
                        code = self.st.fail_events_code
                        return self.send_json(code, status(code, "InternalError",
                                                           "event refused by test"))
                if ns:
                    body.setdefault("metadata", {})["namespace"] = ns
                if not body.get("metadata", {}).get("name"):
                    return self.send_json(422, status(422, "Invalid", "metadata.name: Required "
                                                      "value: name or generateName is required"))
                if self.st.key(res, body) in self.st.objects[res]:
                    return self.send_json(409, status(409, "AlreadyExists", '%s "%s" already '
                                                      "exists" % (res, body["metadata"]["name"])))
                obj = self.st.upsert(res, body)
            return self.send_json(201, obj)
        self.send_json(405, status(405, "MethodNotAllowed", "method not allowed"))

    def token_review(self, body):
        with self.st.lock:
            self.st.stats["tokenreviews"] += 1
            user = self.st.tokens.get(body["spec"].get("token") or "")
        out = {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
               "metadata": {"creationTimestamp": None}, "spec": body["spec"]}
        if user:
            out["status"] = {"authenticated": True, "audiences": ["https://kubernetes.default.svc"],
                             "user": {"username": user["username"], "uid": user.get("uid", ""),
                                      "groups": user.get("groups", [])}}
        else:  # a real server answers 201 with an error in the status, not 401
            out["status"] = {"user": {}, "error": "[invalid bearer token]"}
        self.send_json(201, out)

    @staticmethod
    def rule_allows(rule, attrs):
        def has(lst, v):
            return "*" in lst or v in lst
        return (has(rule.get("apiGroups", []), attrs.get("group", "")) and
                has(rule.get("resources", []), attrs.get("resource", "")) and
                has(rule.get("verbs", []), attrs.get("verb", "")))

    def access_review(self, body):
        spec = body["spec"]
        attrs = spec.get("resourceAttributes")
        if not isinstance(attrs, dict) or not spec.get("user"):
            return self.send_json(400, status(400, "BadRequest",
                                              "spec.user and spec.resourceAttributes are required"))
        with self.st.lock:
            self.st.stats["subjectaccessreviews"] += 1
            subjects = [spec["user"]] + list(spec.get("groups") or [])
            allowed = any(self.rule_allows(rule, attrs)
                          for sub in subjects for rule in self.st.rules.get(sub, []))
        st = {"allowed": allowed}
        if allowed:
            st["reason"] = "RBAC: allowed by ClusterRoleBinding"
        out = {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
               "metadata": {"creationTimestamp": None}, "spec": spec, "status": st}
        self.send_json(201, out)

    def binding(self, ns, name, body):
        # bindings in flight at once (the write-back's parallelism), each held for
        # binding_delay_ms first (an API server's latency)
        st = self.st
        with st.lock:
            delay = st.binding_delay_ms
            st.binding_inflight += 1
            st.stats["binding_max_inflight"] = max(st.stats["binding_max_inflight"],
                                                   st.binding_inflight)
        try:
            if delay:
                time.sleep(delay / 1000.0)
            return self.binding_now(ns, name, body)
        finally:
            with st.lock:
                st.binding_inflight -= 1

    def binding_now(self, ns, name, body):
        st = self.st
        k = "%s/%s" % (ns, name)
        target = (body.get("target") or {}).get("name")
        with st.lock:
            st.stats["binding"] += 1
            pod = st.objects["pods"].get(k)
            if pod is None:
                self.log_write("binding", k, 404)
                return self.send_json(404, status(404, "NotFound", 'pods "%s" not found' % name))
            fp = st.fail_pod.get(k)
            if fp and (fp.get("count", 0) > 0 or time.monotonic() < fp.get("until", 0)):
                fp["count"] = fp.get("count", 0) - 1
                st.stats["binding_failed"] += 1
                st.stats["binding_failed:" + k] += 1
                self.log_write("binding", k, fp.get("code", 500))
                if fp.get("drop"):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                code = fp.get("code", 500)
                return self.send_json(code, status(code, "InternalError" if code >= 500 else
                                                   "Forbidden", "binding refused by test"))
            if st.fail_bindings > 0 and st.fail_binding_client in (None, self.client()):
                self.log_write("binding", k, st.fail_binding_code)
                st.fail_bindings -= 1
                st.stats["binding_failed"] += 1
                code = st.fail_binding_code
                return self.send_json(code, status(code, "InternalError" if code >= 500 else
                                                   "Forbidden", "binding refused by test"))
            if pod.get("spec", {}).get("nodeName"):
                self.log_write("binding", k, 409)
                return self.send_json(409, status(
                    409, "Conflict", 'Operation cannot be fulfilled on pods/binding "%s": pod %s '
                    'is already assigned to node "%s"' % (name, name, pod["spec"]["nodeName"])))
            if not target:
                return self.send_json(400, status(400, "BadRequest", "target.name required"))
            pod = copy.deepcopy(pod)
            pod.setdefault("spec", {})["nodeName"] = target
            conds = pod.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True"})
            pod = st.upsert("pods", pod)
            st.stats["bound"] += 1
            if st.kubelet:  # the kubelet's status update once it started the containers
                pod = copy.deepcopy(pod)
                pod["status"]["phase"] = "Running"
                pod["status"]["startTime"] = now_rfc3339()
                st.upsert("pods", pod)
            self.log_write("binding", k, 201)
        self.send_json(201, {"kind": "Status", "apiVersion": "v1", "status": "Success",
                             "code": 201})

    def eviction(self, ns, name):
        """pkg/registry/core/pod/storage/eviction.go: a pod whose eviction its one budget does
        not allow gets 429; otherwise the budget's disruptionsAllowed is decremented and the
        pod recorded in its disruptedPods (one update, as the real one does) before it goes."""
        st = self.st
        with st.lock:
            st.stats["eviction"] += 1
            pod = st.objects["pods"].get("%s/%s" % (ns, name))
            if pod is None:
                self.log_write("eviction", "%s/%s" % (ns, name), 404)
                return self.send_json(404, status(404, "NotFound", 'pods "%s" not found' % name))
            if st.evict_429 > 0:
                self.log_write("eviction", "%s/%s" % (ns, name), 429)
                st.evict_429 -= 1
                return self.send_json(429, status(
                    429, "TooManyRequests", "Cannot evict pod as it would violate the pod's "
                    "disruption budget."))
            refused = pdb_check_eviction(st, pod)
            if refused:
                st.stats["evict_refused_pdb"] += 1
                self.log_write("eviction", "%s/%s" % (ns, name), refused[0])
                return self.send_json(refused[0], refused[1])
            st.delete("pods", "%s/%s" % (ns, name))
            st.stats["evicted"] += 1
            self.log_write("eviction", "%s/%s" % (ns, name), 201)
        self.send_json(201, {"kind": "Status", "apiVersion": "v1", "status": "Success",
                             "code": 201})

    def do_PATCH(self):
        r = self.api_prelude()
        if r is None:
            return
        res, ns, name, sub = r
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        body = self.read_json()
        if ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            return self.send_json(415, status(415, "UnsupportedMediaType",
                                              "unsupported patch type '%s'" % ctype))
        if body is None or not name:
            return self.send_json(400, status(400, "BadRequest", "invalid patch"))
        k = "%s/%s" % (ns, name) if RESOURCES[res][3] else name
        with self.st.lock:
            self.st.stats["patch"] += 1
            obj = self.st.objects[res].get(k)
            if obj is None:
                return self.send_json(404, status(404, "NotFound", '%s "%s" not found'
                                                  % (res, name)))
            if sub == "status":
                body = {"status": body.get("status", {})}
                self.st.stats["status_patch:" + res] += 1
            fn = merge_patch if ctype == "application/merge-patch+json" else strategic_merge_patch
            new = fn(obj, body)
            obj = self.st.upsert(res, new)
        self.send_json(200, obj)

    def do_PUT(self):
        """Update (replace), as the real server: metadata.resourceVersion, when given, must
        be the stored one (409 Conflict otherwise); no create on update (404)."""
        r = self.api_prelude()
        if r is None:
            return
        res, ns, name, sub = r
        body = self.read_json()
        if not isinstance(body, dict) or not name or sub:
            return self.send_json(400, status(400, "BadRequest", "invalid update"))
        md = body.setdefault("metadata", {})
        if md.get("name") not in (None, name):
            return self.send_json(400, status(400, "BadRequest", "the name of the object (%s) "
                                              "does not match the name on the URL (%s)"
                                              % (md.get("name"), name)))
        md["name"] = name
        if ns:
            md["namespace"] = ns
        k = "%s/%s" % (ns, name) if RESOURCES[res][3] else name
        plural = RESOURCES[res][1]
        with self.st.lock:
            self.st.stats["update"] += 1
            old = self.st.objects[res].get(k)
            if old is None:
                return self.send_json(404, status(404, "NotFound", '%s "%s" not found'
                                                  % (plural, name)))
            want = md.get("resourceVersion")
            if want and want != old["metadata"]["resourceVersion"]:
                self.st.stats["conflicts"] += 1
                return self.send_json(409, status(
                    409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has '
                    "been modified; please apply your changes to the latest version and try "
                    "again" % (plural, name)))
            obj = self.st.upsert(res, body)
        self.send_json(200, obj)

    def do_DELETE(self):
        r = self.api_prelude()
        if r is None:
            return
        res, ns, name, sub = r
        k = "%s/%s" % (ns, name) if RESOURCES[res][3] else name
        with self.st.lock:
            old = self.st.delete(res, k)
        if old is None:
            return self.send_json(404, status(404, "NotFound", "not found"))
        self.send_json(200, old)

    # ---- control ----
    def control_get(self):
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        st = self.st
        if u.path == "/control/object":
            res = q.get("resource", "pods")
            with st.lock:
                obj = st.objects[res].get(q.get("key", ""))
            return self.send_json(200 if obj else 404, obj or {})
        if u.path == "/control/stats":
            with st.lock:
                doc = dict(st.stats)
                doc["rv"] = st.rv
                doc["clients"] = {c: dict(v) for c, v in st.by_client.items()}
                doc["counts"] = {r: len(o) for r, o in st.objects.items()}
            return self.send_json(200, doc)
        if u.path == "/control/writes":
            with st.lock:
                doc = {"items": list(st.writes), "holder": st.lease_holder()}
            return self.send_json(200, doc)
        self.send_json(404, {})

    def control_post(self):
        u = urlparse(self.path)
        body = self.read_json() or {}
        st = self.st
        p = u.path
        with st.lock:
            if p == "/control/apply":
                for o in body.get("objects", []):
                    st.upsert(o["resource"], o["object"])
            elif p == "/control/delete":
                st.delete(body["resource"], body["key"])
            elif p == "/control/drop":
                st.drop_gen += 1
                st.lock.notify_all()
            elif p == "/control/fail-binding" and body.get("pod"):
                # one pod's bindings: the next count of them, or all for seconds; drop: the
                # connection is cut instead of answered
                st.fail_pod[body["pod"]] = {
                    "count": int(body.get("count", 0)),
                    "until": time.monotonic() + float(body.get("seconds", 0)),
                    "code": int(body.get("code", 500)), "drop": bool(body.get("drop"))}
            elif p == "/control/fail-binding":
                st.fail_bindings = int(body.get("count", 1))
                st.fail_binding_code = int(body.get("code", 500))
                st.fail_binding_client = body.get("client")
            elif p == "/control/fail-events":
                st.fail_events = int(body.get("count", 1))
                st.fail_events_code = int(body.get("code", 500))
            elif p == "/control/evict-429":
                st.evict_429 = int(body.get("count", 1))
            elif p == "/control/slow":
                st.slow_ms = int(body.get("ms", 0))
            elif p == "/control/kubelet":
                st.kubelet = bool(body.get("start", True))
            elif p == "/control/binding-delay":
                st.binding_delay_ms = int(body.get("ms", 0))
            elif p == "/control/malformed":
                st.malformed = int(body.get("count", 1))
            elif p == "/control/crd":
                st.installed[body["resource"]] = bool(body.get("installed", True))
            elif p == "/control/identities":
                st.tokens = dict(body.get("tokens", {}))
                st.rules = dict(body.get("rules", {}))
            elif p == "/control/lease-fault":
                # {"client", "fault": 409|429|5xx|"drop", "count": N} or {"client", "faults":
                # [...]}: one fault per Lease call, in order
                faults = body.get("faults") or [body.get("fault", 500)] * int(body.get("count", 1))
                st.lease_faults[body.get("client", "*")] = [
                    f if f == "drop" else int(f) for f in faults]
            elif p == "/control/generate":
                generate(st, int(body.get("nodes", 0)), int(body.get("pods", 0)),
                         int(body.get("pending", 0)))
            elif p != "/control/compact" and p != "/control/churn":
                return self.send_json(404, {})
        if p == "/control/compact":
            st.compact(bool(body.get("drop", True)))
        if p == "/control/churn":
            res = churn(st, float(body.get("rate", 1000)), float(body.get("seconds", 5)))
            return self.send_json(200, res)
        self.send_json(200, {"ok": True})


# ---- PodDisruptionBudgets: the disruption controller and the eviction check ----
# pkg/controller/disruption/disruption.go (trySync: countHealthyPods, getExpectedPodCount,
# buildDisruptedPodMap, updatePdbStatus) and pkg/registry/core/pod/storage/eviction.go
# (canIgnorePDB, checkAndDecrement). Pods have no controllers here, so the expected count of a
# percentage or maxUnavailable budget is the number of matching pods (the real controller
# reads the scale of their controller).

DISRUPTION_TIMEOUT_S = 120  # disruption.go DeletionTimeout: a disrupted pod still running


def label_selector_matches(sel, labels):
    """metav1.LabelSelector; None selects nothing, {} everything (policy/v1)."""
    if sel is None:
        return False
    labels = labels or {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        op, k, vals = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def pod_ready(pod):
    """apipod.IsPodReady, with a pod that reports no Ready condition taken as ready when
    Running (the test pods carry no kubelet conditions)."""
    st = pod.get("status") or {}
    for c in st.get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return st.get("phase") == "Running"


def pdb_pods(st, pdb):
    ns = pdb["metadata"].get("namespace", "default")
    sel = (pdb.get("spec") or {}).get("selector")
    return [p for k, p in st.objects["pods"].items() if k.startswith(ns + "/") and
            label_selector_matches(sel, (p.get("metadata") or {}).get("labels"))]


def scaled(v, total):
    """GetScaledValueFromIntOrPercent(v, total, roundUp=true)."""
    if isinstance(v, str) and v.endswith("%"):
        return -(-int(v[:-1]) * total // 100)
    return int(v)


def pdb_status(st, pdb, now):
    """The status the disruption controller computes for pdb now."""
    pods = pdb_pods(st, pdb)
    spec = pdb.get("spec") or {}
    old = pdb.get("status") or {}
    names = {p["metadata"]["name"]: p for p in pods}
    disrupted = {}
    for n, t in (old.get("disruptedPods") or {}).items():
        p = names.get(n)
        if p is None or (p.get("metadata") or {}).get("deletionTimestamp"):
            continue
        try:
            when = calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ"))
        except (TypeError, ValueError):
            continue
        if when + DISRUPTION_TIMEOUT_S > now:
            disrupted[n] = t
    healthy = sum(1 for p in pods if not p["metadata"].get("deletionTimestamp") and
                  p["metadata"]["name"] not in disrupted and pod_ready(p))
    expected = len(pods)
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - scaled(spec["maxUnavailable"], expected))
    elif spec.get("minAvailable") is not None:
        desired = scaled(spec["minAvailable"], expected)
    else:
        desired = 0
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    out = {"observedGeneration": pdb["metadata"].get("generation", 1),
           "disruptionsAllowed": allowed, "currentHealthy": healthy,
           "desiredHealthy": desired, "expectedPods": expected,
           "conditions": [{"type": "DisruptionAllowed",
                           "status": "True" if allowed > 0 else "False",
                           "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                           "message": "",
                           "lastTransitionTime": now_rfc3339()}]}
    if disrupted:
        out["disruptedPods"] = disrupted
    return out


def pdb_store_status(st, pdb, status_doc):
    """Writes status_doc when it differs from pdb's (not counting transition times)."""
    def strip(s):
        s = copy.deepcopy(s or {})
        for c in s.get("conditions") or []:
            c.pop("lastTransitionTime", None)
        return s
    if strip(pdb.get("status")) == strip(status_doc):
        return
    new = copy.deepcopy(pdb)
    old_conds = {c.get("type"): c for c in (pdb.get("status") or {}).get("conditions") or []}
    for c in status_doc.get("conditions") or []:
        o = old_conds.get(c["type"])
        if o and o.get("status") == c["status"]:
            c["lastTransitionTime"] = o.get("lastTransitionTime", c["lastTransitionTime"])
    new["status"] = status_doc
    st.pdb_syncing = True
    try:
        st.upsert("poddisruptionbudgets", new)
    finally:
        st.pdb_syncing = False


def pdb_sync_all(st, res, obj):
    """State.pdb_sync: after a pod or a budget changed, the controller's recomputation of
    the budgets of its namespace (lock held)."""
    if getattr(st, "pdb_syncing", False) or res not in ("pods", "poddisruptionbudgets"):
        return
    ns = (obj.get("metadata") or {}).get("namespace", "default")
    now = time.time()
    for k, pdb in list(st.objects["poddisruptionbudgets"].items()):
        if k.startswith(ns + "/"):
            pdb_store_status(st, pdb, pdb_status(st, pdb, now))


def pdb_check_eviction(st, pod):
    """None when the pod may go (its one budget, if any, updated), else (code, Status)."""
    md, phase = pod["metadata"], (pod.get("status") or {}).get("phase", "Pending")
    if phase in ("Succeeded", "Failed", "Pending") or md.get("deletionTimestamp"):
        return None  # canIgnorePDB
    ns = md.get("namespace", "default")
    pdbs = [b for k, b in st.objects["poddisruptionbudgets"].items()
            if k.startswith(ns + "/") and
            label_selector_matches((b.get("spec") or {}).get("selector"), md.get("labels"))]
    if not pdbs:
        return None
    if len(pdbs) > 1:
        return (500, status(500, "InternalError", "This pod has more than one "
                            "PodDisruptionBudget, which the eviction subresource does not "
                            "support."))
    pdb = pdbs[0]
    s = pdb.get("status") or {}
    spec = pdb.get("spec") or {}
    if not pod_ready(pod):
        if spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow" or (
                s.get("currentHealthy", 0) >= s.get("desiredHealthy", 0) > 0):
            return None
    if s.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1):
        return (429, status(429, "TooManyRequests", "Cannot evict pod as it would violate the "
                            "pod's disruption budget."))
    allowed = s.get("disruptionsAllowed", 0)
    if allowed < 0:
        return (403, status(403, "Forbidden", "pdb disruptions allowed is negative"))
    if allowed == 0:
        doc = status(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's "
                     "disruption budget.")
        doc["details"] = {"causes": [{"reason": "DisruptionBudget", "message":
                          "The disruption budget %s needs %d healthy pods and has %d currently"
                          % (pdb["metadata"]["name"], s.get("desiredHealthy", 0),
                             s.get("currentHealthy", 0))}]}
        return (429, doc)
    new = copy.deepcopy(s)
    new["disruptionsAllowed"] = allowed - 1
    new.setdefault("disruptedPods", {})[md["name"]] = now_rfc3339()
    if new["disruptionsAllowed"] == 0:
        for c in new.get("conditions") or []:
            if c.get("type") == "DisruptionAllowed":
                c.update(status="False", reason="InsufficientPods")
    pdb_store_status(st, pdb, new)
    return None


def node_obj(i):
    return {"metadata": {"name": "node-%05d" % i, "labels": {
        "network.topology.nvidia.com/spine": "s%d" % (i // 1000),
        "network.topology.nvidia.com/block": "b%d" % (i // 100)}},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110",
                                       "nvidia.com/gpu": "8"}}}


def pod_obj(i, nodes, ver=0):
    spec = {"schedulerName": "default-scheduler", "containers": [{
        "name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    if nodes:
        spec["nodeName"] = "node-%05d" % (i % nodes)
    return {"metadata": {"name": "pod-%06d" % i, "namespace": "bench",
                         "labels": {"app": "a%d" % (i % 50)},
                         "annotations": {"version": str(ver)}},
            "spec": spec, "status": {"phase": "Running"}}


def generate(st, nodes, pods, pending=0):
    """Creates nodes and pods (bound round-robin) in bulk, and pending pods for the
    scheduler "muster" (namespace bench, named pend-NNNNNN); lock held."""
    for i in range(nodes):
        st.upsert("nodes", node_obj(i))
    for i in range(pods):
        st.upsert("pods", pod_obj(i, nodes))
    for i in range(pending):
        p = pod_obj(i, 0)
        p["metadata"]["name"] = "pend-%06d" % i
        p["spec"]["schedulerName"] = "muster"
        p["status"] = {"phase": "Pending"}
        st.upsert("pods", p)


def churn(st, rate, seconds):
    """Modifies existing pods at a fixed rate for a while; returns what was done."""
    with st.lock:
        keys = sorted(st.objects["pods"])
        nodes = len(st.objects["nodes"])
    if not keys:
        return {"events": 0}
    n = 0
    t0 = time.monotonic()
    end = t0 + seconds
    step = 0.01
    while time.monotonic() < end:
        target = int((time.monotonic() - t0) * rate)
        with st.lock:
            while n < target:
                k = keys[n % len(keys)]
                i = int(k.split("-")[-1])
                st.upsert("pods", pod_obj(i, nodes, n + 1))
                n += 1
        time.sleep(step)
    return {"events": n, "seconds": time.monotonic() - t0, "rv": st.rv}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: the mirror opens ten sources' connections at once,
    # the SYNs past the fifth were dropped and retried by the kernel a second later, which
    # added a second to every initial sync. A real API server listens with the system's
    # backlog (Go: somaxconn).
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        # Clients that hang up (the mirror stopping, a test dropping) are normal here.
        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--token")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--history", type=int, default=1000)
    ap.add_argument("--bookmark-seconds", type=float, default=1.0)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(args.history)
    srv.token = args.token
    srv.verbose = args.verbose
    srv.bookmark_s = args.bookmark_seconds
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    port = srv.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        import os
        os.rename(args.port_file + ".tmp", args.port_file)
    else:
        print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
