#!/usr/bin/env python3
"""Measures, on a GPU with PyTorch, the TFLOP/s of the GEMM shapes `pipelens plan --gemm-shapes`
lists, as the CSV `pipelens plan --gemm-rates` reads:

  pipelens plan ... --gemm-shapes > shapes.csv
  python3 scripts/gemm_rates.py shapes.csv [--dtype bf16] [--device cuda:0] > rates.csv
  pipelens plan ... --gemm-rates rates.csv

Each shape is an m x k by k x n product in the dtype (fp32 as TF32, as the planner prices it):
5 products to warm up, then each of 20 timed alone between two CUDA events; the rate is the
median's. Progress goes to stderr, one line per shape.
"""
import argparse
import csv
import statistics
import sys

DTYPES = ("bf16", "fp16", "fp32")


def fail(message):
    """Bad input or no GPU: one line naming it, exit 2."""
    print(f"gemm_rates.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_shapes(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or [field.strip() for field in rows[0]] != ["m", "n", "k"]:
        fail(f"{path}: the header must be m,n,k (pipelens plan --gemm-shapes)")
    shapes = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            m, n, k = (int(field) for field in row)
        except ValueError:
            fail(f"{path}:{number}: {','.join(row)}: three whole numbers m,n,k")
        if min(m, n, k) <= 0:
            fail(f"{path}:{number}: sizes must be positive")
        shapes.append((m, n, k))
    return shapes


def measure(torch, shape, dtype, device, warmup=5, repeats=20):
    m, n, k = shape
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    for _ in range(warmup):
        torch.matmul(a, b)
    times_ms = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        end.synchronize()
        times_ms.append(start.elapsed_time(end))
    return 2.0 * m * n * k / (statistics.median(times_ms) * 1e-3) / 1e12


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", help="CSV m,n,k from pipelens plan --gemm-shapes")
    parser.add_argument("--dtype", choices=DTYPES, default="bf16")
    parser.add_argument("--device", default="cuda")
    options = parser.parse_args()
    shapes = read_shapes(options.shapes)
    try:
        import torch
    except ImportError as error:
        fail(f"needs PyTorch with a CUDA GPU ({error})")
    if not torch.cuda.is_available():
        fail("no CUDA GPU is visible; the rates must be the GPU's own")
    torch.backends.cuda.matmul.allow_tf32 = True
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[options.dtype]
    print("m,n,k,tflops")
    for index, shape in enumerate(shapes, start=1):
        tflops = measure(torch, shape, dtype, options.device)
        print("{},{},{},{:.1f}".format(*shape, tflops), flush=True)
        print(f"[{index}/{len(shapes)}] {shape[0]} x {shape[1]} x {shape[2]}: {tflops:.1f} TFLOP/s",
              file=sys.stderr)


if __name__ == "__main__":
    main()
