#!/usr/bin/env python3
"""Fails when a source file includes a header from a higher layer.

The layers are the design's (the README's Layout section): each folder may include its own
headers and those of the same or a lower layer, never a higher one, so the folders form no
cycle and the torch-free, GUI-free bottom stays usable on its own. A folder not listed here is
refused too, so a new folder has to be placed before it can land.

Usage: scripts/check_layers.py [REPO_ROOT]   (exit 0: clean; 1: violations, one line each)
"""
import pathlib
import re
import sys

# (layer, folder); the longest matching folder decides a file's layer.
LAYERS = [
    (0, "traces"),
    (1, "engine/schedule"),
    (1, "engine/tensor"),
    (1, "engine/text"),
    (2, "engine/experiment"),
    (2, "engine/sharding"),
    (2, "engine/stage_plan"),
    (2, "engine/analysis"),
    (3, "engine/recorder"),
    (4, "engine/run_record"),
    (5, "sim"),
    (5, "engine/runtime"),
    (5, "engine/import"),
    (6, "app/cli"),
    (6, "app/viewer"),
]
SOURCE_ROOTS = ("engine", "sim", "traces", "app")
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(path):
    """(layer, folder) of a repository-relative path, or None when no folder claims it."""
    best = None
    for layer, folder in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best[1]):
                best = (layer, folder)
    return best


def is_ours(include):
    return include.split("/", 1)[0] in SOURCE_ROOTS


def violations(root):
    found = []
    for top in SOURCE_ROOTS:
        for file in sorted((root / top).rglob("*")):
            if file.suffix not in SOURCE_SUFFIXES or not file.is_file():
                continue
            relative = file.relative_to(root).as_posix()
            own = layer_of(relative)
            if own is None:
                found.append(f"{relative}: its folder has no layer (add it to scripts/check_layers.py)")
                continue
            with open(file, encoding="utf-8", errors="replace") as text:
                for number, line in enumerate(text, 1):
                    match = INCLUDE.match(line)
                    if not match or not is_ours(match.group(1)):
                        continue
                    target = layer_of(match.group(1))
                    if target is None:
                        found.append(f"{relative}:{number}: includes {match.group(1)}, "
                                     "whose folder has no layer")
                    elif target[0] > own[0]:
                        found.append(f"{relative}:{number}: {own[1]} (layer {own[0]}) includes "
                                     f"{match.group(1)} from {target[1]} (layer {target[0]}): "
                                     "an include may only go to the same or a lower layer")
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    if not all((root / top).is_dir() for top in SOURCE_ROOTS):
        print(f"check_layers: {root} is not a pipelens checkout (needs {', '.join(SOURCE_ROOTS)})")
        return 2
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"check_layers: {len(found)} include(s) cross a layer upward")
        return 1
    print("check_layers: every include stays in its layer or goes down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
