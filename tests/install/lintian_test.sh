#!/usr/bin/env bash
# lintian on the Debian packages install.deb_packages built: no error may be left. Warnings are
# printed (docs/install.md lists those known and why they stay).
#
# Usage: lintian_test.sh DEB_DIR   (exit 0 passed, 1 errors, 77 skipped: no lintian)
set -euo pipefail
if ! command -v lintian >/dev/null; then
    echo "lintian test skipped: lintian is not installed (Debian package lintian)"
    exit 77
fi
mapfile -t debs < <(ls "$1"/*.deb)
[ ${#debs[@]} -gt 0 ] || { echo "lintian test: no .deb in $1" >&2; exit 1; }
status=0
report=$(lintian "${debs[@]}" 2>&1) || status=$?
[ -n "$report" ] && echo "$report"
# lintian exits 1 when it found errors, anything else but 0 when it could not check.
if [ "$status" -gt 1 ]; then
    echo "lintian test: lintian could not check the packages (exit $status)" >&2
    exit 1
fi
if [ "$status" -ne 0 ] || grep -q '^E: ' <<<"$report"; then
    echo "lintian test: errors above" >&2
    exit 1
fi
echo "lintian test: no errors in ${debs[*]##*/}"
