#!/usr/bin/env python3
"""Writes the Megatron PP-timer fixtures of tests/import/megatron_timers_test.cpp.

The files have the form that the PP-timer patch of the PP-Schedule-Visualization project writes
(Victarry/Megatron-LM commit ad3bc3a22adc79827dc1b35619ad6813078e621b, megatron/core/
pipeline_parallel/schedules.py): per pipeline rank, json.dump of a dict that maps
"forward-{mb}-start|end" and "backward-{mb}-start|end" (interleaved: "forward-{chunk}-{mb}-...",
the mb counted per chunk) to torch.cuda.Event.elapsed_time from the rank's start event (float32
milliseconds, as Python floats), in the order the patch creates its events, then
"total-execution-time"; named
event_times_PP{pp}_VPP{vpp}_TPxCPxDP_rank_{r}_pp_rank_{p}_rank_{g}.json.

There is no GPU or Megatron here, so the times come from a small event simulation of Megatron's
own orders (non-interleaved 1F1B; interleaved 1F1B with microbatch groups of pp) with fixed
forward/backward costs, a p2p delay and a barrier skew; each time is rounded to float32 as CUDA
events report it. Run it from this directory; it prints every time in ns (decimal text rounded
to the nearest ns) for the test's expectations. Standard library only.
"""
import json
import os
import struct
from decimal import Decimal, ROUND_HALF_UP

P2P_MS = 0.03
SKEW_MS = [0.0, 0.0041]  # when each rank's start event is recorded after the barrier


def f32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


def cost(kind, stage):
    return (0.8 + 0.05 * stage) if kind == "F" else (1.6 + 0.1 * stage)


def megatron_1f1b_order(pp, rank, m):
    warmup = min(pp - rank - 1, m)
    order = [("F", 0, mb) for mb in range(warmup)]
    for i in range(m - warmup):
        order += [("F", 0, warmup + i), ("B", 0, i)]
    order += [("B", 0, m - warmup + i) for i in range(warmup)]
    return order


def megatron_interleaved_order(pp, v, rank, m):
    total = m * v
    warmup = min((pp - rank - 1) * 2 + (v - 1) * pp, total)

    def chunk_mb(k, forward):
        chunk = (k % (pp * v)) // pp
        if not forward:
            chunk = v - 1 - chunk
        return chunk, (k // (pp * v)) * pp + k % pp

    order = [("F",) + chunk_mb(k, True) for k in range(warmup)]
    for k in range(total - warmup):
        order += [("F",) + chunk_mb(k + warmup, True), ("B",) + chunk_mb(k, False)]
    order += [("B",) + chunk_mb(k, False) for k in range(total - warmup, total)]
    return order


def simulate(pp, v, orders):
    """Global-clock (start, end) of every (rank, kind, chunk, mb), each rank in its order."""
    stages = pp * v
    done = {}  # (kind, stage, mb) -> end
    times = {}
    clock = list(SKEW_MS[:pp])
    cursor = [0] * pp
    while any(cursor[r] < len(orders[r]) for r in range(pp)):
        progressed = False
        for rank in range(pp):
            if cursor[rank] == len(orders[rank]):
                continue
            kind, chunk, mb = orders[rank][cursor[rank]]
            stage = chunk * pp + rank
            if kind == "F":
                need = None if stage == 0 else ("F", stage - 1, mb)
            else:
                need = ("F", stage, mb) if stage == stages - 1 else ("B", stage + 1, mb)
            if need is not None and need not in done:
                continue
            ready = 0.0 if need is None else done[need] + (0.0 if need[1] == stage else P2P_MS)
            start = max(clock[rank], ready)
            end = start + cost(kind, stage)
            done[(kind, stage, mb)] = end
            times[(rank, kind, chunk, mb)] = (start, end)
            clock[rank] = end
            cursor[rank] += 1
            progressed = True
        assert progressed, "the orders hang"
    return times, clock


def key(kind, chunk, mb, chunked):
    name = "forward" if kind == "F" else "backward"
    return f"{name}-{chunk}-{mb}" if chunked else f"{name}-{mb}"


def write_run(directory, pp, v, m, orders):
    os.makedirs(directory, exist_ok=True)
    times, clock = simulate(pp, v, orders)
    chunked = v > 1
    for rank in range(pp):
        events = {}
        for chunk in range(v):
            for mb in range(m):
                for kind in ("F", "B"):
                    start, end = times[(rank, kind, chunk, mb)]
                    events[key(kind, chunk, mb, chunked) + "-start"] = f32(start - SKEW_MS[rank])
                    events[key(kind, chunk, mb, chunked) + "-end"] = f32(end - SKEW_MS[rank])
        events["total-execution-time"] = f32(max(clock) + 0.01 - SKEW_MS[rank])
        name = f"event_times_PP{pp}_VPP{v}_TPxCPxDP_rank_0_pp_rank_{rank}_rank_{rank}.json"
        with open(os.path.join(directory, name), "w") as f:
            json.dump(events, f)
        print(directory, "rank", rank)
        ordered = sorted(
            ((value, k) for k, value in events.items() if k != "total-execution-time"))
        for value, k in ordered:
            ns = (Decimal(repr(value)) * 1000000).quantize(Decimal(1), rounding=ROUND_HALF_UP)
            print(f"  {k:24} {value!r:>22} ms {ns} ns")


if __name__ == "__main__":
    write_run("1f1b_pp2_m3", 2, 1, 3, [megatron_1f1b_order(2, r, 3) for r in range(2)])
    write_run("interleaved_pp2_v2_m4", 2, 2, 4,
              [megatron_interleaved_order(2, 2, r, 4) for r in range(2)])
