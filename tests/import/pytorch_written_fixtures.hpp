// Comparing what PyTorch itself wrote (tests/data/pytorch/, made by
// scripts/device/pytorch_fixtures.py on a machine with PyTorch) with what pipelens makes of the
// same parameters: schedule CSVs against pipelens' generated and lowered orders, refusals
// against pipelens' refusals, profiler traces and flight-recorder dumps through the importers.
//
// Invariants: a folder with no fixtures compares nothing and says so (`compared == 0`), so a
// test can skip instead of passing silently; every difference is one line naming the file, the
// rank and the first step where the two orders part; the fixture file names carry the
// parameters (KIND_ppP_vV_mM_LOWERING.csv), and fixture_file_name/parse_fixture_name are exact
// inverses, so the self-tests can write a folder pipelens made under the same names.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens::testing {

inline constexpr const char* kNoPyTorchFixturesYet =
    "no PyTorch-written fixtures yet (made by scripts/device/pytorch_fixtures.py on the GPU "
    "machine)";

// The first 40 items, one per line: enough to act on without flooding the log.
inline std::string first_lines(const std::vector<std::string>& items) {
    constexpr std::size_t kShown = 40;
    std::string text;
    for (std::size_t i = 0; i < items.size() && i < kShown; ++i)
        text += "\n  " + items[i];
    if (items.size() > kShown)
        text += "\n  ... and " + std::to_string(items.size() - kShown) + " more";
    return text;
}

// <source>/tests/data/pytorch: where `tar xzf pytorch_fixtures.tar.gz` puts the files.
std::filesystem::path pytorch_fixture_root();

// The traces of one profiled run as the script lays them out: profiler/RUN/rank<R>.pt.trace.json.gz
// for R in 0..ranks-1.
inline std::vector<std::string> profiler_rank_files(const std::string& run, int ranks) {
    std::vector<std::string> files;
    for (int rank = 0; rank < ranks; ++rank)
        files.push_back((pytorch_fixture_root() / "profiler" / run /
                         ("rank" + std::to_string(rank) + ".pt.trace.json.gz"))
                            .string());
    return files;
}

// The lowerings a schedule CSV can hold: the compute order, PyTorch's lowering with SEND/RECV
// and FSDP actions, and the same with deferred receives (defer_pp_recv=True).
inline constexpr std::string_view kCompute = "compute";
inline constexpr std::string_view kComms = "comms";
inline constexpr std::string_view kCommsDeferred = "comms_defer";

struct FixtureName {
    std::string kind;  // PyTorch's class name without "Schedule": "Interleaved1F1B"
    int pp = 0;
    int v = 0;
    int m = 0;
    std::string lowering;  // kCompute, kComms or kCommsDeferred
    friend bool operator==(const FixtureName&, const FixtureName&) = default;
};

std::string fixture_file_name(const FixtureName& name);
// nullopt for any other file name (refusals.json, a stray file).
std::optional<FixtureName> parse_fixture_name(std::string_view file_name);

// pipelens' order for a fixture's parameters: generated, and for the comms lowerings lowered
// with the FSDP actions kept (and deferred receives for kCommsDeferred). Throws
// ScheduleConfigError for a kind pipelens does not know or a shape it refuses.
Schedule pipelens_order(const FixtureName& name);

// Each rank's actions as text, in order.
using RankTexts = std::vector<std::vector<std::string>>;
RankTexts rank_texts(const Schedule& schedule);
// Sorts every run of consecutive RESHARD actions: PyTorch evicts FSDP stages in Python set
// order, pipelens in ascending stage order, and nothing else depends on that order.
void sort_reshard_runs(RankTexts& texts);
// Drops the microbatch number from every action ("3F12" -> "3F"): the kind order alone.
void drop_microbatches(RankTexts& texts);
// "" when equal, else one line: the rank count, or the first rank and step that differ and
// the actions there.
std::string first_difference(const RankTexts& pytorch, const RankTexts& pipelens);

struct ScheduleFolderReport {
    int compared = 0;                              // schedule CSVs compared
    int refusals_checked = 0;                      // refusals.json entries pipelens was asked about
    std::vector<std::string> differences;          // schedule CSVs against pipelens' orders
    std::vector<std::string> refusal_differences;  // refusals.json against pipelens' refusals
    std::vector<std::string> unknown_kinds;        // PyTorch classes pipelens has no kind for
};

// Compares every KIND_ppP_vV_mM_LOWERING.csv in `folder` and its refusals.json (when there).
// A compute CSV without a comms sibling comes from a class PyTorch does not lower (its
// single-stage classes print a table their runtime loop does not follow): only the order of
// kinds per rank is compared for it.
ScheduleFolderReport compare_schedule_folder(const std::filesystem::path& folder);

struct ImportFolderReport {
    int imported = 0;  // runs (profiler) or cases (flight recorder) read
    std::vector<std::string> problems;
    std::vector<std::string> summaries;  // per run: what was read, for the test's log
};

// Every subfolder of `folder` holding rank*.pt.trace.json[.gz] files is one profiler run;
// each must import with actions on every rank.
ImportFolderReport import_profiler_folder(const std::filesystem::path& folder);
// Every subfolder of `folder` holding rank_<r> (pickle) or rank_<r>.json dumps is one set of
// dumps (the script writes a case's pickles to <case>/ and its JSON twins to <case>_json/);
// each set must read and analyse. Other files (PyTorch's own dumps on a timeout, notes) are
// left alone.
ImportFolderReport import_flight_recorder_folder(const std::filesystem::path& folder);

}  // namespace pipelens::testing
