#!/usr/bin/env python3
"""Draws the pipelens-view icon: assets/desktop/icons/<N>x<N>/apps/pipelens-view.png for the
hicolor sizes and scalable/apps/pipelens-view.svg (the hicolor theme's own layout), from one list of shapes, so every size shows the same
picture: four ranks running a GPipe-like schedule (forward blue, backward orange) whose idle
corners are the bubbles pipelens measures.

Invariants: the output is deterministic (no timestamps in the PNGs: the same bytes every run),
so the committed files are exactly what this script writes; tests/install/test_generators.py checks that.

Usage: scripts/packaging/make_icons.py [OUT_DIR]   (default assets/desktop/icons)
"""
import pathlib
import struct
import sys
import zlib

SIZES = (16, 24, 32, 48, 64, 128, 256)
SUPERSAMPLE = 4  # samples per pixel side: edges are antialiased by averaging

BACKGROUND = (0x1F, 0x26, 0x33)
FORWARD = (0x5B, 0x9B, 0xF8)
BACKWARD = (0xF2, 0xA0, 0x3D)

# The background: a rounded square in unit coordinates (x0, y0, x1, y1, radius).
TILE = (0.0625, 0.0625, 0.9375, 0.9375, 0.16)
LEFT, STEP, WIDTH, GAP = 0.16, 0.06, 0.16, 0.012
ROW_TOP, ROW_PITCH, ROW_HEIGHT = 0.2, 0.155, 0.12
RANKS = 4


def bars():
    """(x0, y0, x1, y1, colour) of every bar, painted in order."""
    shapes = []
    for rank in range(RANKS):
        y0 = ROW_TOP + rank * ROW_PITCH
        forward = LEFT + rank * STEP
        backward = LEFT + (RANKS - 1) * STEP + WIDTH + (RANKS - 1 - rank) * STEP
        shapes.append((forward + GAP, y0, forward + WIDTH - GAP, y0 + ROW_HEIGHT, FORWARD))
        shapes.append((backward + GAP, y0, backward + WIDTH - GAP, y0 + ROW_HEIGHT, BACKWARD))
    return shapes


def inside_tile(x, y):
    x0, y0, x1, y1, r = TILE
    if not (x0 <= x <= x1 and y0 <= y <= y1):
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def colour_at(x, y, shapes):
    """(r, g, b, a) of the sample at unit coordinates (x, y)."""
    if not inside_tile(x, y):
        return (0, 0, 0, 0)
    for x0, y0, x1, y1, colour in shapes:
        if x0 <= x < x1 and y0 <= y < y1:
            return colour + (255,)
    return BACKGROUND + (255,)


def render(size):
    """RGBA rows of the icon at `size` pixels, colours premultiplied while averaging."""
    shapes = bars()
    samples = size * SUPERSAMPLE
    rows = []
    for py in range(size):
        row = bytearray()
        for px in range(size):
            total = [0, 0, 0, 0]
            for sy in range(SUPERSAMPLE):
                for sx in range(SUPERSAMPLE):
                    r, g, b, a = colour_at((px * SUPERSAMPLE + sx + 0.5) / samples,
                                           (py * SUPERSAMPLE + sy + 0.5) / samples, shapes)
                    total[0] += r * a
                    total[1] += g * a
                    total[2] += b * a
                    total[3] += a
            alpha = total[3] // (SUPERSAMPLE * SUPERSAMPLE)
            if total[3] == 0:
                row += bytes(4)
            else:
                row += bytes(round(total[c] / total[3]) for c in range(3)) + bytes([alpha])
        rows.append(bytes(row))
    return rows


def png(size, rows):
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) +
            chunk(b"IEND", b""))


def hex_colour(colour):
    return "#%02x%02x%02x" % colour


def svg():
    x0, y0, x1, y1, r = TILE
    unit = 256
    lines = ['<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" '
             'viewBox="0 0 256 256">',
             f'  <rect x="{x0 * unit:g}" y="{y0 * unit:g}" width="{(x1 - x0) * unit:g}" '
             f'height="{(y1 - y0) * unit:g}" rx="{r * unit:g}" fill="{hex_colour(BACKGROUND)}"/>']
    for bx0, by0, bx1, by1, colour in bars():
        lines.append(f'  <rect x="{bx0 * unit:.2f}" y="{by0 * unit:.2f}" '
                     f'width="{(bx1 - bx0) * unit:.2f}" height="{(by1 - by0) * unit:.2f}" '
                     f'fill="{hex_colour(colour)}"/>')
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "assets/desktop/icons")
    for size in SIZES:
        folder = out / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pipelens-view.png").write_bytes(png(size, render(size)))
    (out / "scalable" / "apps").mkdir(parents=True, exist_ok=True)
    (out / "scalable" / "apps" / "pipelens-view.svg").write_text(svg())


if __name__ == "__main__":
    main()
