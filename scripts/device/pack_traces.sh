#!/usr/bin/env bash
# pack_traces.sh DB OUT_FILE: DB compressed with xz into OUT_FILE, small enough for the device
# tool's 16 MiB per file (SQLite pages compress about 5 to 1). The GPU machine is not Debian:
# where the xz program is missing, Python's lzma writes the same format.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 DB OUT_FILE" >&2
    exit 2
fi
if command -v xz >/dev/null 2>&1; then
    xz -T0 -c "$1" >"$2"
else
    python3 -c 'import lzma, shutil, sys
with open(sys.argv[1], "rb") as source, lzma.open(sys.argv[2], "wb", preset=6) as target:
    shutil.copyfileobj(source, target, 1 << 20)' "$1" "$2"
fi
echo "pack_traces.sh: $1 ($(stat -c %s "$1") bytes) -> $2 ($(stat -c %s "$2") bytes)"
