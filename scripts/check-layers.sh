#!/bin/sh
# scripts/check-layers.sh [ROOT] - fails when an #include points up the layers.
#
# Top-level folders, lowest first (README "What is inside"):
#   base < model < store < scheduler < web, clients < server, cli
# Inside scheduler/, one static library per subfolder, linked downward only
# (docs/design-notes.md "The scheduler's parts"); each may include the headers of
# the subfolders listed for it here, and the public vocabulary scheduler.h:
#   reason  -
#   view    reason
#   queue   view reason
#   place   view reason
#   record  place queue view reason
#   preempt record place queue view reason
#   cycle   preempt record place queue view reason
# and scheduler/'s own files (the entry points) may include every one of them. Two
# subfolders that include each other, or a subfolder including an entry point's
# header (core.h, staged.h), fail too: both are an include pointing up.
# Prints each offending include as FILE:LINE: and exits 1; exits 0 when none.
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

allowed_top() { # the folders a top-level folder may include from
    case $1 in
    base) echo "base" ;;
    model) echo "base model" ;;
    store) echo "base model store" ;;
    scheduler) echo "base model store scheduler" ;;
    web | clients) echo "base model store scheduler $1" ;;
    server | cli) echo "base model store scheduler web clients server cli" ;;
    *) echo "" ;;
    esac
}
allowed_sub() { # the scheduler subfolders a subfolder may include from ("top": scheduler/)
    case $1 in
    reason) echo "reason" ;;
    view) echo "view reason" ;;
    queue) echo "queue view reason" ;;
    place) echo "place view reason" ;;
    record) echo "record place queue view reason" ;;
    preempt) echo "preempt record place queue view reason" ;;
    cycle) echo "cycle preempt record place queue view reason" ;;
    top) echo "top cycle preempt record place queue view reason" ;;
    *) echo "" ;;
    esac
}

# Where each header of the product lives: "name folder [subfolder]".
index=$(mktemp)
trap 'rm -f "$index"' EXIT
for top in base model store scheduler web clients server cli; do
    find "$top" -name '*.h' | while read -r h; do
        sub=top
        case $h in scheduler/*/*) sub=$(echo "$h" | cut -d/ -f2) ;; esac
        echo "$(basename "$h") $top $sub"
    done
done >"$index"

for top in base model store scheduler web clients server cli; do
    ok_top=$(allowed_top "$top")
    for f in $(find "$top" -name '*.c' -o -name '*.h' | sort); do
        sub=top
        case $f in scheduler/*/*) sub=$(echo "$f" | cut -d/ -f2) ;; esac
        ok_sub=$(allowed_sub "$sub")
        grep -n '^#include "' "$f" | while IFS= read -r line; do
            n=${line%%:*}
            inc=$(echo "$line" | sed 's/^[0-9]*:#include "\([^"]*\)".*/\1/')
            where=$(awk -v h="$(basename "$inc")" '$1 == h { print $2 " " $3; exit }' "$index")
            [ -n "$where" ] || continue # a system or generated header
            itop=${where% *}
            isub=${where#* }
            case " $ok_top " in
            *" $itop "*) ;;
            *)
                echo "$f:$n: $top/ includes $itop/'s $inc (points up)"
                echo x >>"$index.bad"
                continue
                ;;
            esac
            if [ "$top" = scheduler ] && [ "$itop" = scheduler ]; then
                [ "$inc" = scheduler.h ] && continue
                case " $ok_sub " in
                *" $isub "*) ;;
                *)
                    echo "$f:$n: scheduler/$sub includes scheduler/$isub's $inc (points up)"
                    echo x >>"$index.bad"
                    ;;
                esac
            fi
        done
    done
done
if [ -s "$index.bad" ]; then
    rm -f "$index.bad"
    exit 1
fi
rm -f "$index.bad"
echo "layers: every include points down"
