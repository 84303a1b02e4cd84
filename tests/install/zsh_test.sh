#!/usr/bin/env bash
# The generated zsh completion (_pipelens) parses, and, loaded through compinit, registers
# itself for both programs.
#
# Usage: zsh_test.sh COMPLETION_DIR   (exit 0 passed, 1 failed, 77 skipped: no zsh)
set -euo pipefail
if ! command -v zsh >/dev/null; then
    echo "zsh test skipped: zsh is not installed (Debian package zsh)"
    exit 77
fi
zsh -n "$1/_pipelens"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
registered=$(ZDOTDIR="$home" zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit
    compinit -u -d "$2/compdump"; print -r -- "$_comps[pipelens] $_comps[pipelens-view]"' \
    _ "$1" "$home")
[ "$registered" = "_pipelens _pipelens" ] || { echo "zsh: registered '$registered'" >&2; exit 1; }
echo "zsh test: _pipelens parses and completes pipelens and pipelens-view"
