#!/usr/bin/env bash
# ab_restart.sh OLD_BUILD NEW_BUILD ROUNDS [NODES]: the restart of a store (bench_sched
# --reopen) by two builds alternating, ROUNDS rounds of three reopens each. Each build first
# makes its own store (`bench_sched basic --nodes NODES --sync none --keep`; 50,000 nodes by
# default: 500,000 bound pods), since the builds' store schemas may differ. Prints each
# round's median per build, the median of those, the median CPU time of the restarting
# thread over every reopen (steadier than the wall time on a shared machine; the decoding
# workers' and helpers' CPU is not in it), and new / old of both.
#   bench/ab_restart.sh /work/wt-base/build-lead build-rel 5
set -eu
old=${1:?old build dir}; new=${2:?new build dir}; rounds=${3:?rounds}; nodes=${4:-50000}
tmp=$(mktemp -d /tmp/muster-ab-restart-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$old/bin/bench_sched" basic --nodes "$nodes" --sync none --keep "$tmp/old" > /dev/null
"$new/bin/bench_sched" basic --nodes "$nodes" --sync none --keep "$tmp/new" > /dev/null
for r in $(seq "$rounds"); do
    for b in old new; do
        dir=$old
        [ $b = new ] && dir=$new
        out=$("$dir/bin/bench_sched" --reopen "$tmp/$b" --rounds 3 2>&1)
        ms=$(sed -n 's/^restart median *\([0-9.]*\) ms.*/\1/p' <<<"$out")
        echo "$b wall $ms"
        sed -n "s/^restart *[0-9.]* ms, \([0-9.]*\) ms CPU.*/$b cpu \1/p" <<<"$out"
        echo "round $r: $b $ms ms" >&2
    done
done | sort -k1,1 -k2,2 -k3,3n | awk '
    { k = $1 " " $2; v[k] = v[k] " " $3; n[k]++; a[k, n[k]] = $3 }
    END {
        for (k in v) m[k] = a[k, int((n[k] + 1) / 2)]
        for (b = 0; b < 2; b++) {
            x = b ? "new" : "old"
            print x ":" v[x " wall"] "  median " m[x " wall"] " ms; the restarting thread'"'"'s CPU, median of " n[x " cpu"] ": " m[x " cpu"] " ms"
        }
        if (m["old wall"] > 0 && m["old cpu"] > 0)
            printf "new / old: %.2fx the wall time, %.2fx the CPU\n", m["new wall"] / m["old wall"], m["new cpu"] / m["old cpu"]
    }'
