#!/usr/bin/env python3
"""Writes the torch.distributed.pipelining dump fixtures of tests/import/pipelining_dumps_test.cpp.

There is no PyTorch here, so this script redoes, in a few lines of its own, what PyTorch does
before it dumps a schedule (pytorch/pytorch torch/distributed/pipelining/schedules.py, read at
commit 1fd7abc2f521e4429a29c3088e39ebaca20f4698):

  1. the compute order of Schedule1F1B for pp=2, m=4 (stage s warms up with min(m, pp - s)
     forwards, then alternates B and F, then drains), as `pipelens schedule --kind 1F1B --pp 2
     --m 4` prints it;
  2. `_add_send_recv`: ranks take turns in rank order; a rank places its next compute action
     once its input is there (F after its RECV_F, I/B after its RECV_B, first/last stage
     always), followed by its SEND, and puts the matching RECV at the end of the peer's list;
  3. `_simulate_comms_compute`: one action or an idle slot (None) per rank per step, ranks in
     rank order, an action placed once what it waits for has been placed (F: RECV_F or the
     previous stage's F on this rank; I/B: RECV_B or the next stage's I/B on this rank;
     SEND_F/SEND_B: its own F or I/B; RECV_F/RECV_B: the peer's SEND), a rank's placement
     visible to the ranks after it in the same step; then a second pass fills a rank's idle
     slot of this step if its next action became ready;

and writes what `_dump_chrometrace` (json.dump of {"traceEvents": [...]}, "cat" "computation"
for F, B, W and "communication" otherwise, "ts" the step, "dur" 1) and `_dump_csv` (csv.writer
rows, None as an empty cell, CRLF line ends) write for the simulated schedule. Run it from this
directory; it prints the simulated steps. Standard library only.
"""
import csv
import json
import re

PP, M = 2, 4
STAGES = PP
rank_of = lambda stage: stage  # 1F1B: stage s on rank s


def parse(text):
    stage, kind, mb = re.fullmatch(r"(\d+)([A-Z_]+?)(\d*)", text).groups()
    return int(stage), kind, int(mb) if mb else None


def text(stage, kind, mb):
    return f"{stage}{kind}{'' if mb is None else mb}"


def one_f_one_b(rank):
    warmup = min(M, PP - rank)
    order = [(rank, "F", mb) for mb in range(warmup)]
    forward, backward = warmup, 0
    while True:
        order.append((rank, "B", backward))
        backward += 1
        if forward == M:
            break
        order.append((rank, "F", forward))
        forward += 1
    order += [(rank, "B", mb) for mb in range(backward, M)]
    return order


def add_send_recv(compute):
    out = {rank: [] for rank in compute}
    seen = {rank: set() for rank in compute}
    pending = {rank: list(actions) for rank, actions in compute.items()}

    def ready(action, rank):
        stage, kind, mb = action
        if kind == "F" and stage != 0:
            return (stage, "RECV_F", mb) in seen[rank] or (stage - 1, "F", mb) in seen[rank]
        if kind in ("I", "B") and stage != STAGES - 1:
            return (stage, "RECV_B", mb) in seen[rank] or any(
                (stage + 1, k, mb) in seen[rank] for k in ("I", "B"))
        return True

    def place(rank, action):
        out[rank].append(action)
        seen[rank].add(action)

    while pending:
        progress = False
        for rank in sorted(pending):
            action = pending[rank][0]
            if not ready(action, rank):
                continue
            place(rank, action)
            stage, kind, mb = action
            if kind == "F" and stage != STAGES - 1 and rank_of(stage + 1) != rank:
                place(rank, (stage, "SEND_F", mb))
                place(rank_of(stage + 1), (stage + 1, "RECV_F", mb))
            if kind in ("I", "B") and stage != 0 and rank_of(stage - 1) != rank:
                place(rank, (stage, "SEND_B", mb))
                place(rank_of(stage - 1), (stage - 1, "RECV_B", mb))
            pending[rank].pop(0)
            if not pending[rank]:
                del pending[rank]
            progress = True
        assert progress, "the compute order cannot be lowered"
    return out


def simulate(order):
    pending = {rank: list(actions) for rank, actions in order.items()}
    steps = {rank: [] for rank in order}
    seen = {rank: set() for rank in order}

    def ready(action):
        stage, kind, mb = action
        done = seen[rank_of(stage)]
        if kind == "F":
            return stage == 0 or (stage, "RECV_F", mb) in done or (stage - 1, "F", mb) in done
        if kind in ("I", "B"):
            return (stage == STAGES - 1 or (stage, "RECV_B", mb) in done
                    or (stage + 1, "I", mb) in done or (stage + 1, "B", mb) in done)
        if kind == "W":
            return True
        if kind == "SEND_F":
            return (stage, "F", mb) in done
        if kind == "SEND_B":
            return (stage, "I", mb) in done or (stage, "B", mb) in done
        if kind == "RECV_F":
            return (stage - 1, "SEND_F", mb) in seen[rank_of(stage - 1)]
        if kind == "RECV_B":
            return (stage + 1, "SEND_B", mb) in seen[rank_of(stage + 1)]
        raise ValueError(action)

    while pending:
        progress = False
        for rank in sorted(pending):
            action = pending[rank][0]
            if ready(action):
                steps[rank].append(action)
                seen[rank].add(action)
                pending[rank].pop(0)
                progress = True
            else:
                steps[rank].append(None)
        pending = {rank: actions for rank, actions in pending.items() if actions}
        for rank in sorted(pending):
            if steps[rank][-1] is None and ready(pending[rank][0]):
                steps[rank][-1] = pending[rank].pop(0)
                seen[rank].add(steps[rank][-1])
        pending = {rank: actions for rank, actions in pending.items() if actions}
        assert progress, "the schedule hangs"
    return steps


def dump_chrometrace(steps, filename):
    events = []
    for rank in sorted(steps):
        for step, action in enumerate(steps[rank]):
            if action is None:
                continue
            events.append({
                "name": text(*action),
                "cat": "computation" if action[1] in ("F", "B", "W") else "communication",
                "ph": "X", "pid": rank, "tid": rank, "ts": step, "dur": 1,
            })
    with open(filename, "w") as f:
        json.dump({"traceEvents": events}, f)


def dump_csv(steps, filename):
    with open(filename, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in steps:
            writer.writerow([None if a is None else text(*a) for a in steps[rank]])


if __name__ == "__main__":
    lowered = add_send_recv({rank: one_f_one_b(rank) for rank in range(PP)})
    steps = simulate(lowered)
    for rank in steps:
        print(f"rank {rank} lowered:", ",".join(text(*a) for a in lowered[rank]))
    for rank in steps:
        print(f"rank {rank} steps:", " ".join(
            f"{i}:{text(*a)}" for i, a in enumerate(steps[rank]) if a is not None))
    dump_chrometrace(steps, "1f1b_pp2_m4_comms.json")
    dump_csv(steps, "1f1b_pp2_m4_comms.csv")
