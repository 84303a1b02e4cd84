// Fuzz target: bytes through what `pipelens import` does with a flight-recorder dump: the
// restricted unpickler, the dump reader and the analysis of that one rank.
// Invariants: bad input is refused with ImportError and nothing else (no crash, no undefined
// behaviour, no other exception); whatever the unpickler returns can be written out as JSON
// again; the analysis of a dump that reads never throws; time and memory follow the input's
// size (libFuzzer's -timeout and -rss_limit_mb catch the rest).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "engine/import/imported_run.hpp"
#include "engine/import/pickle_reader.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json value = pipelens::import::read_pickle(bytes, "fuzz.pkl");
        const std::string text = value.dump();  // throws on a string that is not UTF-8
        PIPELENS_FUZZ_REQUIRE(!text.empty(), "a read pickle writes out as empty JSON");
    } catch (const pipelens::import::ImportError&) {
    }
    try {
        const pipelens::import::FlightRecorderDump dump =
            pipelens::import::parse_flight_recorder_dump(bytes, "nccl_trace_rank_0");
        const pipelens::import::FlightRecorderReport report =
            pipelens::import::analyse_flight_recorder({dump});
        PIPELENS_FUZZ_REQUIRE(report.ranks.size() == 1, "one dump gives one rank summary");
        PIPELENS_FUZZ_REQUIRE(!report.text().empty(), "an analysis with no text");
    } catch (const pipelens::import::ImportError&) {
    }
    return 0;
}
