#!/bin/sh
# scripts/check-layers.sh [ROOT] - fails when an #include points up the layers.
#
# Top-level folders, lowest first (README "What is inside"):
#   base < model < store < scheduler < web, clients < server, cli; store < ship < server, cli
# Inside scheduler/, one static library per subfolder, linked downward only
# (docs/design-notes.md "The scheduler's parts"); each may include the headers of
# the subfolders listed for it here, and the public vocabulary scheduler.h:
#   reason  -
#   view    reason
#   queue   view reason
#   place   view reason
#   reserve place view reason
#   record  reserve place queue view reason
#   preempt record reserve place queue view reason
#   cycle   preempt record reserve place queue view reason
# and scheduler/'s own files (the entry points) may include every one of them. Two
# subfolders that include each other, or a subfolder including an entry point's
# header (core.h, staged.h), fail too: both are an include pointing up.
# A quoted include is the header beside the file when there is one (each folder has its
# own internal.h), else the header of that name in the tree.
# Prints each offending include as FILE:LINE: and exits 1; exits 0 when none.
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

dirs="base model store ship scheduler web clients server cli"
hdrs=$(mktemp)
trap 'rm -f "$hdrs"' EXIT
# shellcheck disable=SC2086
find $dirs -name '*.h' >"$hdrs"
# shellcheck disable=SC2086
find $dirs \( -name '*.c' -o -name '*.h' \) | sort | xargs grep -Hn '^#include "' |
    awk -v hdrs="$hdrs" '
    function part(path, a, n) { # "top sub" of a path: sub is "top" outside scheduler/*/
        n = split(path, a, "/")
        return a[1] " " ((a[1] == "scheduler" && n > 2) ? a[2] : "top")
    }
    BEGIN {
        top["base"] = "base"; top["model"] = "base model"; top["store"] = "base model store"
        top["scheduler"] = "base model store scheduler"
        top["ship"] = "base model store ship"
        top["web"] = "base model store scheduler web"
        top["clients"] = "base model store scheduler clients"
        top["server"] = top["cli"] = "base model store ship scheduler web clients server cli"
        sub_["reason"] = "reason"; sub_["view"] = "view reason"
        sub_["queue"] = "queue view reason"; sub_["place"] = "place view reason"
        sub_["reserve"] = "reserve place view reason"
        sub_["record"] = "record reserve place queue view reason"
        sub_["preempt"] = "preempt record reserve place queue view reason"
        sub_["cycle"] = "cycle preempt record reserve place queue view reason"
        sub_["top"] = "top cycle preempt record reserve place queue view reason"
        while ((getline h < hdrs) > 0) {
            have[h] = 1
            n = split(h, a, "/")
            if (!(a[n] in where)) where[a[n]] = part(h)
        }
    }
    {
        file = $0; sub(/:.*/, "", file)
        line = $0; sub(/^[^:]*:/, "", line); num = line; sub(/:.*/, "", num)
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
        base = inc; sub(/.*\//, "", base)
        dir = file; sub(/[^\/]*$/, "", dir)
        if ((dir inc) in have) next # a header beside the file: its own folder
        if (!(base in where)) next # a system or generated header
        split(part(file), f, " "); split(where[base], i, " ")
        if (index(" " top[f[1]] " ", " " i[1] " ") == 0) {
            printf "%s:%s: %s/ includes %s/'"'"'s %s (points up)\n", file, num, f[1], i[1], inc
            bad = 1
        } else if (f[1] == "scheduler" && i[1] == "scheduler" && base != "scheduler.h" &&
                   index(" " sub_[f[2]] " ", " " i[2] " ") == 0) {
            printf "%s:%s: scheduler/%s includes scheduler/%s'"'"'s %s (points up)\n", file, num,
                   f[2], i[2], inc
            bad = 1
        }
    }
    END {
        if (bad) exit 1
        print "layers: every include points down"
    }'
