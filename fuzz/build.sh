#!/bin/sh
# fuzz/build.sh [BUILD_DIR] - builds the libFuzzer harnesses (clang only).
#
# The sources of base/, model/, store/, scheduler/ and web/ plus server/config.c are
# compiled once with
# coverage instrumentation, AddressSanitizer and UndefinedBehaviorSanitizer into a
# static archive (so each harness links only the objects it needs); each
# fuzz/fuzz_<name>.c becomes BUILD_DIR/fuzz_<name>. The normal CMake build is untouched.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-fuzz}
CC=${CC:-clang}
mkdir -p "$out/obj"

pkgs="jansson yaml-0.1 lmdb libssl libcrypto zlib libevent libevent_openssl libevent_pthreads libpq"
cflags="-std=c11 -D_GNU_SOURCE -DMUSTER_SOURCE_DIR=\"$root\" -DMUSTER_VERSION=\"fuzz\"
  -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter -Werror
  -I$root/base -I$root/model -I$root/store -I$root/ship -I$root/scheduler $(for d in "$root"/scheduler/*/; do printf -- "-I%s " "$d"; done)-I$root/server -I$root/web
  $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lcivetweb -lhttp_parser -lpthread -lm"

objs=""
for src in "$root"/base/*.c "$root"/model/*.c "$root"/store/*.c "$root"/scheduler/*.c "$root"/scheduler/*/*.c \
    "$root"/web/*.c "$root"/ship/*.c "$root"/server/config.c; do
    dir=$(dirname "$src" | sed "s|^$root/||; s|/|_|g")
    obj="$out/obj/${dir}_$(basename "$src" .c).o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$(dirname "$src")" \
        -name '*.h' -newer "$obj")" ]; then
        # shellcheck disable=SC2086
        $CC $cflags -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    fi
    objs="$objs $obj"
done
rm -f "$out/libmuster_fuzz.a"
# shellcheck disable=SC2086
ar rcs "$out/libmuster_fuzz.a" $objs

for h in "$root"/fuzz/fuzz_*.c; do
    name=$(basename "$h" .c)
    # shellcheck disable=SC2086
    $CC $cflags -I"$root/fuzz" -fsanitize=fuzzer "$h" "$out/libmuster_fuzz.a" $libs \
        -o "$out/$name"
    echo "built $out/$name"
done
