#!/usr/bin/env bash
# ab_restart.sh OLD_BUILD NEW_BUILD ROUNDS [NODES]: the restart of a store (bench_sched
# --reopen) by two builds alternating, ROUNDS rounds of three reopens each. Each build first
# makes its own store (`bench_sched basic --nodes NODES --sync none --keep`; 50,000 nodes by
# default: 500,000 bound pods), since the builds' store schemas may differ. Prints each
# round's median per build, the median of those, and new / old.
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
        ms=$("$dir/bin/bench_sched" --reopen "$tmp/$b" --rounds 3 2>&1 |
            sed -n 's/^restart median *\([0-9.]*\) ms.*/\1/p')
        echo "$b $ms"
        echo "round $r: $b $ms ms" >&2
    done
done | sort -k1,1 -k2,2n | awk '
    { v[$1] = v[$1] " " $2; n[$1]++; a[$1, n[$1]] = $2 }
    END {
        for (k in v) { m[k] = a[k, int((n[k] + 1) / 2)]; print k ":" v[k] "  median " m[k] " ms" }
        if (m["old"] > 0) printf "new / old: %.2fx\n", m["new"] / m["old"]
    }'
