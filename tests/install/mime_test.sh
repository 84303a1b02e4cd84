#!/usr/bin/env bash
# The MIME type of pipelens traces (assets/desktop/pipelens-trace.xml), as a file manager sees
# it: a database of the system's types plus ours (update-mime-database), then GIO's content
# sniffing on a trace `pipelens simulate` writes (application/x-pipelens-trace) and on another
# SQLite file (still application/vnd.sqlite3: the type claims only pipelens traces).
#
# Usage: mime_test.sh SOURCE_DIR PIPELENS   (exit 0 passed, 1 failed, 77 skipped: no tools)
set -euo pipefail
source_dir=$1
pipelens=$2
for tool in update-mime-database gio python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "mime test skipped: $tool is not installed (Debian packages shared-mime-info, libglib2.0-bin)"
        exit 77
    fi
done
if [ ! -f /usr/share/mime/packages/freedesktop.org.xml ]; then
    echo "mime test skipped: no /usr/share/mime/packages/freedesktop.org.xml (shared-mime-info)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data/mime/packages" "$work/home"
cp /usr/share/mime/packages/freedesktop.org.xml "$work/data/mime/packages/"
cp "$source_dir/assets/desktop/pipelens-trace.xml" "$work/data/mime/packages/pipelens.xml"
update-mime-database "$work/data/mime" >/dev/null 2>&1 || { echo "update-mime-database refused pipelens-trace.xml" >&2; exit 1; }

"$pipelens" simulate --out "$work/trace.db" >/dev/null
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
db.execute("INSERT INTO meta VALUES (?, ?)", ("application", "other"))
db.commit()' "$work/other.db"

content_type() {
    XDG_DATA_DIRS="$work/data" XDG_DATA_HOME="$work/home" gio info -a standard::content-type "$1" |
        sed -n 's/.*standard::content-type: //p'
}
trace_type=$(content_type "$work/trace.db")
other_type=$(content_type "$work/other.db")
echo "trace.db: $trace_type; other.db: $other_type"
[ "$trace_type" = application/x-pipelens-trace ] || { echo "a trace is $trace_type" >&2; exit 1; }
[ "$other_type" = application/vnd.sqlite3 ] || { echo "another SQLite file is $other_type" >&2; exit 1; }
