#!/usr/bin/env python3
"""Prints the table in docs/plan.md of Narayanan et al.'s published Megatron-LM throughputs
(SC 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
table 1) beside what `pipelens plan` predicts with each layout pinned as published, on an A100
80GB cluster described by its data sheet. Predicted TFLOP/s per GPU use the paper's own FLOP
count (its equation 3, which counts the recomputed forward): 96 B s l h^2 (1 + s/6h + V/16lh),
over the predicted step time and the GPU count. Nothing here is fitted to the table.

  scripts/megatron_table1.py [--pipelens PATH] [--fraction F] [--markdown]

With --markdown the rows come out as the docs' table, with the predictions at F x 0.9 and
F x 1.1 beside them.
"""
import argparse
import json
import subprocess

SEQUENCE, VOCABULARY = 2048, 51200

# Table 1 as published: billions of parameters, heads, hidden, layers, tp, pp, GPUs, global
# batch, achieved TFLOP/s per GPU. dp = GPUs / (tp x pp). Then how each row was run, from the
# paper's own scripts (NVIDIA/Megatron-LM, examples/sc21/run_table_1.sh and CONFIG.sh, commit
# de7dc40 of 2021-08-10): the microbatch size (MBS), the layers per virtual pipeline stage
# (--num-layers-per-virtual-pipeline-stage; None: plain 1F1B) and the data-parallel wrapper
# (--DDP-impl: "torch" is PyTorch's DistributedDataParallel, which all-reduces gradient buckets
# during the last microbatch's backward; "local" is Megatron's, which all-reduces after the
# pipeline flush). Every row: --checkpoint-activations (full recompute), --fp16.
TABLE = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 16, None, "torch"),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 16, None, "torch"),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 16, None, "torch"),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 8, None, "torch"),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 4, None, "local"),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 5, "local"),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 5, "local"),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 3, "local"),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 1, "local"),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, None, "local"),
]

# The A100 80GB SXM's data sheet, and Selene's network: 8 x 200 Gb/s HDR InfiniBand per
# 8-GPU node, 25 GB/s per GPU. NCCL's collectives over NVLink reach about 230 GB/s of bus
# bandwidth on A100, not the 300 GB/s line rate (12 links at 25 GB/s carry about 20 GB/s each
# with the SMs' 128-byte payloads, 240 GB/s, and other limits leave ~230: NCCL's maintainer in
# NVIDIA/nccl-tests issue 149, 2023-07-05, for all_reduce_perf at 8 GB messages). The A100 has
# 108 SMs (NVIDIA A100 Tensor Core GPU Architecture whitepaper), so GEMM tiles run in waves of
# 108 (NVIDIA's Matrix Multiplication Background User's Guide, "Wave Quantization"). HBM at
# what a streaming kernel reaches on it, 1.80 of the data sheet's 2.039 TB/s (88 %, by Nsight
# Compute's count too; NVIDIA developer forums, "Trouble to Reach Peak Bandwidth of A100").
A100 = ["--peak-tflops", "312", "--hbm-bandwidth", "1.80TB/s", "--gpu-memory", "80GB",
        "--intra-host-bandwidth", "300GB/s", "--inter-host-bandwidth", "25GB/s",
        "--intra-host-collective-bandwidth", "230GB/s", "--streaming-multiprocessors", "108"]

# Megatron-LM as it ran then: blocking pipeline transfers with the scatter/gather
# optimisation (the default, --no-scatter-gather-tensors-in-pipeline not given), the tied
# word embedding's gradient all-reduced between the first and last stages, unfused attention
# (softmax and dropout over the whole score tensor, and its batched matrix multiplies),
# fp16 gradients (--accumulate-allreduce-grads-in-fp32 not given), and its eager layer's
# element-wise passes beyond the fused kernels (PyTorch 1.8 in NGC 20.12: the QKV bias added
# by its own kernel, bias gradients summed by autograd, its layer norm's two-kernel backward,
# the attention's layout copies).
MEGATRON_2021 = ["--attention", "unfused", "--blocking-p2p", "--embedding-grad-reduce",
                 "--attention-matmul-memory", "--grads-in-dtype", "--eager-layer-passes"]


def schedule_of(row):
    """Interleaved 1F1B where the script gives layers per virtual stage, v = layers / pp over
    that; 1F1B otherwise."""
    layers, pp, per_virtual_stage = row[3], row[5], row[10]
    if per_virtual_stage is None:
        return ["--schedule", "1F1B"]
    return ["--schedule", "Interleaved1F1B", "--v", str(layers // pp // per_virtual_stage)]


def paper_flops(batch, layers, hidden):
    s, v = SEQUENCE, VOCABULARY
    return 96 * batch * s * layers * hidden**2 * (1 + s / (6 * hidden) + v / (16 * layers * hidden))


def predict(pipelens, fraction, row):
    _, heads, hidden, layers, tp, pp, gpus, batch, _, microbatch, _, ddp = row
    dp = gpus // (tp * pp)
    args = [pipelens, "plan", "--layers", str(layers), "--hidden", str(hidden), "--heads",
            str(heads), "--sequence", str(SEQUENCE), "--vocabulary", str(VOCABULARY),
            "--global-batch", str(batch), "--gpus", str(gpus), "--tp", str(tp), "--pp", str(pp),
            "--dp", str(dp), "--microbatch-size", str(microbatch), "--recompute", "full",
            "--dtype", "fp16", "--achieved-fraction", str(fraction), "--json",
            "--even-split"]  # the published runs split their layers evenly
    if ddp == "local":
        args.append("--no-overlap-grad-reduce")
    args += A100 + MEGATRON_2021 + schedule_of(row)
    result = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)[0]
    step = result["step_time_s"]
    return step, paper_flops(batch, layers, hidden) / step / gpus / 1e12, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipelens", default="build/app/cli/pipelens")
    parser.add_argument("--fraction", type=float, default=0.8)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()
    errors = []
    if options.markdown:
        print("| model | tp | pp | dp | mb | schedule, v | published | predicted | error | "
              "at f x 0.9 | at f x 1.1 |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in TABLE:
        step, tflops, result = predict(options.pipelens, options.fraction, row)
        error = (tflops - row[8]) / row[8]
        errors.append(abs(error))
        schedule = ", ".join(schedule_of(row)[1::2])
        dp = row[6] // (row[4] * row[5])
        if options.markdown:
            low = predict(options.pipelens, options.fraction * 0.9, row)[1]
            high = predict(options.pipelens, options.fraction * 1.1, row)[1]
            print(f"| {row[0]}B | {row[4]} | {row[5]} | {dp} | {row[9]} | {schedule} | {row[8]} | "
                  f"{tflops:.1f} | {error:+.1%} | {low:.1f} | {high:.1f} |")
        else:
            parts = " ".join(f"{k}={v:.3f}" for k, v in result["breakdown"].items()
                             if k.endswith("_s"))
            print(f"{row[0]:>7}B step {step:8.3f}s  {tflops:6.1f} vs {row[8]}  "
                  f"{error:+6.1%}  {parts}")
    print(f"mean |error| {sum(errors) / len(errors):.1%}, max {max(errors):.1%}")


if __name__ == "__main__":
    main()
