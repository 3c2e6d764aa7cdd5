#!/usr/bin/env python3
"""Leader takeover time: two musterd replicas in bind mode with --leader-elect against the
test API server (tests/kubeapi/server.py). Each round SIGKILLs the leader, creates a pod for
muster right after, and measures the time from the kill to that pod's binding by the new
leader (the API server's log of binding calls names the caller). The killed replica is then
restarted (a new identity, as a new pod's hostname_pid would be) and the next round waits
until it follows and is ready.

    bench/bench_takeover.py [--build build] [--rounds 20] [--lease 15s --renew 10s --retry 2s]

Prints each round and the median and max. Stdlib only.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def http(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read() or b"null")
    except Exception:  # noqa: BLE001 - a replica being killed or starting
        return None


def wait_file(path, proc, seconds=30):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        if proc.poll() is not None:
            sys.exit("process exited early: see %s" % os.path.dirname(path))
        time.sleep(0.02)
    sys.exit("no port file %s" % path)


class Bench:
    def __init__(self, args):
        self.a = args
        self.tmp = tempfile.mkdtemp(prefix="muster-bench-takeover-")
        self.procs = {}
        self.serial = 0

    def start_api(self):
        pf = os.path.join(self.tmp, "api.port")
        self.api = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/kubeapi/server.py"),
                                     "--port-file", pf, "--bookmark-seconds", "0.5"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = "http://127.0.0.1:%d" % wait_file(pf, self.api)
        kc = os.path.join(self.tmp, "kubeconfig")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: t\n"
                    "  cluster:\n    server: %s\ncontexts:\n- name: t\n  context: {cluster: t, "
                    "user: u}\nusers:\n- name: u\n  user: {}\n" % self.url)
        self.kubeconfig = kc
        nodes = [{"resource": "nodes", "object": {"metadata": {"name": "n%d" % i}, "status": {
            "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}} for i in range(4)]
        http("POST", self.url + "/control/apply", {"objects": nodes})

    def start_replica(self, slot):
        self.serial += 1
        ident = "replica%d-%d" % (slot, self.serial)
        d = os.path.join(self.tmp, ident)
        os.makedirs(d)
        pf = os.path.join(d, "port")
        log = open(os.path.join(d, "musterd.log"), "w")
        p = subprocess.Popen([os.path.join(self.a.build, "bin/musterd"), "--data-dir",
                              os.path.join(d, "data"), "--listen", "127.0.0.1:0", "--port-file",
                              pf, "--kubeconfig", self.kubeconfig, "--scheduler-name", "muster",
                              "--log-level", "warn", "--leader-elect",
                              "--leader-elect-lease-duration", self.a.lease,
                              "--leader-elect-renew-deadline", self.a.renew,
                              "--leader-elect-retry-period", self.a.retry,
                              "--leader-elect-identity", ident], stdout=log, stderr=log)
        self.procs[slot] = (p, "http://127.0.0.1:%d" % wait_file(pf, p), ident)

    def role(self, slot):
        doc = http("GET", self.procs[slot][1] + "/readyz")
        return doc and doc.get("role")

    def wait_roles(self, seconds=120):
        """Waits until one replica leads and the other follows and is ready."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            roles = {s: self.role(s) for s in self.procs}
            if sorted(map(str, roles.values())) == ["follower", "leader"]:
                return [s for s, r in roles.items() if r == "leader"][0]
            time.sleep(0.05)
        sys.exit("no leader and ready follower within %d s" % seconds)

    def bound_by(self, pod):
        o = http("GET", self.url + "/control/object?resource=pods&key=default/" + pod)
        if not o or not (o.get("spec") or {}).get("nodeName"):
            return None
        log = http("GET", self.url + "/control/writes") or {"items": []}
        for w in log["items"]:
            if w["pod"] == "default/" + pod and w["verb"] == "binding" and w["code"] == 201:
                return w["client"]
        return None

    def round(self, i):
        leader = self.wait_roles()
        p, _, ident = self.procs[leader]
        pod = "takeover-%d" % i
        t0 = time.monotonic()
        p.send_signal(signal.SIGKILL)
        http("POST", self.url + "/control/apply", {"objects": [{"resource": "pods", "object": {
            "metadata": {"name": pod, "namespace": "default"},
            "spec": {"schedulerName": "muster", "containers": [{"name": "c", "image": "x",
                     "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Pending"}}}]})
        while True:
            who = self.bound_by(pod)
            if who:
                break
            if time.monotonic() - t0 > 120:
                sys.exit("round %d: %s never bound" % (i, pod))
            time.sleep(0.02)
        dt = time.monotonic() - t0
        p.wait()
        if who == ident:
            sys.exit("round %d: bound by the killed leader" % i)
        self.start_replica(leader)
        return dt

    def run(self):
        self.start_api()
        self.start_replica(0)
        self.start_replica(1)
        times = []
        for i in range(self.a.rounds):
            dt = self.round(i)
            times.append(dt)
            print("round %2d: %.2f s" % (i + 1, dt), flush=True)
        print("lease %s, renew deadline %s, retry period %s, cycle interval 1 s: takeover over "
              "%d kills: median %.2f s, max %.2f s, min %.2f s"
              % (self.a.lease, self.a.renew, self.a.retry, len(times), statistics.median(times),
                 max(times), min(times)))

    def close(self):
        for p, _, _ in self.procs.values():
            if p.poll() is None:
                p.terminate()
                p.wait()
        self.api.kill()
        self.api.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--lease", default="15s")
    ap.add_argument("--renew", default="10s")
    ap.add_argument("--retry", default="2s")
    b = Bench(ap.parse_args())
    try:
        b.run()
    finally:
        b.close()


if __name__ == "__main__":
    main()
