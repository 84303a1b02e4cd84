#!/usr/bin/env python3
"""Writes the flight-recorder fixtures of tests/import/flight_recorder_test.cpp (stdlib only).

Each case is a directory with one dump per rank named as PyTorch names them
(<prefix><rank>, prefix nccl_trace_rank_), in two encodings:
  <case>/pickle/nccl_trace_rank_<r>     what FlightRecorder::dump() writes: a pickle made by
                                         torch::jit::Pickler (protocol 2; every string memoized
                                         with BINPUT and repeated with BINGET; dicts as EMPTY_DICT
                                         MARK ... SETITEMS; lists as EMPTY_LIST MARK ... APPENDS;
                                         ints as BININT1/BININT2/BININT or an 8-byte LONG1);
                                         written by the small emitter below
  <case>/json/nccl_trace_rank_<r>.json  what dump_json() writes (_dump_nccl_trace_json): the same
                                         fields, times not yet seen as 0, pg_status figures as
                                         strings, no frames
The dump's fields and their order follow torch/csrc/distributed/c10d/FlightRecorder.hpp and
FlightRecorderDetail.hpp (getCollectiveTrace, getPgConfig, getPgStatus, dump_dict, dump_json),
format version 2.10. A few files are written with Python's own pickle (protocol 2) instead, to
cover its opcode choices, and a few are broken on purpose.

Run from anywhere: python3 tests/data/flight_recorder/make_dumps.py
"""
import json
import os
import pickle
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = "2.10"
BASE_NS = 1_700_000_000_000_000_000  # past 2**32: written as 8-byte LONG1
MS = 1_000_000


class TorchStylePickler:
    """The opcodes torch::jit::Pickler (tag_aggregates=false) emits for FlightRecorder's dict."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")  # PROTO 2
        self.memo = 0
        self.strings = {}

    def put(self):
        if self.memo <= 0xFF:
            self.out += b"q" + bytes([self.memo])  # BINPUT
        else:
            self.out += b"r" + struct.pack("<I", self.memo)  # LONG_BINPUT
        self.memo += 1
        return self.memo - 1

    def value(self, v):
        if v is None:
            self.out += b"N"
        elif v is True:
            self.out += b"\x88"
        elif v is False:
            self.out += b"\x89"
        elif isinstance(v, int):
            if 0 <= v <= 0xFF:
                self.out += b"K" + bytes([v])
            elif 0 <= v <= 0xFFFF:
                self.out += b"M" + struct.pack("<H", v)
            elif -(2**31) <= v < 2**31:
                self.out += b"J" + struct.pack("<i", v)
            else:
                self.out += b"\x8a\x08" + struct.pack("<q", v)
        elif isinstance(v, float):
            self.out += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            if v in self.strings:
                self.out += b"h" + bytes([self.strings[v]])  # BINGET (fixtures stay < 256)
            else:
                data = v.encode()
                self.out += b"X" + struct.pack("<I", len(data)) + data
                self.strings[v] = self.put()
        elif isinstance(v, tuple):
            assert 1 <= len(v) <= 3
            for item in v:
                self.value(item)
            self.out += bytes([0x84 + len(v)])  # TUPLE1..3
        elif isinstance(v, list):
            self.out += b"]("
            for item in v:
                self.value(item)
            self.out += b"e"  # APPENDS
        elif isinstance(v, dict):
            self.out += b"}("
            for key, item in v.items():
                self.value(key)
                self.value(item)
            self.out += b"u"  # SETITEMS
        else:
            raise TypeError(type(v))

    def dumps(self, v):
        self.value(v)
        self.out += b"."
        return bytes(self.out)


class Rank:
    """One rank's recorder: counters as ProcessGroupNCCL keeps them, entries as recorded."""

    def __init__(self, rank, groups):
        self.rank = rank
        self.groups = groups  # name -> (desc, ranks)
        self.entries = []
        self.coll = {name: 0 for name in groups}
        self.p2p = {name: 0 for name in groups}
        self.op_id = 0
        self.clock = BASE_NS + rank * 37_000  # ranks' clocks differ a little

    def local(self, group, rank):
        return sorted(self.groups[group][1]).index(rank)

    def op(self, group, name, sizes, state, p2p, dtype="Float", out_sizes=None):
        if p2p:
            self.p2p[group] += 1
        else:
            self.coll[group] += 1
        self.op_id += 1
        self.clock += MS
        created = self.clock
        started = created + 2000 if state in ("started", "completed") else None
        completed = created + 500_000 if state == "completed" else None
        out_sizes = sizes if out_sizes is None else out_sizes
        entry = {
            "frames": [{"name": "train_step", "filename": "train.py", "line": 42 + len(self.entries)}],
            "record_id": len(self.entries),
            "pg_id": list(self.groups).index(group),
            "process_group": (group, self.groups[group][0]),
            "thread_name": "pt_main_thread",
            "thread_id": "140000000000000",
            "collective_seq_id": self.coll[group],
            "p2p_seq_id": self.p2p[group],
            "op_id": self.op_id,
            "profiling_name": name,
            "time_created_ns": created,
        }
        if completed is not None:
            entry["duration_ms"] = 0.25
        entry.update({
            "input_sizes": [list(s) for s in sizes],
            "input_dtypes": [dtype] * len(sizes),
            "output_sizes": [list(s) for s in out_sizes],
            "output_dtypes": [dtype] * len(out_sizes),
            "state": state,
            "time_discovered_started_ns": started,
            "time_discovered_completed_ns": completed,
            "retired": state == "completed",
            "timeout_ms": 600000,
            "is_p2p": p2p,
        })
        self.entries.append(entry)

    def send(self, peer, state, sizes=((4, 8),), group="0"):
        self.op(group, f"nccl:send {self.local(group, self.rank)}->{self.local(group, peer)}",
                sizes, state, True)

    def recv(self, peer, state, sizes=((4, 8),), group="0"):
        self.op(group, f"nccl:recv {self.local(group, self.rank)}<-{self.local(group, peer)}",
                sizes, state, True)

    def all_reduce(self, state, sizes=((1024,),), group="0"):
        self.op(group, "nccl:all_reduce", sizes, state, False)

    def status(self):
        out = {}
        for index, name in enumerate(self.groups):
            seqs = [e for e in self.entries if e["process_group"][0] == name and not e["is_p2p"]]
            last = lambda states: max([e["collective_seq_id"] for e in seqs if e["state"] in states],
                                      default=-1)
            out[str(index)] = {
                "last_enqueued_collective": self.coll[name] if seqs else -1,
                "last_started_collective": last(("started", "completed")),
                "last_completed_collective": last(("completed",)),
            }
        return out

    def pg_config(self):
        return {name: {"name": name, "desc": desc, "ranks": "[" + ", ".join(map(str, ranks)) + "]"}
                for name, (desc, ranks) in self.groups.items()}

    def dump(self, version=VERSION):
        return {
            "version": version,
            "pg_config": self.pg_config(),
            "comm_lib_version": "2.21.5",
            "pg_status": self.status(),
            "entries": self.entries,
        }

    def dump_json(self, version=VERSION):
        entries = []
        for e in self.entries:
            j = {k: v for k, v in e.items() if k != "frames"}
            j["process_group"] = list(e["process_group"])
            j["time_discovered_started_ns"] = e["time_discovered_started_ns"] or 0
            j["time_discovered_completed_ns"] = e["time_discovered_completed_ns"] or 0
            entries.append(j)
        status = {pg: {k: str(v) for k, v in s.items()} for pg, s in self.status().items()}
        out = {"version": version, "comm_lib_version": "2.21.5", "pg_config": self.pg_config(),
               "pg_status": status}
        if entries:
            out["entries"] = entries
        return out


def write_case(case, ranks, python_pickle_ranks=(), version=VERSION):
    for sub in ("pickle", "json"):
        os.makedirs(os.path.join(HERE, case, sub), exist_ok=True)
    for r in ranks:
        dump = r.dump(version)
        data = (pickle.dumps(dump, protocol=2) if r.rank in python_pickle_ranks
                else TorchStylePickler().dumps(dump))
        assert pickle.loads(data) == dump, case  # the emitter writes what Python reads back
        with open(os.path.join(HERE, case, "pickle", f"nccl_trace_rank_{r.rank}"), "wb") as f:
            f.write(data)
        with open(os.path.join(HERE, case, "json", f"nccl_trace_rank_{r.rank}.json"), "w") as f:
            json.dump(r.dump_json(version), f, indent=1)
            f.write("\n")


def two_ranks():
    groups = {"0": ("default_pg", [0, 1])}
    return Rank(0, groups), Rank(1, groups)


def p2p_clean():
    r0, r1 = two_ranks()
    r0.send(1, "completed"); r1.recv(0, "completed")
    r0.recv(1, "completed"); r1.send(0, "completed")
    r0.send(1, "completed"); r1.recv(0, "completed")
    r0.all_reduce("completed"); r1.all_reduce("completed")
    write_case("p2p_clean", [r0, r1], python_pickle_ranks=(1,))


def recv_never_posted():
    # Rank 0 sends twice; rank 1 posts only the first recv and goes on to an all_reduce that
    # rank 0 never reaches.
    r0, r1 = two_ranks()
    r0.send(1, "completed"); r1.recv(0, "completed")
    r0.send(1, "started")
    r1.all_reduce("started")
    write_case("recv_never_posted", [r0, r1])


def recv_recv_cycle():
    # Both ranks post their recv before their send: 0 waits for 1's send, 1 for 0's.
    r0, r1 = two_ranks()
    r0.all_reduce("completed"); r1.all_reduce("completed")
    r0.recv(1, "started"); r1.recv(0, "started")
    r0.send(1, "scheduled"); r1.send(0, "scheduled")
    write_case("recv_recv_cycle", [r0, r1])


def collective_size_mismatch():
    r0, r1 = two_ranks()
    r0.all_reduce("completed"); r1.all_reduce("completed")
    r0.all_reduce("started", sizes=((1024,),)); r1.all_reduce("started", sizes=((512,),))
    write_case("collective_size_mismatch", [r0, r1])


def collective_missing_rank():
    groups = {"0": ("default_pg", [0, 1, 2])}
    r0, r1, r2 = Rank(0, groups), Rank(1, groups), Rank(2, groups)
    for r in (r0, r1, r2):
        r.all_reduce("completed")
    r0.all_reduce("started"); r1.all_reduce("started")
    write_case("collective_missing_rank", [r0, r1, r2])


def broken():
    os.makedirs(os.path.join(HERE, "bad"), exist_ok=True)
    r0, _ = two_ranks()
    r0.send(1, "completed")
    with open(os.path.join(HERE, "bad", "unknown_version_rank0.pkl"), "wb") as f:
        f.write(TorchStylePickler().dumps(r0.dump(version="3.0")))
    whole = TorchStylePickler().dumps(r0.dump())
    with open(os.path.join(HERE, "bad", "truncated_rank0.pkl"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    # PROTO 2, then GLOBAL builtins.eval at byte 2: what a malicious "dump" would start with.
    with open(os.path.join(HERE, "bad", "global_rank0.pkl"), "wb") as f:
        f.write(b"\x80\x02cbuiltins\neval\nq\x00X\x05\x00\x00\x001 + 1q\x01\x85q\x02Rq\x03.")


if __name__ == "__main__":
    for case in ("p2p_clean", "recv_never_posted", "recv_recv_cycle", "collective_size_mismatch",
                 "collective_missing_rank", "bad"):
        shutil.rmtree(os.path.join(HERE, case), ignore_errors=True)
    p2p_clean()
    recv_never_posted()
    recv_recv_cycle()
    collective_size_mismatch()
    collective_missing_rank()
    broken()
