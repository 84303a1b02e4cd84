// Fuzz target: a schedule CSV file through what `pipelens check` does with it: parse, static
// check, lowering (compute-only files) and the dependency dry run.
// Invariants: a bad file is refused with ScheduleFileError, a wrong schedule with a failing
// CheckReport, a ScheduleCheckError or a ScheduleHangError, never anything else; a file that passes
// the check writes back to a CSV that reads as the same schedule; time and memory follow the file's
// size, not the numbers written in it (libFuzzer's -timeout and -rss_limit_mb catch the rest).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::Schedule schedule;
    try {
        schedule = pipelens::parse_schedule_csv(text, "fuzz.csv");
    } catch (const pipelens::ScheduleFileError&) {
        return 0;
    }
    if (!pipelens::check_structure(schedule).ok())
        return 0;
    const pipelens::Schedule reread =
        pipelens::parse_schedule_csv(pipelens::format_schedule_csv(schedule), "again.csv");
    PIPELENS_FUZZ_REQUIRE(pipelens::same_actions(schedule, reread),
                          "a checked schedule does not survive write -> read");
    pipelens::Schedule lowered;
    const pipelens::Schedule* to_run = &schedule;
    if (!schedule.has_communication) {
        try {
            lowered = pipelens::lower(schedule);
        } catch (const pipelens::ScheduleHangError&) {
            return 0;
        } catch (const pipelens::ScheduleCheckError&) {
            return 0;  // a REDUCE_GRAD where lowering puts none: `check` exits 1
        }
        PIPELENS_FUZZ_REQUIRE(pipelens::check_structure(lowered).ok(),
                              "the lowering of a checked schedule fails the check");
        to_run = &lowered;
    }
    const pipelens::DryRunResult result = pipelens::dry_run(*to_run);
    PIPELENS_FUZZ_REQUIRE(result.completed || !result.hang.blocked.empty(),
                          "a dry run that did not complete names no blocked rank");
    return 0;
}
