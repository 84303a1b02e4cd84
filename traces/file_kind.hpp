// What kind of file a path holds, told from its first bytes (never from its name), for every
// command that takes a file: a pipelens trace, an experiment or plan (TOML), a schedule
// (PyTorch CSV), or one of the files `pipelens import` reads (profiler and pipelining JSON,
// flight-recorder dumps, Megatron timers). Commands ask before their own parser runs, so a file
// of another kind is named for what it is instead of failing deep in the wrong parser.
//
// Invariants: reads at most the first 64 KiB (gzip-decompressed when gzip), enough for a JSON
// document's top-level keys or a pickle's first opcode and small for a 2 GB trace; a file
// that cannot be opened or matches no rule is `unknown`, and the command's own parser reports
// it; the import formats are told apart by the rules `pipelens import` uses (this is their one
// definition).
#pragma once

#include <string>
#include <string_view>

namespace pipelens::traces {

enum class FileKind {
    unknown,                 // unreadable, empty, binary or text matching no rule
    sqlite,                  // SQLite database: a pipelens trace, or the trace reader says not
    experiment_toml,         // TOML without [cluster] or [plan]
    plan_toml,               // TOML with [cluster] or [plan] (`pipelens plan`'s file)
    schedule_csv,            // PyTorch's _dump_csv: one row of actions per rank
    pytorch_profiler,        // Chrome/Kineto JSON from torch.profiler
    pipelining_chrometrace,  // torch.distributed.pipelining's _dump_chrometrace
    flight_recorder,         // NCCL flight-recorder dump (pickle or JSON)
    megatron_timers,         // Megatron-LM event_times JSON
};

FileKind file_kind_of_head(std::string_view head);  // `head`: the first bytes, decompressed
FileKind file_kind_of(const std::string& path);

// "a pipelens trace (SQLite)", "a schedule (PyTorch CSV)", ...; "" for unknown.
std::string_view file_kind_description(FileKind kind);

}  // namespace pipelens::traces
