#!/usr/bin/env python3
"""Writes the PyTorch profiler fixtures of tests/import/pytorch_profiler_test.cpp.

No PyTorch runs on this machine, so these files are built to the shape the profiler writes
(Kineto's Chrome-trace JSON as torch.profiler's export_chrome_trace emits it: top-level
schemaVersion, deviceProperties, distributedInfo, traceEvents, displayTimeUnit,
baseTimeNanoseconds with event "ts" relative to it, in microseconds) and to what
torch.distributed.pipelining records: a "PP:<action>" user_annotation around every action of
_PipelineScheduleRuntime._step_microbatches, "Forward i"/"Backward i" around GPipe's loop, and
c10d's record_param_comms ops ("Collective name" send/recv/wait, message size, dtype, peer).

The run is 1F1B, pp=2, m=2: F takes 10 us, B 20 us, a transfer 2 us; the times are chosen so
that the test can state every imported action's start and end exactly (see the test).
Run: python3 make_traces.py   (writes the files beside this script)
"""
import gzip
import json
import os

BASE_NS = 1_700_000_000_000_000_000
ORIGIN_US = 5000.0  # ts of time 0 relative to baseTimeNanoseconds
HERE = os.path.dirname(os.path.abspath(__file__))


class Rank:
    def __init__(self, rank, pid, skew_us=0.0):
        self.rank, self.pid, self.skew = rank, pid, skew_us
        self.events = []
        self.external = 1

    def ts(self, t):
        return round(ORIGIN_US + t + self.skew, 3)

    def span(self, name, cat, start, end, args=None, tid=None):
        event = {"ph": "X", "cat": cat, "name": name, "pid": self.pid,
                 "tid": self.pid if tid is None else tid, "ts": self.ts(start),
                 "dur": round(end - start, 3),
                 "args": {"External id": self.external, "Record function id": 0}}
        self.external += 1
        event["args"].update(args or {})
        self.events.append(event)

    def action(self, name, start, end):
        self.span(name, "user_annotation", start, end)

    def comm(self, kind, start, end, peer=None, elements=1024):
        args = {"Collective name": kind, "dtype": "Float" if kind != "wait" else "Byte",
                "In msg nelems": elements if kind != "wait" else 0,
                "Out msg nelems": elements if kind != "wait" else 0,
                "Group size": 2, "Process Group Name": "0",
                "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]",
                "Rank": self.rank, "Global rank start": 0, "Global rank stride": 1}
        if kind == "send":
            args["Dst Rank"] = peer
        if kind == "recv":
            args["Src Rank"] = peer
        self.span("record_param_comms", "cpu_op", start, end, args)

    def noise(self, start, end):
        # Operator ranges inside a computation: the import must ignore them.
        self.span("aten::linear", "cpu_op", start, end, {"Input Dims": [[4, 256], [256, 256], [256]],
                                                          "Input type": ["float", "float", "float"]})

    def memory(self, t, total):
        self.events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                            "pid": self.pid, "tid": self.pid, "ts": self.ts(t),
                            "args": {"Total Reserved": 0, "Total Allocated": total, "Bytes": 4096,
                                     "Addr": 140000000 + int(t), "Device Id": -1,
                                     "Device Type": 0}})

    def gpu(self, name, start, end):
        # Kineto's twin of a range on the GPU: the kernels its own thread launched inside it.
        self.events.append({"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": 0,
                            "tid": 7, "ts": self.ts(start), "dur": round(end - start, 3),
                            "args": {"External id": self.external}})
        self.external += 1

    def launch(self, at, correlation, kernels, thread=None, call="cudaLaunchKernel"):
        """A runtime call on the CPU at `at` and the GPU operations it launched ([start, end]
        pairs, several for a CUDA graph), tied by their correlation as Kineto writes them."""
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": self.pid,
                            "tid": self.pid if thread is None else thread, "ts": self.ts(at),
                            "dur": 0.5, "args": {"cbid": 211, "correlation": correlation}})
        for start, end in kernels:
            self.events.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                                "ts": self.ts(start), "dur": round(end - start, 3),
                                "args": {"device": 0, "stream": 7,
                                         "correlation": correlation,
                                         "External id": self.external}})

    def document(self, with_rank=True):
        doc = {"schemaVersion": 1,
               "deviceProperties": [],
               "record_shapes": 1,
               "with_stack": 0}
        if with_rank:
            doc["distributedInfo"] = {"backend": "nccl", "rank": self.rank, "world_size": 2,
                                      "pg_count": 1, "nccl_version": "2.21.5"}
        doc["traceEvents"] = self.events
        doc["traceName"] = f"rank{self.rank}.pt.trace.json"
        doc["displayTimeUnit"] = "ms"
        doc["baseTimeNanoseconds"] = BASE_NS
        return doc


def runtime_ranks(skew_us=0.0, gpu=False):
    """1F1B through _PipelineScheduleRuntime: one PP: range per action."""
    r0, r1 = Rank(0, 1000), Rank(1, 2000, skew_us)
    # rank 0
    r0.action("PP:0F0", 0, 10); r0.noise(1, 9); r0.memory(10, 4096)
    r0.action("PP:0SEND_F0", 10, 11); r0.comm("send", 10.2, 10.8, peer=1)
    r0.action("PP:0F1", 11, 21); r0.noise(12, 20); r0.memory(21, 8192)
    r0.action("PP:0SEND_F1", 21, 22); r0.comm("send", 21.2, 21.8, peer=1)
    r0.action("PP:0RECV_B0", 22, 23); r0.comm("recv", 22.2, 22.8, peer=1)
    r0.action("PP:0B0", 23, 65); r0.comm("wait", 23, 45); r0.noise(46, 64); r0.memory(65, 4096)
    r0.action("PP:0RECV_B1", 65, 66); r0.comm("recv", 65.2, 65.8, peer=1)
    r0.action("PP:0B1", 66, 97); r0.comm("wait", 66, 77); r0.memory(97, 0)
    # rank 1
    r1.action("PP:1RECV_F0", 0, 1); r1.comm("recv", 0.2, 0.8, peer=0)
    r1.action("PP:1F0", 1, 22); r1.comm("wait", 1, 12); r1.noise(13, 21)
    r1.action("PP:1B0", 22, 42)
    r1.action("PP:1SEND_B0", 42, 43); r1.comm("send", 42.2, 42.8, peer=0)
    r1.action("PP:1RECV_F1", 43, 44); r1.comm("recv", 43.2, 43.8, peer=0)
    r1.action("PP:1F1", 44, 54); r1.comm("wait", 44, 44.2)
    r1.action("PP:1B1", 54, 74)
    r1.action("PP:1SEND_B1", 74, 75); r1.comm("send", 74.2, 74.8, peer=0)
    if gpu:
        # Rank 0's forwards launch their kernels on the range's own thread: 0F0 two, 0F1 a CUDA
        # graph of two (one correlation); their twins are what the kernels span.
        r0.launch(1, 101, [(3, 8)]); r0.launch(5, 102, [(8, 13)])
        r0.launch(12, 103, [(14, 18), (20, 24)], call="cudaGraphLaunch")
        r0.gpu("PP:0F0", 3, 13); r0.gpu("PP:0F1", 14, 24)
        # Rank 1's backward: the autograd engine's device thread launches its kernels while the
        # range's thread waits; the range's thread launches one small kernel, all its twin holds.
        autograd = r1.pid + 1
        r1.launch(23, 201, [(25, 30)], thread=autograd)
        r1.launch(24, 203, [(26, 27)])
        r1.launch(30, 202, [(30, 45)], thread=autograd)
        r1.launch(41, 204, [], call="cudaStreamSynchronize")
        r1.gpu("PP:1B0", 26, 27)
        # Work launched outside every action (the optimizer's step) and a kernel whose launch
        # the profiler lost: neither times an action.
        r1.launch(80, 205, [(80, 90)])
        r1.events.append({"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7,
                          "ts": r1.ts(50), "dur": 100.0, "args": {"correlation": 999}})
    return r0, r1


def gpipe_ranks(gpu=False):
    """GPipe's own loop: Forward i / Backward i around receive, compute and send."""
    r0, r1 = Rank(0, 1000), Rank(1, 2000)
    r0.action("Forward 0", 0, 11); r0.comm("send", 10, 11, peer=1)
    r0.action("Forward 1", 11, 22); r0.comm("send", 21, 22, peer=1)
    r0.action("Backward 0", 22, 76); r0.comm("recv", 22, 23, peer=1); r0.comm("wait", 23, 56)
    r0.action("Backward 1", 76, 97.5); r0.comm("recv", 76, 77, peer=1); r0.comm("wait", 77, 77.5)
    r1.action("Forward 0", 0, 22); r1.comm("recv", 0, 1, peer=0); r1.comm("wait", 1, 12)
    r1.action("Forward 1", 22, 33); r1.comm("recv", 22, 22.5, peer=0); r1.comm("wait", 22.5, 23)
    r1.action("Backward 0", 33, 54); r1.comm("send", 53, 54, peer=0)
    r1.action("Backward 1", 54, 75); r1.comm("send", 74, 75, peer=0)
    if gpu:
        # Rank 0's Forward 0: its compute launches a kernel that runs on after the CPU moved on
        # to the send, whose NCCL kernel the send's call launches; Backward 0's compute launches
        # from the autograd thread, after the wait for its gradient.
        r0.launch(2, 301, [(4, 12)])
        r0.launch(10.2, 302, [(12, 13)])
        r0.launch(60, 303, [(61, 70)], thread=r0.pid + 1)
    return r0, r1


def write(name, doc, compress=False):
    path = os.path.join(HERE, name)
    text = json.dumps(doc, indent=None, separators=(", ", ": "))
    if compress:
        with gzip.GzipFile(path, "wb", mtime=0) as out:
            out.write(text.encode())
    else:
        with open(path, "w") as out:
            out.write(text)


def main():
    r0, r1 = runtime_ranks()
    write("runtime_1f1b_rank0.json", r0.document())
    write("runtime_1f1b_rank1.json.gz", r1.document(with_rank=False), compress=True)
    r0, r1 = runtime_ranks(skew_us=-20.0)
    write("skewed_1f1b_rank0.json", r0.document())
    write("skewed_1f1b_rank1.json", r1.document())
    r0, r1 = runtime_ranks(gpu=True)
    write("gpu_1f1b_rank0.json", r0.document())
    write("gpu_1f1b_rank1.json", r1.document())
    r0, r1 = gpipe_ranks()
    write("gpipe_rank0.json", r0.document())
    write("gpipe_rank1.json", r1.document())
    r0, r1 = gpipe_ranks(gpu=True)
    write("gpipe_gpu_rank0.json", r0.document())
    write("gpipe_gpu_rank1.json", r1.document())
    # No pipeline ranges at all: an ordinary training loop's trace.
    plain = Rank(0, 1000)
    plain.noise(0, 10)
    write("no_pp_ranges.json", plain.document())


if __name__ == "__main__":
    main()
