#!/bin/sh
# tests/layers_selftest.sh ROOT - scripts/check-layers.sh passes on the tree, and fails,
# naming the file, on a copy with one include pointing up (each case on a fresh copy).
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check="$root/scripts/check-layers.sh"

sh "$check" "$root" >/dev/null || { echo "FAIL: the tree itself does not pass"; exit 1; }

# case FILE INCLUDE: a copy where FILE includes INCLUDE must fail, naming FILE
case_up() {
    rm -rf "$tmp/t" && mkdir "$tmp/t"
    for d in base model store ship scheduler web clients server cli; do cp -R "$root/$d" "$tmp/t/"; done
    printf '#include "%s"\n' "$2" >>"$tmp/t/$1"
    if out=$(sh "$check" "$tmp/t" 2>&1); then
        echo "FAIL: $1 including $2 passed the check"
        exit 1
    fi
    echo "$out" | grep -q "^$1:" || { echo "FAIL: the check did not name $1: $out"; exit 1; }
    echo "ok: $1 including $2 is refused"
}
case_up scheduler/view/view.c place.h       # view -> place: up
case_up scheduler/place/place_fit.c cycle.h # place -> cycle: up
case_up scheduler/queue/queue_share.c preempt.h
case_up scheduler/record/why_record.c preempt.h # record and preempt would include each other
case_up scheduler/cycle/cycle.c core.h      # a part including the entry points' header
case_up store/objects.c view.h              # store -> scheduler
case_up scheduler/sched.c api.h             # scheduler -> web
case_up ship/ship.c scheduler.h             # ship -> scheduler: the scheduler is above it
case_up store/audit.c ship.h                # store -> ship
