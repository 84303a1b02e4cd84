#!/usr/bin/env python3
"""What runs inside each rank process of scripts/device/pytorch_fixtures.py, and the schedule
helpers both share.

    python3 scripts/device/pytorch_fixtures_worker.py SPEC_JSON   (RANK, WORLD_SIZE,
                                                                   MASTER_ADDR/PORT in the env)

A "pipeline" spec runs a tiny float64 MLP (LAYERS x (Linear + Tanh), seeded, split evenly over
the stages) with a PyTorch schedule class or a loaded CSV: one warm-up step, then one step that
is profiled (profile_dir) and/or whose losses and gradients are saved (result_dir). A "fr" spec
runs a few Gloo/NCCL ops, optionally hangs (both ranks receive first, under a short timeout),
and writes the flight recorder's pickle and JSON dumps.

Invariants: importing this module imports no torch (the driver must be able to report a
missing torch); every rank builds the same weights and data from fixed seeds, so runs with
different schedules are comparable layer by layer.
"""

import csv
import gzip
import inspect
import json
import os
import re
import shutil
import sys
from pathlib import Path

HIDDEN = 16
LAYERS = 8
PG_TIMEOUT_S = 30


def schedule_modules():
    from torch.distributed.pipelining import schedules

    return schedules


def is_single(cls):
    return issubclass(cls, schedule_modules().PipelineScheduleSingle)


def takes_defer(cls):
    try:
        return "defer_pp_recv" in inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return False


def mock_stage_class(missing_attributes):
    """A _PipelineStageBase without a process group, as PyTorch's test_schedule.py builds one."""
    from torch.distributed.pipelining.stage import _PipelineStageBase

    class FixtureMockStage(_PipelineStageBase):
        def __init__(self, stage_index, num_stages, group_size, group_rank):
            # _PipelineStageBase.__init__ would need a process group and a module.
            self.submod = None
            self.stage_index = stage_index
            self.num_stages = num_stages
            self.group_size = group_size
            self.group_rank = group_rank
            self.group = None
            self.stage_index_to_group_rank = {}
            self.p2p_per_edge = False

        def _create_grad_recv_info(self, *args, **kwargs):
            return None

        def _prepare_forward_infra(self, *args, **kwargs):
            return ()

        def _prepare_backward_infra(self, *args, **kwargs):
            return None

        def __getattr__(self, name):
            # Only reached for attributes a newer PyTorch reads and this mock lacks: recorded.
            if not name.startswith("__"):  # copy/pickle protocol probes are not that
                missing_attributes.add(name)
            raise AttributeError(name)

    FixtureMockStage.missing = missing_attributes
    return FixtureMockStage


def build_mock_schedule(cls, mock_cls, pp, v, m, defer):
    num_stages = 1 if is_single(cls) else pp * v
    kwargs = {"defer_pp_recv": True} if defer else {}
    if is_single(cls):
        return cls(mock_cls(0, pp, pp, 0), m, **kwargs)
    stages = [mock_cls(i * pp, num_stages, pp, 0) for i in range(v)]
    return cls(stages, m, **kwargs)


def stage_to_rank_of(cls, pp, v, m):
    """Ask PyTorch where each stage lives: the mapping a mock-built schedule carries."""
    if is_single(cls):
        return {s: s for s in range(pp)}
    sched = build_mock_schedule(cls, mock_stage_class(set()), pp, v, m, False)
    return {int(s): int(r) for s, r in sched.stage_index_to_group_rank.items()}


def placement_from_csv(path):
    """stage -> rank from a schedule CSV: the first row computing each stage, as _load_csv does."""
    mapping = {}
    with open(path, newline="") as f:
        for rank, row in enumerate(csv.reader(f)):
            for cell in row:
                match = re.match(r"^(\d+)(F|I|B|W)\d", cell.strip())
                if match:
                    mapping.setdefault(int(match.group(1)), rank)
    return mapping


def build_model(seed):
    import torch

    torch.manual_seed(seed)
    return [torch.nn.Linear(HIDDEN, HIDDEN, dtype=torch.float64) for _ in range(LAYERS)]


def worker_pipeline(spec):
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    from torch.distributed.pipelining import PipelineStage

    S = schedule_modules()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", 0) if spec["device"] == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(spec["backend"], rank=rank, world_size=world,
                            timeout=timedelta(seconds=spec.get("pg_timeout_s", PG_TIMEOUT_S)))
    layers = build_model(seed=0)
    torch.manual_seed(1)
    x = torch.randn(2 * spec["m"], HIDDEN, dtype=torch.float64, device=device)
    y = torch.randn(2 * spec["m"], HIDDEN, dtype=torch.float64, device=device)
    if spec.get("csv"):
        mapping = placement_from_csv(spec["csv"])
    else:
        cls = S.get_schedule_class(spec["kind"])
        mapping = stage_to_rank_of(cls, world, spec["v"], spec["m"])
    num_stages = len(mapping)
    per = LAYERS // num_stages
    mine = sorted(s for s, r in mapping.items() if r == rank)
    stages, layer_of = [], {}
    for s in mine:
        parts = []
        for i in range(s * per, (s + 1) * per):
            parts += [layers[i], torch.nn.Tanh()]
            layer_of[i] = layers[i]
        module = torch.nn.Sequential(*parts).to(device)
        stages.append(PipelineStage(module, s, num_stages, device))
    loss_fn = torch.nn.MSELoss()
    if spec.get("csv"):
        sched = S._PipelineScheduleRuntime(stages, spec["m"], loss_fn=loss_fn)
        sched._load_csv(spec["csv"], format=spec["csv_format"])
    else:
        cls = S.get_schedule_class(spec["kind"])
        if is_single(cls):
            sched = cls(stages[0], spec["m"], loss_fn=loss_fn)
        else:
            sched = cls(stages, spec["m"], loss_fn=loss_fn)
    losses = []

    def one_step():
        for stage in stages:
            stage.submod.zero_grad(set_to_none=True)
        losses.clear()
        args = (x,) if 0 in mine else ()
        kwargs = {"target": y, "losses": losses} if num_stages - 1 in mine else {}
        sched.step(*args, **kwargs)

    one_step()  # warm-up: shapes, communicators, allocator
    if spec.get("profile_dir"):
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if device.type == "cuda":
            activities.append(ProfilerActivity.CUDA)
        with profile(activities=activities, profile_memory=True) as prof:
            one_step()
            if device.type == "cuda":
                torch.cuda.synchronize()
        raw = Path(spec["profile_dir"]) / f"rank{rank}.pt.trace.json"
        prof.export_chrome_trace(str(raw))
        with open(raw, "rb") as src, gzip.open(str(raw) + ".gz", "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        raw.unlink()
    else:
        one_step()
    if spec.get("result_dir"):
        result = {"losses": [loss.detach().cpu() for loss in losses],
                  "grads": {i: layer.weight.grad.detach().cpu() for i, layer in layer_of.items()},
                  "bias_grads": {i: layer.bias.grad.detach().cpu() for i, layer in
                                 layer_of.items()}}
        torch.save(result, Path(spec["result_dir"]) / f"rank{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


def call_dump(function_names):
    """The first dump function this torch has, called with collectives and stack traces."""
    import torch

    c10d = torch._C._distributed_c10d
    for name in function_names:
        function = getattr(c10d, name, None)
        if function is None:
            continue
        # pickle dumps take (collectives, stack traces, only active); the JSON ones fewer
        for args in ((True, True, False), (True, False), (True,), ()):
            try:
                return name, function(*args)
            except TypeError:
                continue
    return None, None


def worker_flight_recorder(spec):
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    folder = Path(spec["dump_dir"])
    device = torch.device("cuda", 0) if spec["backend"] == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(spec["backend"], rank=rank, world_size=world,
                            timeout=timedelta(seconds=spec["pg_timeout_s"]))
    t = torch.ones(16, device=device)
    if world == 2:  # a clean prefix: one transfer each way and an all_reduce
        peer = 1 - rank
        if rank == 0:
            dist.send(t, peer)
            dist.recv(t, peer)
        else:
            dist.recv(t, peer)
            dist.send(t, peer)
    for _ in range(3):
        dist.all_reduce(t)
    if device.type == "cuda":
        torch.cuda.synchronize()
    note = {"rank": rank}
    if spec.get("hang"):
        try:  # both ranks post a receive first: each waits for the other until the timeout
            work = dist.irecv(t, 1 - rank)
            work.wait(timeout=timedelta(seconds=spec["pg_timeout_s"]))
            note["hang"] = "recv returned (no hang)"
        except Exception as error:
            note["hang"] = f"{type(error).__name__}: {error}"
    names = (["_dump_nccl_trace"] if spec["backend"] == "nccl" else []) + ["_dump_fr_trace"]
    used, blob = call_dump(names)
    if blob is not None:
        (folder / f"rank_{rank}").write_bytes(blob if isinstance(blob, bytes) else blob.encode())
    used_json, text = call_dump([n + "_json" for n in names])
    if text is not None:
        json_dir = Path(spec["json_dir"])
        json_dir.mkdir(exist_ok=True)
        (json_dir / f"rank_{rank}.json").write_text(
            text if isinstance(text, str) else text.decode())
    note.update({"pickle_from": used, "json_from": used_json})
    case = Path(spec["dump_dir"]).name  # not named rank_<r>: the notes are not dumps
    Path(spec["note_dir"], f"{case}_note_{rank}.json").write_text(json.dumps(note))
    sys.stdout.flush()
    if spec.get("hang"):
        os._exit(0)  # the group is broken; destroying it could wait again
    dist.destroy_process_group()


def main():
    spec = json.loads(sys.argv[1])
    if spec["mode"] == "pipeline":
        worker_pipeline(spec)
    elif spec["mode"] == "fr":
        worker_flight_recorder(spec)
    else:
        raise SystemExit(f"unknown worker mode {spec['mode']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
