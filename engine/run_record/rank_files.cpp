// See rank_files.hpp. Notices are renamed into place: rename is atomic within a directory.
#include "engine/run_record/rank_files.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::run_record {
namespace {

std::string ended_file(const std::string& directory, int rank) {
    return fmt::format("{}/rank-{}.ended", directory, rank);
}

}  // namespace

std::string rank_report_file(const std::string& directory, int rank) {
    return fmt::format("{}/rank-{}.json", directory, rank);
}

void note_rank_ended(const std::string& directory, int rank, const std::string& how) {
    const std::string path = ended_file(directory, rank);
    const std::string aside = path + ".part";
    {
        std::ofstream file(aside, std::ios::binary | std::ios::trunc);
        file << how;
        if (!file.flush())
            throw std::runtime_error(
                fmt::format("{}: cannot note that rank {} ended ({})", aside, rank, how));
    }
    if (std::rename(aside.c_str(), path.c_str()) != 0)
        throw std::runtime_error(
            fmt::format("{}: cannot note that rank {} ended ({})", path, rank, how));
}

std::optional<std::string> rank_ended(const std::string& directory, int rank) {
    std::ifstream file(ended_file(directory, rank), std::ios::binary);
    if (!file)
        return std::nullopt;
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

}  // namespace pipelens::run_record
