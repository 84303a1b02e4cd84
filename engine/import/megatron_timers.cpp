// Reading Megatron's PP-timer JSON. Numbers are taken from their text through nlohmann's SAX
// interface, which hands number_float the lexer's own digits, so 1.0317440032958984 ms becomes
// 1031744 ns by shifting digits rather than by a round trip through a double. The file name is
// parsed because it is the only place the patch says which pipeline rank a file belongs to.
#include "engine/import/megatron_timers.hpp"

#include "engine/import/decimal_text.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/import/import_format.hpp"
#include "engine/import/json_document.hpp"

namespace pipelens::import {
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::string_view kNamePattern =
    "event_times_PP{pp}_VPP{v}_TPxCPxDP_rank_{r}_pp_rank_{p}_rank_{g}.json (or .json.gz)";

// What the patch writes into a file name. `vpp` is 0 where it wrote "None".
struct TimerFileName {
    int pp = 0;
    int vpp = 0;
    int replica = 0;  // TPxCPxDP rank: which tensor/context/data-parallel copy of the pipeline
    int pp_rank = 0;
};

std::optional<int> small_int(std::string_view digits) {
    int value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size())
        return std::nullopt;
    return value;
}

std::optional<TimerFileName> parse_file_name(const std::string& path) {
    static const std::regex kPattern(
        R"(event_times_PP(\d+)_VPP(\d+|None)_TPxCPxDP_rank_(\d+)_pp_rank_(\d+)_rank_(\d+)\.json(?:\.gz)?)");
    const std::string name = std::filesystem::path(path).filename().string();
    std::smatch match;
    if (!std::regex_match(name, match, kPattern))
        return std::nullopt;
    const auto pp = small_int(match.str(1));
    const auto vpp = match.str(2) == "None" ? std::optional<int>(0) : small_int(match.str(2));
    const auto replica = small_int(match.str(3));
    const auto pp_rank = small_int(match.str(4));
    if (!pp || !vpp || !replica || !pp_rank || *pp < 1)
        return std::nullopt;
    return TimerFileName{*pp, *vpp, *replica, *pp_rank};
}

enum class Pass { forward, backward };

// One key: "forward-3-start", or with virtual stages "backward-1-3-end" (chunk 1, microbatch 3).
struct TimerKey {
    Pass pass = Pass::forward;
    int chunk = 0;
    int microbatch = 0;
    bool chunked = false;
    bool start = true;
};

bool is_timer_name(std::string_view key) {
    return key.starts_with("forward-") || key.starts_with("backward-");
}

std::optional<TimerKey> parse_key(std::string_view key) {
    TimerKey parsed;
    parsed.pass = key.starts_with("forward-") ? Pass::forward : Pass::backward;
    key.remove_prefix(parsed.pass == Pass::forward ? 8 : 9);
    std::vector<std::string_view> parts;
    for (std::size_t dash; (dash = key.find('-')) != std::string_view::npos;) {
        parts.push_back(key.substr(0, dash));
        key.remove_prefix(dash + 1);
    }
    parts.push_back(key);
    if (parts.size() != 2 && parts.size() != 3)
        return std::nullopt;
    if (parts.back() != "start" && parts.back() != "end")
        return std::nullopt;
    parsed.start = parts.back() == "start";
    parsed.chunked = parts.size() == 3;
    const auto microbatch = small_int(parts[parts.size() - 2]);
    const auto chunk = parsed.chunked ? small_int(parts[0]) : std::optional<int>(0);
    if (!microbatch || !chunk || *microbatch < 0 || *chunk < 0)
        return std::nullopt;
    parsed.microbatch = *microbatch;
    parsed.chunk = *chunk;
    return parsed;
}

std::string pass_name(Pass pass, int chunk, int microbatch, bool chunked) {
    const char* name = pass == Pass::forward ? "forward" : "backward";
    return chunked ? fmt::format("{}-{}-{}", name, chunk, microbatch)
                   : fmt::format("{}-{}", name, microbatch);
}

struct TimerEntry {
    std::string key;
    std::int64_t ns = 0;
};

// Collects a flat JSON object of names to milliseconds; anything else stops the parse with
// `error` saying why and where.
class TimerJsonReader final : public nlohmann::json_sax<Json> {
  public:
    explicit TimerJsonReader(std::string path) : path_(std::move(path)) {}

    std::vector<TimerEntry> entries;
    std::string error;

    bool null() override { return wrong_value("null"); }
    bool boolean(bool) override { return wrong_value("a boolean"); }
    bool number_integer(number_integer_t value) override { return add_integer(value); }
    bool number_unsigned(number_unsigned_t value) override {
        if (value > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max()))
            return out_of_range(std::to_string(value));
        return add_integer(static_cast<std::int64_t>(value));
    }
    bool number_float(number_float_t, const string_t& text) override {
        if (depth_ != 1)
            return wrong_value("a number");
        const auto ns = milliseconds_text_to_ns(text);
        if (!ns)
            return out_of_range(text);
        entries.push_back({key_, *ns});
        return true;
    }
    bool string(string_t&) override { return wrong_value("a string"); }
    bool binary(binary_t&) override { return wrong_value("binary data"); }
    bool start_object(std::size_t) override {
        return depth_++ == 0 ? true : wrong_value("an object");
    }
    bool key(string_t& name) override {
        key_ = name;
        return true;
    }
    bool end_object() override {
        --depth_;
        return true;
    }
    bool start_array(std::size_t) override { return wrong_value("an array"); }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& failure) override {
        error = fmt::format("{}: not valid JSON (byte {}): {}", path_, position,
                            json_error_text(failure));
        return false;
    }

  private:
    bool add_integer(std::int64_t milliseconds) {
        if (depth_ != 1)
            return wrong_value("a number");
        if (milliseconds > std::numeric_limits<std::int64_t>::max() / kNsPerMs ||
            milliseconds < std::numeric_limits<std::int64_t>::min() / kNsPerMs)
            return out_of_range(std::to_string(milliseconds));
        entries.push_back({key_, milliseconds * kNsPerMs});
        return true;
    }
    bool wrong_value(std::string_view what) {
        error = depth_ == 0 ? fmt::format(
                                  "{}: expected one JSON object of timer names to "
                                  "milliseconds, found {}",
                                  path_, what)
                            : fmt::format("{}: key \"{}\" holds {}, not a number of milliseconds",
                                          path_, key_, what);
        return false;
    }
    bool out_of_range(std::string_view text) {
        error = fmt::format("{}: key \"{}\": {} ms is out of range", path_, key_, text);
        return false;
    }

    std::string path_;
    std::string key_;
    int depth_ = 0;
};

struct Interval {
    std::optional<std::int64_t> start_ns;
    std::optional<std::int64_t> end_ns;
};

// One rank's file, read: its passes by (pass, chunk, microbatch).
struct RankTimers {
    std::string path;
    TimerFileName name;
    bool chunked = false;
    std::map<std::tuple<Pass, int, int>, Interval> passes;
    std::vector<std::string> ignored_keys;
};

std::vector<TimerEntry> read_entries(const std::string& path) {
    const std::string text = read_input_file(path);
    TimerJsonReader reader(path);
    if (!Json::sax_parse(text, &reader))
        throw ImportError(reader.error);
    return std::move(reader.entries);
}

void add_entry(RankTimers& rank, const TimerEntry& entry, std::optional<std::string>& first_key) {
    const auto key = parse_key(entry.key);
    if (!key)
        throw ImportError(
            fmt::format("{}: key \"{}\" is neither forward|backward-{{mb}}-start|end nor "
                        "forward|backward-{{chunk}}-{{mb}}-start|end",
                        rank.path, entry.key));
    if (!first_key) {
        first_key = entry.key;
        rank.chunked = key->chunked;
    } else if (key->chunked != rank.chunked) {
        throw ImportError(fmt::format(
            "{}: key \"{}\" and key \"{}\" differ in form (with and without a model chunk); the "
            "patch writes one form per file",
            rank.path, *first_key, entry.key));
    }
    Interval& interval = rank.passes[{key->pass, key->chunk, key->microbatch}];
    std::optional<std::int64_t>& slot = key->start ? interval.start_ns : interval.end_ns;
    if (slot)
        throw ImportError(fmt::format("{}: key \"{}\" appears twice", rank.path, entry.key));
    slot = entry.ns;
}

// A rank's passes run one after another on its compute stream; two that overlap cannot both
// be true, and importing them would double the rank's busy time.
void check_one_pass_at_a_time(const RankTimers& rank) {
    struct Timed {
        std::int64_t start_ns;
        std::int64_t end_ns;
        std::string name;
    };
    std::vector<Timed> timed;
    for (const auto& [id, interval] : rank.passes) {
        const auto& [pass, chunk, microbatch] = id;
        timed.push_back({*interval.start_ns, *interval.end_ns,
                         pass_name(pass, chunk, microbatch, rank.chunked)});
    }
    std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
        return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
    });
    for (std::size_t i = 1; i < timed.size(); ++i)
        if (timed[i].start_ns < timed[i - 1].end_ns)
            throw ImportError(fmt::format(
                "{}: \"{}\" ({:.6f} to {:.6f} ms) overlaps \"{}\" ({:.6f} to {:.6f} ms); one "
                "rank runs one pass at a time",
                rank.path, timed[i].name, static_cast<double>(timed[i].start_ns) / kNsPerMs,
                static_cast<double>(timed[i].end_ns) / kNsPerMs, timed[i - 1].name,
                static_cast<double>(timed[i - 1].start_ns) / kNsPerMs,
                static_cast<double>(timed[i - 1].end_ns) / kNsPerMs));
}

void check_intervals(const RankTimers& rank) {
    for (const auto& [id, interval] : rank.passes) {
        const auto& [pass, chunk, microbatch] = id;
        const std::string name = pass_name(pass, chunk, microbatch, rank.chunked);
        if (!interval.start_ns || !interval.end_ns)
            throw ImportError(fmt::format("{}: key \"{}-{}\" has no \"{}-{}\"", rank.path, name,
                                          interval.start_ns ? "start" : "end", name,
                                          interval.start_ns ? "end" : "start"));
        if (*interval.end_ns < *interval.start_ns)
            throw ImportError(
                fmt::format("{}: \"{}\" ends ({:.6f} ms) before it starts ({:.6f} ms)", rank.path,
                            name, static_cast<double>(*interval.end_ns) / kNsPerMs,
                            static_cast<double>(*interval.start_ns) / kNsPerMs));
        if (*interval.start_ns < 0)
            throw ImportError(fmt::format(
                "{}: \"{}\" starts at {:.6f} ms, before the rank's own start event (0 ms)",
                rank.path, name, static_cast<double>(*interval.start_ns) / kNsPerMs));
    }
    check_one_pass_at_a_time(rank);
}

RankTimers read_rank(const std::string& path, const TimerFileName& name) {
    RankTimers rank;
    rank.path = path;
    rank.name = name;
    std::optional<std::string> first_key;
    for (const TimerEntry& entry : read_entries(path)) {
        if (is_timer_name(entry.key))
            add_entry(rank, entry, first_key);
        else if (entry.key != "total-execution-time")  // the step's end: not an action
            rank.ignored_keys.push_back(entry.key);
    }
    if (rank.passes.empty())
        throw ImportError(fmt::format(
            "{}: no forward-/backward- timer keys; not a Megatron PP-timer event_times file",
            path));
    check_intervals(rank);
    return rank;
}

struct NamedFile {
    std::string path;
    TimerFileName name;
};

// The files of one tensor/context/data-parallel copy of the pipeline (the lowest TPxCPxDP rank
// given), checked to name every pipeline rank once; the rest are counted, not read.
std::vector<NamedFile> files_by_rank(const std::vector<std::string>& files, int& set_aside) {
    if (files.empty())
        throw ImportError("megatron timers: no files given");
    std::vector<NamedFile> named;
    for (const std::string& path : files) {
        const auto name = parse_file_name(path);
        if (!name)
            throw ImportError(fmt::format(
                "{}: cannot tell its pipeline rank: the PP-timer patch names its files {} (the "
                "content does not say the rank); keep that name",
                path, kNamePattern));
        named.push_back({path, *name});
    }
    const auto lowest = [](const NamedFile& a, const NamedFile& b) {
        return a.name.replica < b.name.replica;
    };
    const int replica = std::min_element(named.begin(), named.end(), lowest)->name.replica;
    const int pp = named.front().name.pp;
    std::map<int, NamedFile> by_rank;  // a map: PP in a file name may be any number
    set_aside = 0;
    for (const NamedFile& file : named) {
        if (file.name.pp != pp)
            throw ImportError(
                fmt::format("{}: is from a run with PP{} but {} is from one with "
                            "PP{}; give the files of one run",
                            file.path, file.name.pp, named.front().path, pp));
        if (file.name.replica != replica) {
            ++set_aside;
            continue;
        }
        if (file.name.pp_rank >= pp)
            throw ImportError(fmt::format("{}: pipeline rank {} is not below PP{}", file.path,
                                          file.name.pp_rank, pp));
        const auto [slot, added] = by_rank.emplace(file.name.pp_rank, file);
        if (!added)
            throw ImportError(fmt::format(
                "{} and {} both hold pipeline rank {} (TPxCPxDP rank {}); give one file per rank",
                slot->second.path, file.path, file.name.pp_rank, replica));
    }
    std::vector<NamedFile> ordered;
    for (int rank = 0; rank < pp; ++rank) {
        const auto found = by_rank.find(rank);
        if (found == by_rank.end())
            throw ImportError(fmt::format(
                "megatron timers: no file for pipeline rank {} of {}: expected "
                "event_times_PP{}_VPP*_TPxCPxDP_rank_{}_pp_rank_{}_rank_*.json beside {}",
                rank, pp, pp, replica, rank, named.front().path));
        ordered.push_back(found->second);
    }
    return ordered;
}

// Model chunks per rank (v) and microbatches (m) as the keys say, checked against each other and
// against the VPP of the file names.
std::pair<int, int> chunks_and_microbatches(const std::vector<RankTimers>& ranks) {
    int chunks = 1;
    int microbatches = 0;
    for (const RankTimers& rank : ranks) {
        if (rank.chunked != ranks.front().chunked)
            throw ImportError(fmt::format("{}: its keys {} a model chunk but those of {} {}",
                                          rank.path, rank.chunked ? "name" : "do not name",
                                          ranks.front().path,
                                          ranks.front().chunked ? "do" : "do not"));
        for (const auto& [id, interval] : rank.passes) {
            chunks = std::max(chunks, std::get<1>(id) + 1);
            microbatches = std::max(microbatches, std::get<2>(id) + 1);
        }
    }
    for (const RankTimers& rank : ranks)
        if (rank.chunked && rank.name.vpp > 0 && rank.name.vpp != chunks)
            throw ImportError(fmt::format("{}: named VPP{} but the keys name {} model chunks",
                                          rank.path, rank.name.vpp, chunks));
    return {chunks, microbatches};
}

void require_every_pass(const RankTimers& rank, int chunks, int microbatches) {
    for (int chunk = 0; chunk < chunks; ++chunk)
        for (int microbatch = 0; microbatch < microbatches; ++microbatch)
            for (Pass pass : {Pass::forward, Pass::backward})
                if (!rank.passes.contains({pass, chunk, microbatch}))
                    throw ImportError(fmt::format(
                        "{}: no \"{}-start\"; every rank times the forward and backward of each "
                        "microbatch (0..{}) of each of its model chunks",
                        rank.path, pass_name(pass, chunk, microbatch, rank.chunked),
                        microbatches - 1));
}

struct TimedAction {
    ImportedTiming timing;
    Action action;
};

// A rank's passes as F and B actions of stage chunk * pp + rank, in the order they started.
std::vector<TimedAction> rank_actions(const RankTimers& rank, int pp) {
    std::vector<TimedAction> actions;
    for (const auto& [id, interval] : rank.passes) {
        const auto& [pass, chunk, microbatch] = id;
        const ActionKind kind =
            pass == Pass::forward ? ActionKind::forward : ActionKind::full_backward;
        actions.push_back({{*interval.start_ns, *interval.end_ns, -1},
                           make_action(chunk * pp + rank.name.pp_rank, kind, microbatch)});
    }
    std::stable_sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) {
        return std::tie(a.timing.start_ns, a.timing.end_ns) <
               std::tie(b.timing.start_ns, b.timing.end_ns);
    });
    return actions;
}

std::vector<std::string> reader_notes(const std::vector<RankTimers>& ranks, int set_aside,
                                      int replica) {
    std::vector<std::string> notes{
        "times are CUDA-event milliseconds since each rank's own start event, recorded after a "
        "barrier: ranks are aligned only to within that barrier's skew",
        "only forward and backward compute is timed: waiting and send/recv between them show "
        "as bubble"};
    if (set_aside > 0)
        notes.push_back(fmt::format(
            "{} file(s) of other tensor/context/data-parallel ranks (TPxCPxDP rank other than {}) "
            "set aside: they time copies of the same pipeline ranks",
            set_aside, replica));
    for (const RankTimers& rank : ranks)
        if (!rank.ignored_keys.empty())
            notes.push_back(fmt::format("{}: ignored {} key(s) that are not timers, first \"{}\"",
                                        rank.path, rank.ignored_keys.size(),
                                        rank.ignored_keys.front()));
    return notes;
}

// A JSON number as its digits and a power of ten: value = digits * 10^exponent.
}  // namespace

std::optional<std::int64_t> milliseconds_text_to_ns(std::string_view text) {
    return scaled_decimal(text, 6);  // ms -> ns
}

ImportedRun read_megatron_timers(const std::vector<std::string>& files) {
    int set_aside = 0;
    const std::vector<NamedFile> named = files_by_rank(files, set_aside);
    const int pp = static_cast<int>(named.size());
    std::vector<RankTimers> ranks;
    for (const NamedFile& file : named)
        ranks.push_back(read_rank(file.path, file.name));
    const auto [chunks, microbatches] = chunks_and_microbatches(ranks);
    for (const RankTimers& rank : ranks)  // before sizing anything by chunks or microbatches
        require_every_pass(rank, chunks, microbatches);

    ImportedRun run;
    run.format = std::string(format_name(ImportFormat::megatron_timers));
    Schedule& schedule = run.schedule;
    schedule.name = chunks > 1 ? "Megatron-Interleaved1F1B" : "Megatron-1F1B";
    schedule.rank_count = pp;
    schedule.stages_per_rank = chunks;
    schedule.microbatch_count = microbatches;
    schedule.stage_count = pp * chunks;
    for (int stage = 0; stage < schedule.stage_count; ++stage)
        schedule.stage_to_rank.push_back(stage % pp);
    for (const RankTimers& rank : ranks) {
        run.sources.push_back(rank.path);
        auto& actions = schedule.ranks.emplace_back();
        auto& timings = run.timings.emplace_back();
        for (const TimedAction& timed : rank_actions(rank, pp)) {
            actions.push_back(timed.action);
            timings.push_back(timed.timing);
        }
    }
    run.notes = reader_notes(ranks, set_aside, named.front().name.replica);
    return run;
}

}  // namespace pipelens::import
