#!/usr/bin/env bash
# The installed set works on its own: `cmake --install` into a temporary prefix, the prefix moved
# elsewhere (nothing may name the build folder or the prefix it was installed to), then the
# demo's steps (scripts/demo.sh, on a smaller real run) from an unrelated folder, with PATH
# holding only the prefix's bin/ and the system's. `run` must find the installed runtime in
# libexec/pipelens/ (it is not on PATH), `view` the installed viewer (its screenshot, under
# Xvfb). Also: every generated man page renders without a warning, the bash completion
# completes commands, schedule kinds and trace files, and every completed kind is accepted.
#
# Usage: install_test.sh BUILD_DIR    (exit 0: passed; 1: a check failed, with the reason)
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/installed" >/dev/null
# As if the build folder were deleted: no installed file names it (or the prefix installed to).
if grep -rlF -e "$build" -e "$work/installed" "$work/installed"; then
    fail "the installed files above name the build folder or the install prefix"
fi
mv "$work/installed" "$work/prefix"
prefix="$work/prefix"
export PATH="$prefix/bin:/usr/bin:/bin"
mkdir "$work/elsewhere" && cd "$work/elsewhere"

expected=(bin/pipelens share/pipelens/examples/default.toml share/man/man1/pipelens.1.gz
    share/man/man1/pipelens-simulate.1.gz share/bash-completion/completions/pipelens
    share/zsh/vendor-completions/_pipelens share/doc/pipelens/copyright)
if [ -x "$prefix/bin/pipelens-view" ]; then
    expected+=(share/man/man1/pipelens-view.1.gz share/bash-completion/completions/pipelens-view
        share/applications/pipelens-view.desktop
        share/mime/packages/pipelens.xml share/icons/hicolor/48x48/apps/pipelens-view.png
        share/icons/hicolor/scalable/apps/pipelens-view.svg)
fi
if [ -x "$prefix/libexec/pipelens/pipelens-runtime" ]; then
    expected+=(share/man/man1/pipelens-run.1.gz share/doc/pipelens-runtime/copyright)
fi
for file in "${expected[@]}"; do
    [ -f "$prefix/$file" ] || fail "not installed: $file"
done
[ "$(command -v pipelens)" = "$prefix/bin/pipelens" ] || fail "pipelens is not the installed one"
[ "$(pipelens --version)" = "pipelens 0.1.0" ] || fail "pipelens --version: $(pipelens --version)"
if command -v pipelens-runtime >/dev/null; then fail "pipelens-runtime is on PATH"; fi

examples="$prefix/share/pipelens/examples"
pipelens simulate --out demo.db >/dev/null
pipelens simulate "$examples/zero_bubble_v.toml" --out demo.db >/dev/null
# The application id the MIME type matches (assets/desktop/pipelens-trace.xml): "PPLN" at 68.
[ "$(od -An -c -j68 -N4 demo.db | tr -d ' ')" = PPLN ] || fail "a trace's header has no PPLN id"
if [ -x "$prefix/libexec/pipelens/pipelens-runtime" ]; then
    pipelens run --schedule 1F1B --pp 2 --m 4 --model mlp --hidden 32 --layers 4 --batch 16 \
        --profile --out demo.db >/dev/null || fail "pipelens run from the prefix failed"
    pipelens calibrate demo.db --out calibrated.toml >/dev/null
    pipelens simulate calibrated.toml --schedule ZBVZeroBubble --v 2 >/dev/null
    pipelens explain --pp 2 --m 2 --model mlp --json >/dev/null
    echo "install test: run, calibrate and explain ran through the installed runtime"
fi
pipelens shard --block mlp --mesh 'dp=2,tp=4' --out demo.db >/dev/null
pipelens summary demo.db >/dev/null
pipelens replay demo.db --run 1 --check >/dev/null
pipelens bisect demo.db --run 1 --other-run 2 >/dev/null || [ $? -eq 1 ]
pipelens export demo.db --run 1 --svg run.svg --chrome run.json >/dev/null
[ -s run.svg ] && [ -s run.json ] || fail "export wrote nothing"
if pipelens check "$examples/swapped_recvs.csv" >/dev/null 2>&1; then
    fail "the broken schedule passed its check"
fi

if [ -x "$prefix/bin/pipelens-view" ] && command -v xvfb-run >/dev/null; then
    xvfb-run -a pipelens view demo.db --run 1 --select 1RECV_F2 --size 800x600 \
        --screenshot view.png >/dev/null 2>&1 || fail "pipelens view --screenshot failed"
    [ "$(head -c 4 view.png | tail -c 3)" = "PNG" ] || fail "the viewer wrote no PNG"
    echo "install test: pipelens view started the installed viewer and wrote its screenshot"
fi

if command -v man >/dev/null; then
    for page in "$prefix"/share/man/man1/*.1.gz; do
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
        [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
    done
fi

complete_words() {  # the bash completion's words for the command line "$@" (last: the word)
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _pipelens
             printf "%s\n" "${COMPREPLY[@]}"' _ \
        "$prefix/share/bash-completion/completions/pipelens" "$@"
}
[ "$(complete_words pipelens simul)" = simulate ] || fail "completion of 'simul'"
[ "$(complete_words pipelens summary --r)" = --run ] || fail "completion of 'summary --r'"
touch a.toml
[ "$(complete_words pipelens summary "")" = demo.db ] || fail "completion of a trace file"
kinds=$(complete_words pipelens schedule --kind "")
[ "$(echo "$kinds" | wc -l)" -ge 7 ] || fail "completion lists too few kinds: $kinds"
for kind in $kinds; do
    pipelens schedule --kind "$kind" --pp 2 --m 4 >/dev/null ||
        fail "completion offers schedule kind $kind, which pipelens schedule refuses"
done
[ "$(complete_words pipelens simulate --schedule ZBV)" = ZBVZeroBubble ] ||
    fail "completion of --schedule ZBV"
echo "install test: the installed set works from $prefix"
