// Telling files apart by their first bytes, whatever their names: traces, experiments, plans,
// schedule CSVs and the formats `pipelens import` reads.
#include <gtest/gtest.h>

#include <string>

#include "traces/file_kind.hpp"

namespace pipelens::traces {
namespace {

TEST(FileKind, EachKindByItsContent) {
    EXPECT_EQ(file_kind_of_head(std::string("SQLite format 3\0\x10\x00", 18)), FileKind::sqlite);
    EXPECT_EQ(file_kind_of_head("# comment\n\n[schedule]\nkind = \"1F1B\"\n"),
              FileKind::experiment_toml);
    EXPECT_EQ(file_kind_of_head("pp = 4\n"), FileKind::experiment_toml);
    EXPECT_EQ(file_kind_of_head("costs.stage-1 . \"forward ns\" = 4\n"), FileKind::experiment_toml);
    EXPECT_EQ(file_kind_of_head("\"a.b\" = 1\n"), FileKind::experiment_toml);
    // An overlap's parts may have spaces around them, as PyTorch trims them.
    EXPECT_EQ(file_kind_of_head("(0F7; 7B3)OVERLAP_F_B,0SEND_F7\n"), FileKind::schedule_csv);
    EXPECT_EQ(file_kind_of_head("[model]\nlayers = 32\n[cluster]\ngpus = 8\n"),
              FileKind::plan_toml);
    EXPECT_EQ(file_kind_of_head("0F0,0F1,0I0\r\n,1F0,1I0\r\n"), FileKind::schedule_csv);
    EXPECT_EQ(file_kind_of_head("0F0\n"), FileKind::schedule_csv);
    // DualPipeV's rows hold overlapped pairs, and one may open a row.
    EXPECT_EQ(file_kind_of_head("(0F7;7B3)OVERLAP_F_B,0SEND_F7\n"), FileKind::schedule_csv);
    EXPECT_EQ(file_kind_of_head("0F0,(7F4;0B0)OVERLAP_F_B\n"), FileKind::schedule_csv);
    EXPECT_EQ(file_kind_of_head("{\"schemaVersion\": 1, \"traceEvents\": []}"),
              FileKind::pytorch_profiler);
    EXPECT_EQ(
        file_kind_of_head("{\"traceEvents\": [{\"name\": \"0F0\", \"cat\": \"computation\"}]}"),
        FileKind::pipelining_chrometrace);
    EXPECT_EQ(file_kind_of_head("\x80\x04\x95"), FileKind::flight_recorder);
    EXPECT_EQ(file_kind_of_head("{\"pg_config\": {}}"), FileKind::flight_recorder);
    EXPECT_EQ(file_kind_of_head("{\"forward-compute\": [1, 2]}"), FileKind::megatron_timers);
}

TEST(FileKind, WhatMatchesNoRuleIsUnknown) {
    EXPECT_EQ(file_kind_of_head(""), FileKind::unknown);
    EXPECT_EQ(file_kind_of_head("\n# only a comment\n"), FileKind::unknown);
    EXPECT_EQ(file_kind_of_head("hello world\n"), FileKind::unknown);
    // `simulate`'s own output: a key holds no spaces but around its dots.
    EXPECT_EQ(file_kind_of_head("1F1B pp=4 v=1 m=8\n"), FileKind::unknown);
    EXPECT_EQ(file_kind_of_head("a. = 1\n"), FileKind::unknown);
    EXPECT_EQ(file_kind_of_head("{\"results\": []}"), FileKind::unknown);
    EXPECT_EQ(file_kind_of_head(std::string("\x01\x00\x02", 3)), FileKind::unknown);
    EXPECT_EQ(file_kind_of("/nonexistent/file"), FileKind::unknown);
}

}  // namespace
}  // namespace pipelens::traces
