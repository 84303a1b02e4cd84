#!/usr/bin/env python3
"""Writes PyTorch-made fixtures for pipelens' tests, on a machine with PyTorch (and a GPU).

    python3 scripts/device/pytorch_fixtures.py OUT_DIR [--bundle-dir DIR] [--budget-s S]

  a. schedules/: every schedule class torch.distributed.pipelining defines (found at run time,
     so a newer class is not missed), built on mock stages without a process group for a grid
     of pp, v, m: KIND_ppP_vV_mM_compute.csv (pipeline_order), _comms.csv (PyTorch's lowering,
     FSDP actions kept), _comms_defer.csv (where the class takes defer_pp_recv), written by
     PyTorch's _dump_csv where the class has one; refused configurations in refusals.json.
  b. profiler/: Kineto traces, one per rank, of one step after a warm-up step (Gloo CPU
     processes; one CUDA run with kernels and gpu_user_annotation ranges).
  c. flight_recorder/: dumps of a Gloo run that hangs (both ranks receive first) and of clean
     Gloo and one-GPU NCCL runs, with fr_trace's report.
  d. pipelens_runs/: the CSVs in tests/data/pytorch/pipelens_schedules/ loaded with
     _PipelineScheduleRuntime._load_csv and run on Gloo; losses and gradients against
     Schedule1F1B on the same model and data.

Invariants: each part records its own failure in manifest.json and loses nothing else; every
subprocess runs under a timeout, the whole run under a budget (default 170 s; parts b-d run
beside part a); OUT_DIR/pytorch_fixtures.tar.gz holds everything (the device machine returns
few files). Without an importable torch: "SKIPPED: torch not importable", exit 0.
"""

import argparse
import csv
import inspect
import io
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pytorch_fixtures_worker import (  # noqa: E402  (no torch is imported here)
    HIDDEN, LAYERS, PG_TIMEOUT_S, build_mock_schedule, is_single, mock_stage_class,
    schedule_modules, takes_defer)

SCRIPT = Path(__file__).resolve()
WORKER = SCRIPT.parent / "pytorch_fixtures_worker.py"
REPO = SCRIPT.parents[2]
PIPELENS_CSV_DIR = REPO / "tests" / "data" / "pytorch" / "pipelens_schedules"
START = time.monotonic()

PP_GRID = (2, 3, 4, 8)
V_GRID_MULTI = (1, 2, 3)
M_GRID = (1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 16, 24)
BUILD_LIMIT_S = 2  # one schedule construction; PyTorch's bubble insertion can loop forever
GROUP_TIMEOUT_S = 75  # one multi-process run
HANG_TIMEOUT_S = 5
TOLERANCE = {"rtol": 1e-9, "atol": 1e-12, "dtype": "float64"}


def log(message):
    print(f"[pytorch_fixtures {time.monotonic() - START:6.1f}s] {message}", flush=True)


def seconds_left(budget_s):
    return budget_s - (time.monotonic() - START)


def tail(text, limit=4000):
    return text if len(text) <= limit else "..." + text[-limit:]


def kind_name(cls):
    """PyTorch's name for a class as get_schedule_class spells it: Schedule1F1B -> 1F1B."""
    name = cls.__name__
    return name[len("Schedule"):] if name.startswith("Schedule") and len(name) > 8 else name


def discover_schedule_classes():
    """Every concrete schedule class the schedules module defines, plus get_schedule_class's."""
    S = schedule_modules()
    bases = {S.PipelineScheduleSingle, S.PipelineScheduleMulti}
    runtime = getattr(S, "_PipelineScheduleRuntime", None)
    if runtime is not None:
        bases.add(runtime)
    found = {}
    for name in dir(S):
        obj = getattr(S, name)
        if not inspect.isclass(obj) or obj in bases or name.startswith("_"):
            continue
        if issubclass(obj, (S.PipelineScheduleSingle, S.PipelineScheduleMulti)):
            found[obj.__name__] = obj
    registry = {}
    for probe in ("1F1B", "GPipe", "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble",
                  "ZBVZeroBubble", "DualPipeV", "FlexibleInterleaved1F1B", "DualPipe",
                  "ZeroBubble", "ZBH2", "ZeroBubbleH2"):
        try:
            cls = S.get_schedule_class(probe)
        except Exception:
            continue
        registry[probe] = cls.__name__
        if cls not in bases:
            found.setdefault(cls.__name__, cls)
    exported = sorted(getattr(S, "__all__", []))
    return found, {"get_schedule_class": registry, "schedules.__all__": exported}


class BuildTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise BuildTimeout(f"schedule construction ran over {BUILD_LIMIT_S} s (stopped by the script)")


def write_rows(path, order):
    """PyTorch's _dump_csv format: csv.writer, one row per rank in dict order, None as ''."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in order:
            writer.writerow(order[rank])


# ---------------------------------------------------------------------------------------------
# Part a: schedules.


def part_schedules(out, budget_s):
    S = schedule_modules()
    classes, discovery = discover_schedule_classes()
    folder = out / "schedules"
    folder.mkdir(parents=True, exist_ok=True)
    missing = set()
    mock_cls = mock_stage_class(missing)
    refusals, files, notes = [], [], []
    signal.signal(signal.SIGALRM, _alarm)
    for cls_name in sorted(classes):
        cls = classes[cls_name]
        kind = kind_name(cls)
        single = is_single(cls)
        defer = takes_defer(cls)
        log(f"schedules: {cls_name} (single={single}, defer_pp_recv={defer})")
        for pp in PP_GRID:
            for v in (1,) if single else V_GRID_MULTI:
                for m in M_GRID:
                    if seconds_left(budget_s) < 30:
                        notes.append(f"stopped at {kind} pp={pp} v={v} m={m}: budget")
                        return summary_a(folder, discovery, classes, refusals, files, notes, missing)
                    base = f"{kind}_pp{pp}_v{v}_m{m}"
                    for deferred in (False, True) if defer else (False,):
                        try:
                            dump_one(S, cls, mock_cls, kind, pp, v, m, deferred, folder, base,
                                     refusals, files)
                        except BuildTimeout as late:  # the alarm fired just after the build
                            notes.append(f"{base} defer={deferred}: {late}")
    return summary_a(folder, discovery, classes, refusals, files, notes, missing)


def dump_one(S, cls, mock_cls, kind, pp, v, m, defer, folder, base, refusals, files):
    where = {"kind": kind, "class": cls.__name__, "pp": pp, "v": v, "m": m, "defer": defer}
    signal.setitimer(signal.ITIMER_REAL, BUILD_LIMIT_S)
    try:
        sched = build_mock_schedule(cls, mock_cls, pp, v, m, defer)
    except Exception as error:  # PyTorch refused this configuration (or looped)
        # An attribute the mock lacks is the mock's failure, not PyTorch refusing the shape.
        mock_failed = isinstance(error, AttributeError) and str(error) in mock_cls.missing
        refusals.append({**where, "stage": "mock" if mock_failed else "construct",
                         "type": type(error).__name__, "message": str(error)})
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        if not defer:
            path = folder / f"{base}_compute.csv"
            runtime = getattr(S, "_PipelineScheduleRuntime", None)
            if runtime is not None and isinstance(sched, runtime):
                sched._dump_csv(str(path), format="compute_only")
            elif hasattr(sched, "_dump_csv"):
                sched._dump_csv(str(path))
            else:  # PipelineScheduleSingle has no _dump_csv: the same csv.writer rows
                write_rows(path, sched.pipeline_order)
            files.append(path.name)
        comms = getattr(sched, "pipeline_order_with_comms", None)
        if comms:
            path = folder / f"{base}_{'comms_defer' if defer else 'comms'}.csv"
            sched._dump_csv(str(path), format="compute_comms")
            files.append(path.name)
    except Exception as error:
        refusals.append({**where, "stage": "dump", "type": type(error).__name__,
                         "message": str(error)})


def summary_a(folder, discovery, classes, refusals, files, notes, missing):
    with open(folder / "refusals.json", "w") as f:
        json.dump(refusals, f, indent=1)
    return {
        "classes": {name: {"kind": kind_name(c), "single_stage": is_single(c),
                           "takes_defer_pp_recv": takes_defer(c),
                           "module": c.__module__} for name, c in classes.items()},
        "discovery": discovery,
        "grid": {"pp": PP_GRID, "v_multi": V_GRID_MULTI, "m": M_GRID},
        "csv_files": len(files),
        "refusals": len(refusals),
        "mock_stage_missing_attributes": sorted(missing),
        "notes": notes,
        "naming": "KIND_ppP_vV_mM_{compute|comms|comms_defer}.csv; KIND is the class name "
                  "without 'Schedule'; single-stage classes have v=1",
    }


# ---------------------------------------------------------------------------------------------
# Multi-process runs: WORLD copies of pytorch_fixtures_worker.py (env:// init on 127.0.0.1).


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_group(spec, world, timeout_s, extra_env=None):
    """Runs `world` workers on spec; returns {rc per rank, log tail, timed_out}."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), PYTHONUNBUFFERED="1",
                   OMP_NUM_THREADS="1", **(extra_env or {}))
        procs.append(subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps(spec)], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    deadline = time.monotonic() + timeout_s
    outputs, codes, timed_out = [], [], False
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            out, _ = proc.communicate()
        outputs.append(out or "")
        codes.append(proc.returncode)
    failed = [o for o, code in zip(outputs, codes) if code != 0]
    last_lines = [line for line in (failed[0] if failed else "").splitlines() if line.strip()]
    return {"ok": not timed_out and not failed, "returncodes": codes, "timed_out": timed_out,
            "error": last_lines[-1] if last_lines else None,
            "log_tail": [tail(o, 3000) for o in outputs]}


# ---------------------------------------------------------------------------------------------
# Part b: profiler traces.


def part_profiler(out, budget_s, has_cuda):
    folder = out / "profiler"
    folder.mkdir(parents=True, exist_ok=True)
    jobs = []
    for kind in ("1F1B", "Interleaved1F1B", "ZBVZeroBubble", "DualPipeV"):
        for pp in (2, 4):
            v = 1 if kind == "1F1B" else 2
            jobs.append({"mode": "pipeline", "kind": kind, "pp": pp, "v": v, "m": 2 * pp,
                         "backend": "gloo", "device": "cpu"})
    if has_cuda:
        # One rank holding both stages: the V schedules too, which PyTorch 2.11 could not run
        # over Gloo processes (every rank failed in _initialize_stages, "Pair is not connected").
        for kind in ("Interleaved1F1B", "ZBVZeroBubble", "DualPipeV"):
            jobs.append({"mode": "pipeline", "kind": kind, "pp": 1, "v": 2, "m": 4,
                         "backend": "nccl", "device": "cuda"})
    for job in jobs:
        name = f"{job['kind']}_pp{job['pp']}_v{job['v']}_m{job['m']}_{job['device']}"
        job["profile_dir"] = str(folder / name)
        Path(job["profile_dir"]).mkdir(exist_ok=True)
    results = run_jobs(jobs, budget_s)
    for job, result in zip(jobs, results):
        result["traces"] = sorted(p.name for p in Path(job["profile_dir"]).glob("*.gz"))
        if not result["traces"]:
            shutil.rmtree(job["profile_dir"], ignore_errors=True)
    return {"runs": [{"spec": j, **r} for j, r in zip(jobs, results)],
            "note": "one profiled step after one warm-up step; traces gzip'd as "
                    "rank<R>.pt.trace.json.gz"}


def run_jobs(jobs, budget_s, parallel=3):
    def run(job):
        left = seconds_left(budget_s) - 10
        if left < 15:
            return {"skipped": "budget"}
        log(f"run {job.get('kind') or job.get('csv')} pp={job['pp']} on {job['backend']}")
        return launch_group(job, job["pp"], min(GROUP_TIMEOUT_S, left))

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(run, jobs))


# ---------------------------------------------------------------------------------------------
# Part c: flight recorder.


def fr_env(auto_dir):
    """Both spellings: TORCH_FR_* is the newer, TORCH_NCCL_* the older (NCCL-only) name."""
    return {"TORCH_FR_BUFFER_SIZE": "2000", "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000",
            "TORCH_FR_DUMP_TEMP_FILE": str(auto_dir / "auto_rank_"),
            "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": str(auto_dir / "auto_rank_"),
            "TORCH_NCCL_DUMP_ON_TIMEOUT": "1"}


def part_flight_recorder(out, budget_s, has_cuda):
    folder = out / "flight_recorder"
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    cases = [("gloo_clean", "gloo", 2, False), ("gloo_hang", "gloo", 2, True)]
    if has_cuda:
        cases.append(("nccl_clean_1gpu", "nccl", 1, False))

    def run_case(case):
        name, backend, world, hang = case
        if seconds_left(budget_s) < 25:
            return {"skipped": "budget"}
        case_dir, auto_dir = folder / name, folder / f"{name}_auto"
        case_dir.mkdir(exist_ok=True)
        auto_dir.mkdir(exist_ok=True)
        spec = {"mode": "fr", "backend": backend, "dump_dir": str(case_dir),
                "json_dir": str(folder / f"{name}_json"), "note_dir": str(folder / "notes"),
                "hang": hang, "pg_timeout_s": HANG_TIMEOUT_S if hang else PG_TIMEOUT_S}
        log(f"flight recorder: {name}")
        run = launch_group(spec, world, 60, extra_env=fr_env(auto_dir))
        run["env"] = fr_env(auto_dir)
        run["dumps"] = sorted(p.name for p in case_dir.iterdir())
        run["auto_dumps"] = sorted(p.name for p in auto_dir.iterdir())
        if not run["auto_dumps"]:
            auto_dir.rmdir()
        run["fr_trace"] = run_fr_trace(case_dir, folder / f"fr_trace_{name}.txt")
        return run

    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        runs = list(pool.map(run_case, cases))
    return {"cases": {case[0]: run for case, run in zip(cases, runs)},
            "layout": "<case>/rank_<R> pickle, <case>_json/rank_<R>.json, <case>_auto/ what "
                      "PyTorch dumped by itself, notes/, fr_trace_<case>.txt",
            "hang": "both ranks irecv from each other first, Work.wait(timeout) of "
                    f"{HANG_TIMEOUT_S} s; the dumps are taken after the timeout"}


def run_fr_trace(case_dir, report_path):
    """PyTorch's own analyzer on the pickle dumps, with its exact output."""
    module = [sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace"]
    commands = [module + ["--help"], module + [str(case_dir), "--prefix", "rank_"],
                module + [str(case_dir), "--prefix", "rank_", "-j"]]
    if shutil.which("torchfrtrace"):
        commands.append(["torchfrtrace", str(case_dir), "--prefix", "rank_"])
    report, summary = io.StringIO(), []
    for command in commands:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
            code, text = done.returncode, done.stdout + done.stderr
        except Exception as error:
            code, text = None, f"{type(error).__name__}: {error}"
        report.write(f"$ {' '.join(command)}\n[exit {code}]\n{text}\n")
        summary.append({"command": command[1:], "returncode": code})
    report_path.write_text(report.getvalue())
    return summary


# ---------------------------------------------------------------------------------------------
# Part d: pipelens' schedules run by PyTorch.


def part_pipelens_schedules(out, budget_s):
    import torch

    folder = out / "pipelens_runs"
    folder.mkdir(parents=True, exist_ok=True)
    csvs = sorted(PIPELENS_CSV_DIR.glob("*.csv"))
    jobs = [{"mode": "pipeline", "kind": "1F1B", "pp": 4, "v": 1, "m": 8, "backend": "gloo",
             "device": "cpu", "reference": True}]
    for path in csvs:
        pp, m = (int(re.search(pattern, path.name).group(1)) for pattern in (r"_pp(\d+)_",
                                                                            r"_m(\d+)_"))
        fmt = "compute_only" if path.name.endswith("_compute.csv") else "compute_comms"
        jobs.append({"mode": "pipeline", "csv": str(path), "csv_format": fmt, "pp": pp,
                     "m": m, "backend": "gloo", "device": "cpu"})
    for job in jobs:
        name = "reference_Schedule1F1B" if job.get("reference") else Path(job["csv"]).stem
        job["result_dir"] = str(folder / "tensors" / name)
        Path(job["result_dir"]).mkdir(parents=True, exist_ok=True)
    runs = run_jobs(jobs, budget_s)
    try:
        reference, reference_error = load_tensors(jobs[0]["result_dir"]), None
    except Exception as error:
        reference, reference_error = None, f"reference run failed: {error}"
    results = []
    for job, run in zip(jobs[1:], runs[1:]):
        entry = {"csv": Path(job["csv"]).name, "format": job["csv_format"], **run}
        try:
            if reference is None:
                raise RuntimeError(reference_error)
            entry.update(compare(reference, load_tensors(job["result_dir"]), torch))
        except Exception as error:
            entry["comparison_error"] = f"{type(error).__name__}: {error}"
        results.append(entry)
    shutil.rmtree(folder / "tensors", ignore_errors=True)
    summary = {"reference": {"schedule": "Schedule1F1B", "pp": 4, "m": 8, **runs[0]},
               "model": f"{LAYERS} x (Linear({HIDDEN},{HIDDEN}) + Tanh), float64, "
                        "MSELoss, seeds 0 (weights) and 1 (data)",
               "tolerance": TOLERANCE, "results": results}
    with open(folder / "results.json", "w") as f:
        json.dump(summary, f, indent=1)
    return {"csvs": [p.name for p in csvs],
            "all_match": all(r.get("losses_match") and r.get("grads_match") for r in results)}


def load_tensors(folder):
    import torch

    merged = {"losses": [], "grads": {}, "bias_grads": {}}
    files = sorted(Path(folder).glob("rank*.pt"))
    if not files:
        raise RuntimeError(f"no results in {folder}")
    for path in files:
        part = torch.load(path)
        merged["losses"] += part["losses"]
        merged["grads"].update(part["grads"])
        merged["bias_grads"].update(part["bias_grads"])
    return merged


def compare(reference, candidate, torch):
    tol = {"rtol": TOLERANCE["rtol"], "atol": TOLERANCE["atol"]}
    ref_losses = torch.stack(reference["losses"]) if reference["losses"] else None
    cand_losses = torch.stack(candidate["losses"]) if candidate["losses"] else None
    losses_match = (ref_losses is not None and cand_losses is not None
                    and ref_losses.shape == cand_losses.shape
                    and torch.allclose(ref_losses, cand_losses, **tol))
    max_diff, grads_match, ref_norm, cand_norm = 0.0, True, 0.0, 0.0
    for key in ("grads", "bias_grads"):
        if set(reference[key]) != set(candidate[key]):
            grads_match = False
            continue
        for layer, ref in reference[key].items():
            got = candidate[key][layer]
            max_diff = max(max_diff, float((ref - got).abs().max()))
            ref_norm += float(ref.norm()) ** 2
            cand_norm += float(got.norm()) ** 2
            grads_match = grads_match and torch.allclose(ref, got, **tol)
    return {"losses_match": bool(losses_match), "grads_match": bool(grads_match),
            "max_abs_grad_diff": max_diff,
            "grad_norm_ratio": (cand_norm / ref_norm) ** 0.5 if ref_norm else None,
            "loss_mean": float(cand_losses.mean()) if cand_losses is not None else None}


# ---------------------------------------------------------------------------------------------
# Driver.


def describe_files(out):
    kinds = {"schedules": "schedule CSV / refusals written by PyTorch's own classes",
             "profiler": "torch.profiler Kineto trace of a pipelining step",
             "flight_recorder": "flight-recorder dump or fr_trace report",
             "pipelens_runs": "pipelens' CSVs run by PyTorch: results"}
    listing = {}
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.name != "pytorch_fixtures.tar.gz":
            rel = path.relative_to(out)
            listing[str(rel)] = {"bytes": path.stat().st_size,
                                 "what": kinds.get(rel.parts[0], "manifest")}
    return listing


def run_part(name, run):
    """One part's result, or its failure text: one failing part must not lose the others."""
    began = time.monotonic()
    try:
        result = {"ok": True, **run()}
    except Exception as error:
        result = {"ok": False, "error": f"{type(error).__name__}: {error}",
                  "traceback": traceback.format_exc()}
    result["seconds"] = round(time.monotonic() - began, 1)
    log(f"part {name}: {'ok' if result['ok'] else 'FAILED: ' + result['error']}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--bundle-dir", help="also copy the tarball and manifest.json here")
    parser.add_argument("--budget-s", type=float, default=170.0)
    parser.add_argument("--parts", default="schedules,profiler,flight_recorder,pipelens",
                        help="comma-separated subset")
    args = parser.parse_args()
    try:
        import torch
    except Exception as error:
        print(f"SKIPPED: torch not importable ({type(error).__name__}: {error})", flush=True)
        return 0
    out = Path(args.out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    has_cuda = bool(torch.cuda.is_available())
    manifest = {
        "torch_version": torch.__version__,
        "torch_git_version": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0) if has_cuda else "cpu only",
        "python": sys.version,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "command": [sys.executable] + sys.argv,
        "script": str(SCRIPT.relative_to(REPO)),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "parts": {},
    }
    log(f"torch {torch.__version__}, cuda={has_cuda}, out={out}")
    wanted = set(args.parts.split(","))
    background = [("profiler", lambda: part_profiler(out, args.budget_s, has_cuda)),
                  ("flight_recorder", lambda: part_flight_recorder(out, args.budget_s, has_cuda)),
                  ("pipelens", lambda: part_pipelens_schedules(out, args.budget_s))]
    # Parts b-d are subprocesses on other cores; part a runs here, in the main thread, because
    # its time limit per construction is a SIGALRM.
    with ThreadPoolExecutor(max_workers=len(background)) as pool:
        futures = {name: pool.submit(run_part, name, run) for name, run in background
                   if name in wanted}
        if "schedules" in wanted:
            manifest["parts"]["schedules"] = run_part(
                "schedules", lambda: part_schedules(out, args.budget_s))
        for name, future in futures.items():
            manifest["parts"][name] = future.result()
    manifest["files"] = describe_files(out)
    manifest["seconds"] = round(time.monotonic() - START, 1)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    bundle = out / "pytorch_fixtures.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        for path in sorted(out.iterdir()):
            if path != bundle:
                tar.add(path, arcname=path.name)
    if args.bundle_dir:
        Path(args.bundle_dir).mkdir(parents=True, exist_ok=True)
        shutil.copy(bundle, args.bundle_dir)
        shutil.copy(out / "manifest.json", args.bundle_dir)
    log(f"wrote {bundle} ({bundle.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
