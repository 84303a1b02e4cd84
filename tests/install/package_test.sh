#!/usr/bin/env bash
# The Debian packages: built with cpack into OUT_DIR (kept there for the lintian test), their
# control fields checked (names, the runtime's own package, no LibTorch in `pipelens`'s
# dependencies, the runtime's recommended BLAS), every library a packaged program links found in
# a Debian package the package declares, then both unpacked into an empty root (dpkg -x) and the
# demo's first steps run from that root's files: `pipelens --version`, `simulate`, `run` through
# the unpacked runtime, and the viewer's screenshot under Xvfb.
#
# Usage: package_test.sh BUILD_DIR OUT_DIR   (exit 0 passed, 1 failed, 77 skipped: no dpkg-deb)
set -euo pipefail
build=$(cd "$1" && pwd)
out=$2
for tool in cpack dpkg-deb dpkg-shlibdeps; do
    if ! command -v "$tool" >/dev/null; then
        echo "package test skipped: $tool is not installed (Debian package dpkg-dev)"
        exit 77
    fi
done
fail() { echo "package test: $*" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out"
(cd "$out" && cpack --config "$build/CPackConfig.cmake" -B "$out" >cpack.log 2>&1) ||
    { cat "$out/cpack.log" >&2; fail "cpack failed"; }
cli=$(ls "$out"/pipelens_*.deb)
runtime=$(ls "$out"/pipelens-runtime_*.deb 2>/dev/null || true)

# Whole outputs in variables before grep: grep -q ending a pipe early would fail the pipe.
field() { dpkg-deb --field "$1" "$2"; }
[ "$(field "$cli" Package)" = pipelens ] || fail "the CLI package is not named pipelens"
cli_depends=$(field "$cli" Depends)
echo "pipelens depends on: $cli_depends"
[[ ${cli_depends,,} != *torch* ]] || fail "pipelens depends on LibTorch: $cli_depends"
cli_files=$(dpkg-deb --contents "$cli")
[[ $cli_files != *pipelens-runtime* ]] || fail "the runtime is in the pipelens package"
if [ -n "$runtime" ]; then
    [ "$(field "$runtime" Package)" = pipelens-runtime ] || fail "runtime package's name"
    runtime_depends=$(field "$runtime" Depends)
    echo "pipelens-runtime depends on: $runtime_depends"
    [[ $runtime_depends == *"pipelens (= $(field "$cli" Version))"* ]] ||
        fail "pipelens-runtime does not depend on its pipelens"
    [[ $runtime_depends == *libtorch* ]] || fail "pipelens-runtime does not declare LibTorch"
    [[ $(field "$runtime" Recommends) == *libopenblas0-openmp* ]] ||
        fail "pipelens-runtime does not recommend an optimised BLAS (libopenblas0-openmp)"
fi

root="$out/root"
mkdir -p "$root"
for deb in $cli $runtime; do
    dpkg-deb -x "$deb" "$root"
done

# Every library a packaged program needs directly comes from a package it declares (libraries
# from no Debian package, such as a CUDA under /usr/local, cannot be declared; they are listed).
# One dpkg -S for all of them: each is asked for under /lib and /usr/lib (merged /usr).
declared_packages() {  # "libc6 (>= 2.35), pipelens (= 0.1.0)" -> one name a line
    field "$1" Depends | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/ //g; s/:.*//'
}
linked_libraries() {  # "PROGRAM LIBRARY PATH" for every library a package's programs need
    local program
    for program in $(dpkg-deb --contents "$1" | awk '$1 ~ /^-..x/ {print $6}'); do
        program="$root/${program#./}"
        ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
            grep -Ff <(readelf -d "$program" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p') |
            while read -r library path; do
                echo "$(basename "$program") $library $(readlink -f "$path")"
            done
    done
}
for deb in $cli $runtime; do
    mapfile -t declared < <(declared_packages "$deb")
    mapfile -t links < <(linked_libraries "$deb")
    owners=$(for link in "${links[@]}"; do
                 path=${link##* }; echo "${path#/usr}"; echo "/usr${path#/usr}"
             done | xargs dpkg -S 2>/dev/null || true)
    for link in "${links[@]}"; do
        read -r program library path <<<"$link"
        owner=$(echo "$owners" | awk -v a="${path#/usr}" -v b="/usr${path#/usr}" \
            '$2 == a || $2 == b {sub(/:.*/, "", $1); print $1; exit}')
        if [ -z "$owner" ]; then
            echo "package test: $program links $library ($path), from no Debian package"
        elif [[ " ${declared[*]} " != *" $owner "* ]]; then
            fail "$program links $library from $owner, which $(basename "$deb") does not declare"
        fi
    done
done

export PATH="$root/usr/bin:/usr/bin:/bin"
cd "$out"
[ "$(pipelens --version)" = "pipelens 0.1.0" ] || fail "pipelens --version from the root"
pipelens simulate --schedule 1F1B --pp 4 --m 8 --out root.db >/dev/null || fail "simulate"
pipelens summary root.db >/dev/null || fail "summary"
if [ -n "$runtime" ]; then
    pipelens run --schedule 1F1B --pp 2 --m 2 --model mlp --hidden 16 --layers 2 --batch 4 \
        --out root.db >/dev/null || fail "run through the unpacked runtime"
fi
if command -v xvfb-run >/dev/null; then
    xvfb-run -a pipelens view root.db --run 1 --size 800x600 --screenshot root.png >/dev/null 2>&1 ||
        fail "the unpacked viewer's screenshot"
fi
echo "package test: $(basename "$cli") ${runtime:+and $(basename "$runtime") }built, unpacked and run"
