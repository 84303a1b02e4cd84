#!/usr/bin/env bash
# `pipelens import` over every file of a folder of other tools' traces (HolisticTraceAnalysis's
# tests/data, say), one file at a time, each with no --format: prints a Markdown table with one
# verdict per file — "imported", or the one-line refusal — the format the file was read as,
# the events it held where the reader says, the time and the peak memory. A crash (a signal)
# or a limit hit is its own verdict, never silence. Each import runs under a wall-clock limit
# and an address-space limit, so one huge or hostile file cannot stall the sweep.
#
#   scripts/import_corpus.sh FOLDER [PIPELENS] [LIMIT_S] [LIMIT_MB]
#
# Exit status: 1 when any file crashed or hit a limit, 0 otherwise (a refusal is a verdict).
set -uo pipefail
folder=${1:?usage: scripts/import_corpus.sh FOLDER [PIPELENS] [LIMIT_S] [LIMIT_MB]}
pipelens=${2:-build/app/cli/pipelens}
limit_s=${3:-300}
limit_mb=${4:-4096}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| file | size | format | verdict | events | time (s) | peak (MiB) |"
echo "|---|---:|---|---|---:|---:|---:|"
failed=0
while IFS= read -r -d '' file; do
    name=${file#"$folder"/}
    bytes=$(stat -c %s "$file")
    rm -f "$work"/out.db*
    (
        ulimit -v $((limit_mb * 1024))
        exec /usr/bin/time -f '%e %M' -o "$work/time" \
            timeout "$limit_s" "$pipelens" import "$file" --out "$work/out.db"
    ) >"$work/stdout" 2>"$work/stderr"
    status=$?
    # GNU time puts "Command exited with non-zero status N" before its own line.
    read -r seconds peak_kb < <(tail -n 1 "$work/time" 2>/dev/null) || { seconds=?; peak_kb=0; }
    [[ $peak_kb =~ ^[0-9]+$ ]] || { seconds=?; peak_kb=0; }
    message=$(grep -v '^Command ' "$work/stderr" | head -n 1)
    format=$(sed -n 's/^imported .* (\([a-z-]*\)) as run .*/\1/p' "$work/stdout")
    [ -z "$format" ] && format=$(printf '%s' "$message" | sed -n 's/.*(read as \([a-z-]*\))$/\1/p')
    [ -z "$format" ] && format="none"
    events=$(printf '%s' "$message" | sed -n 's/.*among the \([0-9]*\) events.*/\1/p')
    if [ "$status" -eq 0 ]; then
        verdict="imported"
    elif [ "$status" -eq 124 ]; then
        verdict="TIME LIMIT (${limit_s} s)"; failed=1
    elif [ "$status" -ge 128 ] || [ -z "$message" ]; then
        verdict="CRASH (exit $status)"; failed=1
    else
        # The refusal without the command's prefix and the path (the table names the file).
        verdict=${message#pipelens import: }
        verdict=${verdict//"$file"/FILE}
        verdict=${verdict//|/\\|}
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$bytes" "$format" "$verdict" \
        "${events:--}" "$seconds" "$((peak_kb / 1024))"
done < <(find "$folder" -type f -print0 | sort -z)
exit $failed
