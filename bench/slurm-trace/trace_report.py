#!/usr/bin/env python3
"""trace_report.py - the numbers of a Slurm trace run, and side-by-side tables.

  trace_report.py --slurm SUBMISSIONS.tsv SLURMCTLD.LOG --nodes N --out DIR [--starve S]
      Reads trace_submit.py's submissions and slurmctld's log (ms timestamps): per job the
      submit ("_slurm_rpc_submit_batch_job: JobId="), start ("sched: Allocate JobId=", or
      "backfill: Started JobId=" / "sched/backfill: _start_job: Started JobId=") and end
      ("_job_complete: JobId=N done"). Writes DIR/jobs.csv (id, jobid, pods, submit_s,
      start_s, end_s, wait_s, by: main or backfill) and DIR/summary.json in the layout of
      one run of `muster replay`'s replay.json (waitBySize with the same size classes and
      the same p99: the ceil(0.99 n)-th smallest; utilisationWhileArriving: node-seconds
      used over the cluster from the first submission to the last, as muster's until the
      last arrival; a job never started counts its wait to the end of the log; starved:
      waited longer than --starve, default 1 h plus the longest limit, as muster replay's
      default bound), and prints it.

  trace_report.py --compare LABEL=FILE[:INDEX] ...
      A markdown table of runs side by side: FILE is a summary.json written above, or a
      replay.json of muster replay (INDEX picks its run, default 0).
"""
import collections
import datetime
import json
import math
import os
import re
import sys

CLASSES = [("1", 1, 1), ("2-7", 2, 7), ("8-31", 8, 31), ("32+", 32, 1 << 30)]
TS = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (.*)$")
SUBMIT = re.compile(r"_slurm_rpc_submit_batch_job: JobId=(\d+)")
START = re.compile(r"(sched: Allocate|backfill: Started|sched/backfill: _start_job: Started)"
                   r" JobId=(\d+)")
END = re.compile(r"_job_complete: JobId=(\d+) done")
TIMEOUT = re.compile(r"Time limit exhausted for JobId=(\d+)")


def stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f").timestamp()


def read_log(path):
    ev = collections.defaultdict(dict)
    killed = set()
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            m = TS.match(line)
            if not m:
                continue
            t, msg = stamp(m.group(1)), m.group(2)
            last = t
            s = SUBMIT.search(msg)
            if s:
                ev[s.group(1)].setdefault("submit", t)
                continue
            s = START.search(msg)
            if s:
                ev[s.group(2)].setdefault("start", t)
                ev[s.group(2)].setdefault("by", "main" if s.group(1).startswith("sched: Alloc")
                                          else "backfill")
                continue
            s = END.search(msg)
            if s:
                ev[s.group(1)].setdefault("end", t)
                continue
            s = TIMEOUT.search(msg)
            if s:
                killed.add(s.group(1))
    return ev, killed, last


def size_class(pods):
    for name, lo, hi in CLASSES:
        if lo <= pods <= hi:
            return name
    return "1"


def stats(waits):
    waits = sorted(waits)
    n = len(waits)
    p99 = math.ceil(0.99 * n)
    return {"jobs": n, "meanWaitSeconds": sum(waits) / n, "p50WaitSeconds": waits[(n - 1) // 2],
            "p99WaitSeconds": waits[p99 - 1 if p99 else 0], "maxWaitSeconds": waits[-1]}


def slurm(args):
    subs, logp = args[0], args[1]
    opts = dict(zip(args[2::2], args[3::2]))
    nodes = int(opts["--nodes"])
    out = opts["--out"]
    os.makedirs(out, exist_ok=True)
    ev, killed, log_end = read_log(logp)
    jobs = []
    with open(subs) as f:
        next(f)
        for line in f:
            jid, sid, pods, arrival, runtime, limit = line.rstrip("\n").split("\t")[:6]
            jobs.append({"id": jid, "jobid": sid, "pods": int(pods), "arrival": float(arrival),
                         "limit": int(limit), **ev.get(sid, {})})
    if not jobs:
        sys.exit("no jobs in %s" % subs)
    missing = [j["id"] for j in jobs if "submit" not in j]
    if missing:
        sys.exit("%d submitted jobs have no submit line in the log (first: %s)"
                 % (len(missing), missing[0]))
    t0 = min(j["submit"] for j in jobs)
    last_submit = max(j["submit"] for j in jobs)
    end = max([j.get("end", j.get("start", t0)) for j in jobs] + [log_end or t0])
    longest = max(j["limit"] for j in jobs)
    starve = float(opts.get("--starve", 3600 + longest))
    waits = collections.defaultdict(list)
    unstarted = collections.Counter()
    starved = []
    with open(out + "/jobs.csv", "w") as f:
        f.write("id,jobid,pods,submit_s,start_s,end_s,wait_s,by\n")
        for j in jobs:
            started = "start" in j
            w = (j["start"] if started else end) - j["submit"]
            c = size_class(j["pods"])
            waits[c].append(w)
            unstarted[c] += not started
            if not started or w > starve:
                starved.append({"id": j["id"], "pods": j["pods"], "waitSeconds": w,
                                "started": started})
            rel = lambda k: "%.3f" % (j[k] - t0) if k in j else ""
            f.write("%s,%s,%d,%s,%s,%s,%.3f,%s\n" % (j["id"], j["jobid"], j["pods"], rel("submit"),
                                                     rel("start"), rel("end"), w, j.get("by", "")))

    def used(until):
        busy = 0.0
        for j in jobs:
            if "start" in j and j["start"] < until:
                busy += j["pods"] * (min(j.get("end", end), until) - j["start"])
        return busy / (nodes * (until - t0)) if until > t0 else 0.0

    by = {c: dict(stats(w), unstarted=unstarted[c]) for c, w in waits.items()}
    summary = {"policy": "slurm sched/backfill", "jobs": len(jobs),
               "finished": sum("end" in j for j in jobs),
               "utilisationWhileArriving": used(last_submit), "utilisation": used(end),
               "waitBySize": by, "starveBoundSeconds": starve, "starvedJobs": len(starved),
               "starved": starved[:100], "killedByLimit": len(killed & {j["jobid"] for j in jobs}),
               "backfilledJobs": sum(j.get("by") == "backfill" for j in jobs),
               "hours": (end - t0) / 3600.0}
    with open(out + "/summary.json", "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    print(json.dumps({k: v for k, v in summary.items() if k != "starved"}, indent=1,
                     sort_keys=True))


def load_run(spec):
    label, _, path = spec.partition("=")
    index = 0
    if re.search(r":\d+$", path):
        path, _, i = path.rpartition(":")
        index = int(i)
    doc = json.load(open(path))
    return label, doc["runs"][index] if "runs" in doc else doc


def compare(specs):
    runs = [load_run(s) for s in specs]

    def cls(r, c, k):
        s = r["waitBySize"].get(c)
        return "%s" % format(round(s[k]), ",") if s else "-"

    rows = [("utilisation while jobs arrive / overall", lambda r: "%.3f / %.3f" % (
        r["utilisationWhileArriving"], r["utilisation"]))]
    for c in ("32+", "1"):
        rows.append(("%s-node jobs: mean / p99 / max wait (s)" % ("32" if c == "32+" else c),
                     lambda r, c=c: "%s / %s / %s" % (cls(r, c, "meanWaitSeconds"),
                                                       cls(r, c, "p99WaitSeconds"),
                                                       cls(r, c, "maxWaitSeconds"))))
    rows.append(("starved (bound in s)", lambda r: "%d (%s)" % (
        r["starvedJobs"], format(round(r["starveBoundSeconds"]), ","))))
    rows.append(("unstarted at the end", lambda r: "%d" % sum(
        s.get("unstarted", 0) for s in r["waitBySize"].values())))
    rows.append(("backfilled jobs", lambda r: format(r.get("backfilledJobs", 0), ",")))
    print("| | " + " | ".join(label for label, _ in runs) + " |")
    print("| --- |" + " --- |" * len(runs))
    for name, fn in rows:
        print("| %s | %s |" % (name, " | ".join(fn(r) for _, r in runs)))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--slurm":
        slurm(sys.argv[2:])
    elif len(sys.argv) > 2 and sys.argv[1] == "--compare":
        compare(sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
