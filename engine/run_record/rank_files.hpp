// The files a launcher shares with the rank processes it starts, in one directory it owns:
// each rank's report (JSON, written before the ranks gather, so the run can still be recorded
// when rank 0 dies) and the launcher's notice that a rank ended without success (how it ended).
// Every rank reads the notices in its waits (joining, connecting, barriers, data, rank 0's
// gather of reports), so none waits out its timeout for a rank that is gone. A notice is written
// whole or not at all (written aside, then renamed), so a reader never sees half of one.
// Torch-free.
#pragma once

#include <optional>
#include <string>

namespace pipelens::run_record {

std::string rank_report_file(const std::string& directory, int rank);

// Notes that `rank` ended without success, `how` ("killed by signal 9 (Killed)", "exited with
// code 2"). Throws std::runtime_error naming the file when it cannot be written.
void note_rank_ended(const std::string& directory, int rank, const std::string& how);

// How `rank` ended, when the launcher noted it; nothing while it runs or after it succeeded.
std::optional<std::string> rank_ended(const std::string& directory, int rank);

}  // namespace pipelens::run_record
