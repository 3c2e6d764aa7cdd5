#!/usr/bin/env python3
"""trace_submit.py TRACE OUT.tsv [--until S] - submits a muster trace to Slurm in real time.

Each job of TRACE (CSV: examples/traces/*.csv, the columns muster replay reads; id,
arrival, pods, runtime and limit are used) is submitted at start + arrival seconds as

    sbatch --parsable -J <id> -N <pods> --exclusive --time=<limit/60> -o /dev/null
           --wrap 'sleep <runtime>'

Every pod of the trace is a whole node (the traces' pods ask for 8 GPUs of 8), so a job is
-N pods --exclusive; a job without a limit gets Slurm's partition default. Slurm's time
limits are whole minutes, so a limit that is not is refused (exit 2, naming the line): use a
trace made for it (scripts/gen_traces.py ... starve-slurm). Writes one line per job to
OUT.tsv: id, Slurm JobId, pods, arrival_s, runtime_s, limit_s, submitted (epoch ms, when
sbatch returned), lag_ms (how late sbatch was called against the arrival).
"""
import csv
import subprocess
import sys
import time


def load(path, until):
    jobs = []
    with open(path) as f:
        rows = [(n, line) for n, line in enumerate(f, 1)
                if line.strip() and not line.lstrip().startswith("#")]
    reader = csv.reader([line for _, line in rows])
    header = [h.strip() for h in next(reader)]
    for need in ("arrival", "pods", "runtime"):
        if need not in header:
            sys.exit("%s: no column '%s' in the header" % (path, need))
    col = {h: i for i, h in enumerate(header)}
    for (n, _), row in zip(rows[1:], reader):
        def get(name, default=""):
            i = col.get(name)
            return row[i].strip() if i is not None and i < len(row) and row[i].strip() else default
        try:
            arrival = float(get("arrival"))
            pods = int(get("pods"))
            runtime = float(get("runtime"))
            limit = int(float(get("limit", "0")))
        except ValueError as e:
            print("%s line %d: %s" % (path, n, e), file=sys.stderr)
            sys.exit(2)
        if limit % 60:
            print("%s line %d: column 'limit': Slurm limits are whole minutes, got %d s"
                  % (path, n, limit), file=sys.stderr)
            sys.exit(2)
        if until is not None and arrival >= until:
            continue
        jobs.append((arrival, get("id", "j%d" % n), pods, runtime, limit))
    jobs.sort()
    return jobs


def main():
    args = sys.argv[1:]
    until = None
    if "--until" in args:
        i = args.index("--until")
        until = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    jobs = load(args[0], until)
    out = open(args[1], "w")
    out.write("id\tjobid\tpods\tarrival_s\truntime_s\tlimit_s\tsubmitted_ms\tlag_ms\n")
    t0 = time.time()
    failed = 0
    for arrival, jid, pods, runtime, limit in jobs:
        delay = t0 + arrival - time.time()
        if delay > 0:
            time.sleep(delay)
        lag = (time.time() - t0 - arrival) * 1000.0
        cmd = ["sbatch", "--parsable", "-J", jid, "-N", str(pods), "--exclusive",
               "-o", "/dev/null", "--wrap", "sleep %d" % max(1, round(runtime))]
        if limit > 0:
            cmd[2:2] = ["--time=%d" % (limit // 60)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            print("sbatch %s: %s" % (jid, r.stderr.strip()), file=sys.stderr)
            continue
        sid = r.stdout.strip().split(";")[0]
        if not sid.isdigit():
            failed += 1
            print("sbatch %s: no job id in its answer %r" % (jid, r.stdout), file=sys.stderr)
            continue
        out.write("%s\t%s\t%d\t%.3f\t%.0f\t%d\t%d\t%.0f\n"
                  % (jid, sid, pods, arrival, runtime, limit,
                     time.time() * 1000, lag))
        out.flush()
    out.close()
    print("submitted %d jobs (%d failed) in %.0f s" % (len(jobs) - failed, failed,
                                                       time.time() - t0), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
