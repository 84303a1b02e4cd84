#!/usr/bin/env python3
"""PyTorch's own pipelining schedules on the model pipelens runs, for side-by-side figures.

Runs on the GPU machine (python3 with PyTorch 2.x); anywhere torch does not import it prints
"SKIPPED: torch not importable" and exits 0. Usage: pytorch_side_by_side.py OUT_DIR.

One process, a world of one rank (a FileStore process group: nccl on a GPU, else gloo), that
rank holding every stage (a PipelineStage per stage), under each multi-stage schedule of
torch.distributed.pipelining: ScheduleInterleaved1F1B, ScheduleLoopedBFS,
ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble and ScheduleDualPipeV (the last two take
exactly 2 stages per rank; DualPipeV also at least as many microbatches as stages).

The model is pipelens' built-in `mlp` (engine/runtime/model_library.cpp): `layers` blocks of
Linear(h, h) -> ReLU -> Linear(h, h); each parameter in module order drawn from one CPU
generator seeded with `seed` as randn * 1/sqrt(fan_in) (fan_in = size(1) for a matrix, 1 for a
bias); inputs then targets are randn(batch, h) from a second generator seeded with seed + 1000.
The loss is the MSE per microbatch averaged over the m microbatches (PyTorch's scale_grads), so
it equals `pipelens run`'s loss for the same seed, layers, hidden, batch and m whatever the
schedule. pipelens has no option to dump or load weights, so this script writes the weights and
the batch it used as raw little-endian float32 files with a JSON manifest (OUT_DIR/weights/).

Writes OUT_DIR/side_by_side.json: per schedule the loss, the largest gradient difference from
the same model run whole (no pipeline), the step time (median of 20 steps after 5 warm-up
steps, the device synchronised around each), the compute actions per step and, on the `empty`
model (scalar scales: nothing to compute), the step time per action: the schedule runtime's own
overhead per action. Under "bfloat16" the same for the mlp in bfloat16 (the same float32
weights and batch cast, as `pipelens run --dtype bfloat16` casts them), its gradients held to
pipelens' bfloat16 tolerance against the whole model in bfloat16.
"""

import inspect
import json
import math
import os
import statistics
import sys
import tempfile
import time

# (class name, stages per rank). Two for all: ZBVZeroBubble and DualPipeV take exactly two, and
# one count for all keeps the stages, and so the figures, comparable.
SCHEDULES = [
    ("ScheduleInterleaved1F1B", 2),
    ("ScheduleLoopedBFS", 2),
    ("ScheduleInterleavedZeroBubble", 2),
    ("ScheduleZBVZeroBubble", 2),
    ("ScheduleDualPipeV", 2),
]
SEED, LAYERS, HIDDEN, BATCH, MICROBATCHES = 0, 4, 64, 32, 4
WARMUP_STEPS, TIMED_STEPS = 5, 20
# pipelens' reference tolerances (rtol, atol) per `--dtype`; the one definition is
# engine/run_record/run_dtype.cpp, this is its copy for a script without pipelens.
TOLERANCES = {"float32": (1e-4, 1e-5), "bfloat16": (1.6e-2, 1e-3)}


def model_loss(torch, output, target):
    """pipelens' loss: the MSE in float32 (a bfloat16 output and target widened, as pipelens'
    model_loss does; a float32 one used as it is)."""
    return torch.nn.functional.mse_loss(output.float(), target.float())


def seeded_mlp(torch, layers, hidden, seed):
    """pipelens' `mlp` model, its parameters drawn as model_library.cpp draws them."""
    generator = torch.Generator().manual_seed(seed)
    blocks = []
    for _ in range(layers):
        block = torch.nn.Sequential(
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden)
        )
        with torch.no_grad():
            for parameter in block.parameters():
                fan_in = parameter.size(1) if parameter.dim() > 1 else 1
                values = torch.randn(parameter.shape, generator=generator, dtype=torch.float32)
                parameter.copy_(values * (1.0 / math.sqrt(fan_in)))
        blocks.append(block)
    return blocks


def empty_layers(torch, layers):
    """pipelens' `empty` model: each layer x * a scalar parameter (1 at first)."""

    class ScaleLayer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x * self.scale

    return [ScaleLayer() for _ in range(layers)]


def batch(torch, hidden, seed):
    generator = torch.Generator().manual_seed(seed + 1000)
    inputs = torch.randn(BATCH, hidden, generator=generator, dtype=torch.float32)
    targets = torch.randn(BATCH, hidden, generator=generator, dtype=torch.float32)
    return inputs, targets


def write_exchange_files(torch, out_dir, blocks, inputs, targets):
    """Raw float32 files plus a manifest: what a pipelens weight loader would read."""
    weights_dir = os.path.join(out_dir, "weights")
    os.makedirs(weights_dir, exist_ok=True)
    entries = []

    def write(name, tensor):
        path = os.path.join(weights_dir, name + ".f32")
        tensor.detach().cpu().contiguous().numpy().astype("<f4").tofile(path)
        entries.append({"name": name, "shape": list(tensor.shape), "dtype": "float32",
                        "byte_order": "little", "file": os.path.basename(path)})

    for index, block in enumerate(blocks):
        for name, parameter in block.named_parameters():
            # Sequential names 0.weight, 2.weight; pipelens' block holds Linear 0 and 1.
            linear = "0" if name.startswith("0.") else "1"
            write("layers.%d.%s.%s" % (index, linear, name.split(".")[1]), parameter)
    write("batch.inputs", inputs)
    write("batch.targets", targets)
    manifest = {"model": "mlp", "seed": SEED, "layers": LAYERS, "hidden": HIDDEN,
                "batch": BATCH, "tensors": entries}
    with open(os.path.join(weights_dir, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=1)


def stage_modules(torch, layers, stage_count):
    per_stage = len(layers) // stage_count
    return [torch.nn.Sequential(*layers[i * per_stage:(i + 1) * per_stage])
            for i in range(stage_count)]


def schedule_kwargs(schedule_class, loss_fn):
    """Only the keywords this PyTorch's constructor takes (they changed across 2.x)."""
    accepted = inspect.signature(schedule_class.__init__).parameters
    kwargs = {"loss_fn": loss_fn}
    if "scale_grads" in accepted:
        kwargs["scale_grads"] = True
    return kwargs


def compute_actions(schedule):
    """Compute actions rank 0 runs per step, from the schedule's own table when it has one."""
    order = getattr(schedule, "pipeline_order", None)
    if not order or 0 not in order:
        return None
    count = 0
    for action in order[0]:
        if action is None:
            continue
        sub_actions = getattr(action, "sub_actions", None)
        count += len(sub_actions) if sub_actions else 1
    return count


def synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_steps(torch, device, schedule, stage_list, inputs, targets):
    times = []
    losses = []
    for step in range(WARMUP_STEPS + TIMED_STEPS):
        for stage in stage_list:
            stage.submod.zero_grad(set_to_none=True)
        losses = []
        synchronize(torch, device)
        begin = time.perf_counter()
        schedule.step(inputs, target=targets, losses=losses)
        synchronize(torch, device)
        if step >= WARMUP_STEPS:
            times.append(time.perf_counter() - begin)
    return statistics.median(times), losses


def run_schedule(torch, pipelining, device, class_name, stages_per_rank, layers, inputs, targets):
    schedule_class = getattr(pipelining, class_name, None)
    if schedule_class is None:
        return {"status": "skipped", "reason": "this PyTorch has no %s" % class_name}
    modules = stage_modules(torch, layers, stages_per_rank)
    stage_list = [pipelining.PipelineStage(module.to(device), index, stages_per_rank, device)
                  for index, module in enumerate(modules)]
    def loss_fn(output, target):
        return model_loss(torch, output, target)

    schedule = schedule_class(stage_list, MICROBATCHES, **schedule_kwargs(schedule_class, loss_fn))
    median_s, losses = timed_steps(torch, device, schedule, stage_list, inputs, targets)
    loss = float(sum(float(value) for value in losses) / len(losses)) if losses else None
    actions = compute_actions(schedule)
    return {"status": "pass", "stages_per_rank": stages_per_rank, "microbatches": MICROBATCHES,
            "loss": loss, "step_time_s_median": median_s, "compute_actions": actions,
            "modules": modules}


def reference_check(torch, device, pipelined_modules, layers_fresh, inputs, targets,
                    dtype="float32"):
    """The pipelined gradients against the same model run whole on this device in the same
    dtype, with pipelens' tolerances for it (float32: rtol 1e-4, atol 1e-5)."""
    rtol, atol = TOLERANCES[dtype]
    whole = torch.nn.Sequential(*layers_fresh).to(device)
    loss = model_loss(torch, whole(inputs), targets)
    loss.backward()
    pipelined = [p for module in pipelined_modules for p in module.parameters()]
    largest, match = 0.0, True
    for reference, parameter in zip(whole.parameters(), pipelined):
        if parameter.grad is None:
            return {"gradients_match": False, "reason": "a parameter has no gradient"}
        largest = max(largest, float((reference.grad - parameter.grad).abs().max()))
        match = match and bool(torch.allclose(parameter.grad, reference.grad, rtol=rtol, atol=atol))
    return {"reference_loss": float(loss), "gradient_max_error": largest,
            "gradients_match": match, "tolerance": {"rtol": rtol, "atol": atol}}


def bfloat16_mlp(torch):
    """pipelens' mlp with its float32 weights cast to bfloat16, as `--dtype bfloat16` casts."""
    return [block.to(torch.bfloat16) for block in seeded_mlp(torch, LAYERS, HIDDEN, SEED)]


def bfloat16_entry(torch, pipelining, device, class_name, stages_per_rank, inputs, targets):
    """One schedule on the mlp in bfloat16, checked against the whole model in bfloat16."""
    inputs, targets = inputs.to(torch.bfloat16), targets.to(torch.bfloat16)
    entry = run_schedule(torch, pipelining, device, class_name, stages_per_rank,
                         bfloat16_mlp(torch), inputs, targets)
    modules = entry.pop("modules", None)
    if modules is not None:
        entry.update(reference_check(torch, device, modules, bfloat16_mlp(torch), inputs, targets,
                                     "bfloat16"))
        if not entry["gradients_match"]:
            entry["status"] = "fail"
    return entry


def write_results(out_dir, results):
    with open(os.path.join(out_dir, "side_by_side.json"), "w") as handle:
        json.dump(results, handle, indent=1)


def main():
    if len(sys.argv) != 2:
        print("usage: pytorch_side_by_side.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    try:
        import torch
    except ImportError as error:
        print("SKIPPED: torch not importable (%s)" % error)
        return 0
    os.makedirs(out_dir, exist_ok=True)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    inputs_cpu, targets_cpu = batch(torch, HIDDEN, SEED)
    write_exchange_files(torch, out_dir, seeded_mlp(torch, LAYERS, HIDDEN, SEED), inputs_cpu,
                         targets_cpu)
    inputs, targets = inputs_cpu.to(device), targets_cpu.to(device)
    whole = torch.nn.Sequential(*seeded_mlp(torch, LAYERS, HIDDEN, SEED)).to(device)
    on_gpu = device.type == "cuda"
    results = {"torch": torch.__version__, "device": str(device),
               "device_name": torch.cuda.get_device_name(device) if on_gpu else "cpu",
               "world_size": 1,
               "model": {"name": "mlp", "seed": SEED, "layers": LAYERS, "hidden": HIDDEN,
                         "batch": BATCH, "microbatches": MICROBATCHES},
               # The whole model's loss: what `pipelens run` reports for this model and batch.
               "whole_model_loss": float(model_loss(torch, whole(inputs), targets)),
               "whole_model_loss_bfloat16": float(model_loss(
                   torch, torch.nn.Sequential(*bfloat16_mlp(torch)).to(device)(
                       inputs.to(torch.bfloat16)), targets.to(torch.bfloat16))),
               "steps": {"warmup": WARMUP_STEPS, "timed": TIMED_STEPS, "statistic": "median"},
               "schedules": {}}
    try:
        import torch.distributed as dist
        import torch.distributed.pipelining as pipelining
    except ImportError as error:
        reason = "torch %s has no torch.distributed.pipelining (%s)" % (torch.__version__, error)
        results["skipped"] = reason
        write_results(out_dir, results)
        print("whole-model loss %.9g" % results["whole_model_loss"])
        print("SKIPPED: " + reason)
        return 0
    if on_gpu:
        torch.cuda.set_device(device)
    results["backend"] = "nccl" if on_gpu else "gloo"
    store_path = tempfile.mktemp(prefix="pipelens-side-by-side-store-")
    dist.init_process_group(results["backend"], store=dist.FileStore(store_path, 1), rank=0,
                            world_size=1)
    failures = 0
    for class_name, stages_per_rank in SCHEDULES:
        entry = {}
        try:
            entry = run_schedule(torch, pipelining, device, class_name, stages_per_rank,
                                 seeded_mlp(torch, LAYERS, HIDDEN, SEED), inputs, targets)
            modules = entry.pop("modules", None)
            if modules is not None:
                entry.update(reference_check(torch, device, modules,
                                             seeded_mlp(torch, LAYERS, HIDDEN, SEED), inputs,
                                             targets))
                if not entry["gradients_match"]:
                    entry["status"] = "fail"
                    failures += 1
            empty = run_schedule(torch, pipelining, device, class_name, stages_per_rank,
                                 empty_layers(torch, LAYERS), inputs, targets)
            empty.pop("modules", None)
            if empty.get("compute_actions"):
                empty["step_time_s_per_action"] = (empty["step_time_s_median"] /
                                                   empty["compute_actions"])
            entry["empty_model"] = empty
        except Exception as error:  # one schedule's failure must not hide the others' figures
            failures += 1
            entry = {"status": "fail", "reason": "%s: %s" % (type(error).__name__, error)}
        try:
            entry["bfloat16"] = bfloat16_entry(torch, pipelining, device, class_name,
                                               stages_per_rank, inputs, targets)
        except Exception as error:  # nor bfloat16's failure the float32 figures
            entry["bfloat16"] = {"status": "fail",
                                 "reason": "%s: %s" % (type(error).__name__, error)}
        failures += entry["bfloat16"].get("status") == "fail"
        results["schedules"][class_name] = entry
        print("%-30s %s" % (class_name, json.dumps(entry)))
    dist.destroy_process_group()
    if os.path.exists(store_path):
        os.remove(store_path)
    write_results(out_dir, results)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
