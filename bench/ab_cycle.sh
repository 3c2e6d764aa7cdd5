#!/usr/bin/env bash
# ab_cycle.sh OLD_BUILD NEW_BUILD ROUNDS WORKLOAD...: bench_sched of two builds alternating,
# ROUNDS rounds; per build and workload the runs sorted, then the median. Basic and gang
# workloads: `cycle cpu` per 1,000 pods (ms); the Slurm shapes: the first cycle's CPU (ms).
#   bench/ab_cycle.sh /tmp/old/build-rel build-rel 5 slurm-gangs slurm-mixed basic
set -eu
old=${1:?old build dir}; new=${2:?new build dir}; rounds=${3:?rounds}; shift 3
for r in $(seq "$rounds"); do
    for b in "$old" "$new"; do
        for w in "$@"; do
            o=$("$b/bin/bench_sched" "$w" 2>&1)
            if [[ $w == slurm-* ]]; then
                v=$(sed -n 's/.*first cycle.*(CPU \([0-9.]*\) ms).*/\1/p' <<<"$o")
            else
                v=$(sed -n 's/.*cycle cpu.*total, \([0-9.]*\) ms per.*/\1/p' <<<"$o")
            fi
            echo "$b $w $v"
        done
    done
done | sort -k1,1 -k2,2 -k3,3n | awk '
    { k = $1 " " $2; v[k] = v[k] " " $3; n[k]++; a[k, n[k]] = $3 }
    END { for (k in v) print k ":" v[k] "  median " a[k, int((n[k] + 1) / 2)] }' | sort
