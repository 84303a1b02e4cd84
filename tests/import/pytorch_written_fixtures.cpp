// Comparing PyTorch-written fixtures with pipelens: see pytorch_written_fixtures.hpp.
#include "tests/import/pytorch_written_fixtures.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens::testing {
namespace fs = std::filesystem;

fs::path pytorch_fixture_root() {
    return fs::path(PIPELENS_SOURCE_DIR) / "tests" / "data" / "pytorch";
}

std::string fixture_file_name(const FixtureName& name) {
    return name.kind + "_pp" + std::to_string(name.pp) + "_v" + std::to_string(name.v) + "_m" +
           std::to_string(name.m) + "_" + name.lowering + ".csv";
}

std::optional<FixtureName> parse_fixture_name(std::string_view file_name) {
    static const std::regex pattern(
        R"(^(.+)_pp(\d+)_v(\d+)_m(\d+)_(compute|comms|comms_defer)\.csv$)");
    std::match_results<std::string_view::const_iterator> match;
    if (!std::regex_match(file_name.begin(), file_name.end(), match, pattern))
        return std::nullopt;
    return FixtureName{match[1].str(), std::stoi(match[2].str()), std::stoi(match[3].str()),
                       std::stoi(match[4].str()), match[5].str()};
}

namespace {

ScheduleShape shape_of(const FixtureName& name) {
    return {parse_schedule_kind(name.kind), name.pp, name.v, name.m, {}};
}

bool is_known_kind(const std::string& kind) {
    try {
        parse_schedule_kind(kind);
        return true;
    } catch (const ScheduleConfigError&) {
        return false;
    }
}

std::string describe(const FixtureName& name) {
    return name.kind + " pp=" + std::to_string(name.pp) + " v=" + std::to_string(name.v) +
           " m=" + std::to_string(name.m);
}

std::string join(const std::vector<int>& values) {
    std::string text;
    for (int value : values) {
        if (!text.empty())
            text += ',';
        text += std::to_string(value);
    }
    return text;
}

}  // namespace

Schedule pipelens_order(const FixtureName& name) {
    Schedule generated = generate_schedule(shape_of(name));
    if (name.lowering == kCompute)
        return generated;
    LoweringOptions options;
    options.keep_fsdp_actions = true;
    options.defer_receives = name.lowering == kCommsDeferred;
    return lower(std::move(generated), options);
}

RankTexts rank_texts(const Schedule& schedule) {
    RankTexts texts(schedule.ranks.size());
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank)
        for (const Action& action : schedule.ranks[rank])
            texts[rank].push_back(schedule.text(action));
    return texts;
}

void sort_reshard_runs(RankTexts& texts) {
    auto is_reshard = [](const std::string& text) { return text.ends_with("RESHARD"); };
    for (auto& rank : texts) {
        for (auto begin = rank.begin(); begin != rank.end();) {
            if (!is_reshard(*begin)) {
                ++begin;
                continue;
            }
            auto end = std::find_if_not(begin, rank.end(), is_reshard);
            std::sort(begin, end);
            begin = end;
        }
    }
}

void drop_microbatches(RankTexts& texts) {
    static const std::regex trailing_number(R"(^(\d+[A-Z_]+)\d+$)");
    for (auto& rank : texts)
        for (auto& text : rank)
            text = std::regex_replace(text, trailing_number, "$1");
}

std::string first_difference(const RankTexts& pytorch, const RankTexts& pipelens) {
    if (pytorch.size() != pipelens.size())
        return "PyTorch has " + std::to_string(pytorch.size()) + " ranks, pipelens " +
               std::to_string(pipelens.size());
    for (std::size_t rank = 0; rank < pytorch.size(); ++rank) {
        const auto& ours = pipelens[rank];
        const auto& theirs = pytorch[rank];
        const std::size_t common = std::min(ours.size(), theirs.size());
        for (std::size_t step = 0; step <= common; ++step) {
            const std::string left = step < theirs.size() ? theirs[step] : "(end)";
            const std::string right = step < ours.size() ? ours[step] : "(end)";
            if (left != right)
                return "rank " + std::to_string(rank) + " step " + std::to_string(step) +
                       ": PyTorch " + left + ", pipelens " + right;
        }
    }
    return "";
}

namespace {

// "" when the file agrees with pipelens, else why not.
std::string compare_schedule_file(const fs::path& path, const FixtureName& name) {
    Schedule ours;
    try {
        ours = pipelens_order(name);
    } catch (const std::exception& error) {
        return "PyTorch builds " + describe(name) + " but pipelens refuses: " + error.what();
    }
    Schedule theirs;
    try {
        theirs = read_schedule_csv(path.string());
    } catch (const std::exception& error) {
        return std::string("cannot be read: ") + error.what();
    }
    if (name.lowering == kCompute)
        theirs = strip_fsdp_actions(std::move(theirs));  // single-stage tables hold REDUCE_GRAD
    RankTexts theirs_text = rank_texts(theirs);
    RankTexts ours_text = rank_texts(ours);
    sort_reshard_runs(theirs_text);
    sort_reshard_runs(ours_text);
    if (std::string difference = first_difference(theirs_text, ours_text); !difference.empty())
        return difference;
    if (theirs.stage_to_rank != ours.stage_to_rank)
        return "stage -> rank: PyTorch " + join(theirs.stage_to_rank) + ", pipelens " +
               join(ours.stage_to_rank);
    return "";
}

void compare_refusals(const fs::path& path, ScheduleFolderReport& report) {
    std::ifstream in(path);
    const nlohmann::json refusals = nlohmann::json::parse(in);
    for (const auto& entry : refusals) {
        const std::string kind = entry.at("kind").get<std::string>();
        if (entry.at("stage") != "construct" || entry.value("defer", false) || !is_known_kind(kind))
            continue;
        const FixtureName name{kind, entry.at("pp").get<int>(), entry.at("v").get<int>(),
                               entry.at("m").get<int>(), std::string(kCompute)};
        ++report.refusals_checked;
        try {
            validate_shape(shape_of(name));
        } catch (const ScheduleConfigError&) {
            continue;  // both refuse
        }
        report.refusal_differences.push_back("refusals.json: PyTorch refuses " + describe(name) +
                                             " (" + entry.at("type").get<std::string>() + ": " +
                                             entry.at("message").get<std::string>() +
                                             ") but pipelens accepts it");
    }
}

}  // namespace

ScheduleFolderReport compare_schedule_folder(const fs::path& folder) {
    ScheduleFolderReport report;
    if (!fs::is_directory(folder))
        return report;
    std::set<std::string> unknown;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& path : files) {
        const auto name = parse_fixture_name(path.filename().string());
        if (!name)
            continue;
        if (!is_known_kind(name->kind)) {
            unknown.insert(name->kind);
            continue;
        }
        ++report.compared;
        if (std::string why = compare_schedule_file(path, *name); !why.empty())
            report.differences.push_back(path.filename().string() + ": " + why);
    }
    if (fs::exists(folder / "refusals.json"))
        compare_refusals(folder / "refusals.json", report);
    report.unknown_kinds.assign(unknown.begin(), unknown.end());
    return report;
}

namespace {

std::vector<std::string> files_matching(const fs::path& folder, const std::regex& pattern) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(folder))
        if (entry.is_regular_file() && std::regex_match(entry.path().filename().string(), pattern))
            files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<fs::path> subfolders(const fs::path& folder) {
    std::vector<fs::path> found;
    if (fs::is_directory(folder))
        for (const auto& entry : fs::directory_iterator(folder))
            if (entry.is_directory())
                found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace

ImportFolderReport import_profiler_folder(const fs::path& folder) {
    static const std::regex trace_file(R"(^rank\d+\.pt\.trace\.json(\.gz)?$)");
    ImportFolderReport report;
    for (const fs::path& run_folder : subfolders(folder)) {
        const auto files = files_matching(run_folder, trace_file);
        if (files.empty())
            continue;
        ++report.imported;
        const std::string run = run_folder.filename().string();
        try {
            const import::ImportedRun imported = import::read_pytorch_profiler(files);
            std::string counts;
            for (std::size_t rank = 0; rank < imported.schedule.ranks.size(); ++rank) {
                const std::size_t actions = imported.schedule.ranks[rank].size();
                counts += ' ';
                counts += std::to_string(actions);
                if (actions == 0)
                    report.problems.push_back(run + ": rank " + std::to_string(rank) +
                                              " imported no actions");
            }
            if (imported.schedule.ranks.size() != files.size())
                report.problems.push_back(
                    run + ": " + std::to_string(files.size()) + " files but " +
                    std::to_string(imported.schedule.ranks.size()) + " ranks imported");
            report.summaries.push_back(run + ": actions per rank" + counts + "; " +
                                       std::to_string(imported.notes.size()) + " notes");
        } catch (const std::exception& error) {
            report.problems.push_back(run + ": " + error.what());
        }
    }
    return report;
}

namespace {

void import_dump_set(const std::string& label, const std::vector<std::string>& files,
                     ImportFolderReport& report) {
    if (files.empty())
        return;
    ++report.imported;
    try {
        const auto dumps = import::read_flight_recorder_dumps(files);
        const import::FlightRecorderReport analysis = import::analyse_flight_recorder(dumps);
        std::size_t entries = 0;
        for (const auto& dump : dumps)
            entries += dump.entries.size();
        report.summaries.push_back(label + ": " + std::to_string(dumps.size()) + " ranks, " +
                                   std::to_string(entries) +
                                   " entries, hang=" + (analysis.hang ? "yes" : "no") +
                                   ", mismatch=" + (analysis.mismatch ? "yes" : "no"));
    } catch (const std::exception& error) {
        report.problems.push_back(label + ": " + error.what());
    }
}

}  // namespace

ImportFolderReport import_flight_recorder_folder(const fs::path& folder) {
    static const std::regex dump_file(R"(^rank_\d+(\.json)?$)");
    ImportFolderReport report;
    for (const fs::path& case_folder : subfolders(folder))
        import_dump_set(case_folder.filename().string(), files_matching(case_folder, dump_file),
                        report);
    return report;
}

}  // namespace pipelens::testing
