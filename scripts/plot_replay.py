#!/usr/bin/python3
"""scripts/plot_replay.py OUTDIR PNG - plots a `muster replay --out OUTDIR` run of two policies
(docs/replay.md): utilisation over time, and the wait of each job against its arrival, one-node
jobs and gangs apart, one column per policy.

scripts/plot_replay.py --lengths PNG OUTDIR... - the same trace shape replayed for several
lengths (one `muster replay --out OUTDIR` of two policies each, e.g. starve-6h.csv ...
starve-48h.csv): the gangs' p99 and max wait against the trace's length, per policy, and
the utilisation while jobs arrive.

Needs python3-matplotlib (Debian); no test runs it.
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def lengths(png, outs):
    pts = {}  # policy -> [(hours, p99 min, max min, util)]
    for out in outs:
        doc = json.load(open(os.path.join(out, "replay.json")))
        jobs = rows(os.path.join(out, doc["runs"][0]["policy"] + "-jobs.csv"))
        hours = max(float(r["arrival_s"]) for r in jobs) / 3600
        for run in doc["runs"]:
            g = run["waitBySize"].get("32+", {})
            pts.setdefault(run["policy"], []).append(
                (hours, g.get("p99WaitSeconds", 0) / 60, g.get("maxWaitSeconds", 0) / 60,
                 run["utilisationWhileArriving"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for (policy, p), colour in zip(sorted(pts.items()), ("tab:red", "tab:blue", "tab:green")):
        p.sort()
        x = [q[0] for q in p]
        axes[0].plot(x, [q[1] for q in p], "o-", color=colour, label=policy + ": p99")
        axes[0].plot(x, [q[2] for q in p], "x--", color=colour, label=policy + ": max")
        axes[1].plot(x, [q[3] for q in p], "o-", color=colour, label=policy)
    axes[0].set_xlabel("trace length (hours)")
    axes[0].set_ylabel("32-node gangs' wait (minutes)")
    axes[0].legend(fontsize=8, loc="upper left")
    axes[1].set_xlabel("trace length (hours)")
    axes[1].set_ylabel("utilisation while jobs arrive")
    axes[1].set_ylim(0.8, 1.0)
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--lengths":
        lengths(sys.argv[2], sys.argv[3:])
        return
    out, png = sys.argv[1], sys.argv[2]
    doc = json.load(open(os.path.join(out, "replay.json")))
    runs = doc["runs"]
    fig, axes = plt.subplots(2, len(runs), figsize=(6 * len(runs), 7), sharey="row", squeeze=False)
    for k, run in enumerate(runs):
        label = run["policy"]
        util = rows(os.path.join(out, label + "-util.csv"))
        jobs = rows(os.path.join(out, label + "-jobs.csv"))
        ax = axes[0][k]
        ax.plot([float(r["t_s"]) / 3600 for r in util], [float(r["utilisation"]) for r in util],
                lw=0.6, color="tab:blue")
        ax.set_title("%s: utilisation %.3f while jobs arrive" %
                     (label, run["utilisationWhileArriving"]), fontsize=9)
        ax.set_xlabel("hours")
        ax.set_ylabel("GPUs in use / GPUs")
        ax.set_ylim(0, 1.05)
        ax = axes[1][k]
        for size, colour, name in (("1", "tab:gray", "one-node jobs"),
                                   ("32+", "tab:red", "32-node gangs")):
            pts = [(float(r["arrival_s"]) / 3600, float(r["wait_s"]) / 60)
                   for r in jobs if r["size"] == size and r["wait_s"]]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=2 if size == "1" else 8,
                           color=colour, label=name, alpha=0.6)
        g = run["waitBySize"].get("32+", {})
        ax.set_title("gangs' wait: p99 %.0f min, max %.0f min" %
                     (g.get("p99WaitSeconds", 0) / 60, g.get("maxWaitSeconds", 0) / 60), fontsize=9)
        ax.set_xlabel("arrival (hours)")
        ax.set_ylabel("wait (minutes)")
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(os.path.basename(doc["trace"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
