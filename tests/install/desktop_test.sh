#!/usr/bin/env bash
# The desktop entry (assets/desktop/pipelens-view.desktop) as desktop-file-validate judges it,
# and its links to what is installed beside it: the icon it names exists in every hicolor size
# with the pixel size its folder says, and the MIME type it opens is the one we define.
#
# Usage: desktop_test.sh SOURCE_DIR   (exit 0 passed, 1 failed, 77 skipped: no validator)
set -euo pipefail
desktop="$1/assets/desktop"
if ! command -v desktop-file-validate >/dev/null; then
    echo "desktop test skipped: desktop-file-validate is not installed (Debian package desktop-file-utils)"
    exit 77
fi
fail() { echo "desktop test: $*" >&2; exit 1; }
output=$(desktop-file-validate "$desktop/pipelens-view.desktop" 2>&1) || fail "$output"
[ -z "$output" ] || fail "desktop-file-validate: $output"
icon=$(sed -n 's/^Icon=//p' "$desktop/pipelens-view.desktop")
for size in 16 24 32 48 64 128 256; do
    png="$desktop/icons/${size}x${size}/apps/$icon.png"
    [ -f "$png" ] || fail "no $png"
    # Width and height: big-endian at bytes 16..23 of the PNG's IHDR.
    [ "$(od -An -tu1 -j16 -N8 "$png" | awk '{print $3*256+$4 "x" $7*256+$8}')" = "${size}x${size}" ] ||
        fail "$png is not ${size}x${size}"
done
[ -f "$desktop/icons/scalable/apps/$icon.svg" ] || fail "no scalable icon"
mime=$(sed -n 's/^MimeType=\(.*\);$/\1/p' "$desktop/pipelens-view.desktop")
grep -q "<mime-type type=\"$mime\">" "$desktop/pipelens-trace.xml" ||
    fail "the entry opens $mime, which pipelens-trace.xml does not define"
echo "desktop test: pipelens-view.desktop is valid; icon $icon in 7 sizes and SVG; opens $mime"
