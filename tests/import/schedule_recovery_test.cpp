// Recovering an imported run's schedule (engine/import/schedule_recovery.hpp): which names are
// generated kinds, and a run renamed after the kind with its compute order (the importer's name
// kept in a note) only when its name is not a kind already and a kind matches.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/import/imported_run.hpp"
#include "engine/import/schedule_recovery.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::import {
namespace {

ImportedRun run_named(const std::string& name, ScheduleKind kind) {
    ImportedRun run;
    run.schedule = generate_schedule({kind, 2, 1, 4});
    run.schedule.name = name;
    run.notes = {"times are CPU ranges"};
    return run;
}

TEST(ScheduleRecovery, GeneratedKindsAreNamedAsParseScheduleKindReadsThem) {
    EXPECT_TRUE(names_generated_kind("1F1B"));
    EXPECT_TRUE(names_generated_kind("Interleaved1F1B"));
    EXPECT_TRUE(names_generated_kind("ScheduleGPipe"));
    EXPECT_TRUE(names_generated_kind("gpipe"));
    EXPECT_FALSE(names_generated_kind("imported"));
    EXPECT_FALSE(names_generated_kind("pipelining-csv"));
    EXPECT_FALSE(names_generated_kind(""));
}

TEST(ScheduleRecovery, ARunIsRenamedAfterTheKindWithItsComputeOrder) {
    ImportedRun run = run_named("imported", ScheduleKind::one_f_one_b);
    name_recognised_schedule(run);
    EXPECT_EQ(run.schedule.name, "1F1B");
    EXPECT_EQ(run.notes,
              (std::vector<std::string>{"times are CPU ranges",
                                        "imported: the same compute order as PyTorch's 1F1B"}));
}

TEST(ScheduleRecovery, ARunAlreadyNamedAfterAKindKeepsItsName) {
    // GPipe's name on 1F1B's order: the name is what the source said, and it stands.
    ImportedRun run = run_named("gpipe", ScheduleKind::one_f_one_b);
    name_recognised_schedule(run);
    EXPECT_EQ(run.schedule.name, "gpipe");
    EXPECT_EQ(run.notes, std::vector<std::string>{"times are CPU ranges"});
}

TEST(ScheduleRecovery, AnOrderNoKindGeneratesKeepsItsName) {
    ImportedRun run = run_named("imported", ScheduleKind::one_f_one_b);
    std::vector<Action>& last_rank = run.schedule.ranks.back();
    std::swap(last_rank[0], last_rank[1]);  // 1F1B with a rank that starts out of order
    name_recognised_schedule(run);
    EXPECT_EQ(run.schedule.name, "imported");
    EXPECT_EQ(run.notes, std::vector<std::string>{"times are CPU ranges"});
}

// The pipeline's rank numbers are not the files': a stage found on two ranks names the files,
// and a shape error lists which file each pipeline rank is.
TEST(ScheduleRecovery, ShapeErrorsNameTheFileOfEachPipelineRank) {
    const std::vector<std::string> names = {"rank 0 = a.json (global rank 4)",
                                            "rank 1 = b.json (global rank 12)"};
    Schedule split = parse_schedule_csv("0F0,0B0\n0F1,0B1\n", "x.csv");
    EXPECT_EQ(testing::thrown_message<ImportError>([&] { infer_shape(split, "2 traces", names); },
                                                   "no error"),
              "2 traces: stage 0 computes on rank 0 = a.json (global rank 4) and on rank 1 = "
              "b.json (global rank 12); a stage must run on one rank");
    Schedule gap = generate_schedule({ScheduleKind::one_f_one_b, 3, 1, 3});
    gap.ranks.erase(gap.ranks.begin() + 1);  // the middle rank's file was not given
    const std::string message = testing::thrown_message<ImportError>(
        [&] { infer_shape(gap, "2 traces", names); }, "no error");
    EXPECT_EQ(message.rfind("2 traces: no file holds an action of stage 1, though stage 2 is "
                            "named: is the trace of the rank that ran it missing?",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find(" (pipeline ranks: rank 0 = a.json (global rank 4), rank 1 = b.json "
                           "(global rank 12))"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace pipelens::import
