// Benchmark: streaming a PyTorch profiler (Kineto) trace with read_chrome_trace, plain and gzip,
// on one core. The setup writes a synthetic Kineto-like trace (2 M events by default, laid out
// as Kineto writes them: cpu_op, cuda_runtime and kernel ranges with their usual args, and ac2g
// flow events; ~230 bytes and ~5 args per event on average) to a plain and a gzip file in the
// temp directory, streamed so that the setup itself stays small. Reports events/s, MB/s of
// JSON, bytes per event, and the growth of peak RSS (getrusage) during a read over the RSS
// before it: a few MiB, whatever the file's size. For comparison, the same plain
// file through nlohmann::json::sax_parse with a SAX handler that does nothing (the lower bound
// of a reader built on it).
//
//   build/tests/pipelens_bench_import [--benchmark_repetitions=5]
//   PIPELENS_BENCH_IMPORT_EVENTS=200000 build/tests/pipelens_bench_import   # a smaller file
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/import/chrome_trace_stream.hpp"

namespace {

namespace importer =
    pipelens::import;  // "import::" at a line start reads as a C++20 module import to clang-format

double peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

// Lowers the peak RSS to the current RSS (Linux: "5" into /proc/self/clear_refs), so that
// getrusage's peak afterwards is the peak of what follows and not of the setup before it.
// Returns the peak to measure growth from. Where the reset is not allowed, the peak stays the
// setup's (which writes in 1 MiB chunks), and a growth of 0 says only that reading needed less.
double reset_peak_rss_mib() {
    std::ofstream("/proc/self/clear_refs") << "5";
    return peak_rss_mib();
}

// One event of the synthetic trace, as Kineto lays it out; `i` picks its kind and numbers.
void append_event(std::string& out, std::int64_t i) {
    const std::int64_t ts = 1'700'000'000'000'000 + i * 7;
    const std::string time = "\"ts\": " + std::to_string(ts) + "." + std::to_string(100 + i % 900) +
                             ", \"dur\": " + std::to_string(i % 97) + "." +
                             std::to_string(100 + i % 800);
    const std::string id = std::to_string(i);
    switch (i % 8) {
        case 0:
        case 1:
        case 2:
            out +=
                "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", "
                "\"pid\": 4242, \"tid\": 4242,\n    " +
                time + ",\n    \"args\": {\n      \"External id\": " + id +
                ",\"Record function id\": 0, \"Sequence number\": " + id +
                ", \"Fwd thread id\": 1, \"Ev Idx\": " + id + "\n    }\n  }";
            break;
        case 3:
        case 4:
            out +=
                "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                "\"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4242,\n    " +
                time + ",\n    \"args\": {\n      \"External id\": " + id +
                ", \"cbid\": 211, \"correlation\": " + id + ", \"Ev Idx\": " + id + "\n    }\n  }";
            break;
        case 5:
            out +=
                "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void "
                "at::native::vectorized_elementwise_kernel<4>(int)\", \"pid\": 0, \"tid\": 7,"
                "\n    " +
                time + ",\n    \"args\": {\n      \"External id\": " + id +
                ", \"device\": 0, \"stream\": 7, \"correlation\": " + id +
                ", \"grid\": [1, 1, 1], \"block\": [128, 1, 1]\n    }\n  }";
            break;
        default:
            out += "  {\n    \"ph\": \"" + std::string(i % 8 == 6 ? "s" : "f") +
                   "\", \"id\": " + id +
                   ", \"pid\": 4242, \"tid\": 4242, \"ts\": " + std::to_string(ts) +
                   ".5,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"" +
                   (i % 8 == 7 ? ", \"bp\": \"e\"" : "") + "\n  }";
            break;
    }
}

// The generated files, written once per process and removed at its end.
struct TraceFiles {
    std::string plain, gzip;
    std::int64_t events = 0;
    std::uint64_t json_bytes = 0;

    TraceFiles() {
        const char* wanted = std::getenv("PIPELENS_BENCH_IMPORT_EVENTS");
        events = wanted ? std::atoll(wanted) : 2'000'000;
        const auto base = std::filesystem::temp_directory_path() /
                          ("pipelens_bench_import_" + std::to_string(::getpid()));
        plain = base.string() + ".json";
        gzip = base.string() + ".json.gz";
        write();
    }
    TraceFiles(const TraceFiles&) = delete;
    TraceFiles& operator=(const TraceFiles&) = delete;
    ~TraceFiles() {
        std::filesystem::remove(plain);
        std::filesystem::remove(gzip);
    }

    void write() {
        std::ofstream out(plain, std::ios::binary);
        gzFile packed = gzopen(gzip.c_str(), "wb6");
        if (!out || !packed)
            throw std::runtime_error("cannot write the benchmark's trace files");
        std::string chunk =
            "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", "
            "\"rank\": 0, \"world_size\": 2},\n  \"traceEvents\": [\n";
        for (std::int64_t i = 0; i < events; ++i) {
            if (i)
                chunk += ",\n";
            append_event(chunk, i);
            if (chunk.size() > (1 << 20) || i + 1 == events) {
                if (i + 1 == events)
                    chunk += "\n  ],\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n";
                out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
                gzwrite(packed, chunk.data(), static_cast<unsigned>(chunk.size()));
                json_bytes += chunk.size();
                chunk.clear();
            }
        }
        gzclose(packed);
    }
};

const TraceFiles& files() {
    static const TraceFiles generated;
    return generated;
}

void ReadChromeTrace(benchmark::State& state) {
    const TraceFiles& trace = files();
    const std::string& path = state.range(0) ? trace.gzip : trace.plain;
    std::uint64_t events = 0;
    double rss_growth_mib = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const double rss_before_mib = reset_peak_rss_mib();
        state.ResumeTiming();
        std::int64_t checksum = 0;
        const importer::ChromeTraceHeader header =
            importer::read_chrome_trace(path, [&](const importer::ChromeEvent& event) {
                checksum += event.ts_ns + event.dur_ns +
                            static_cast<std::int64_t>(event.args.size() + event.name.size());
            });
        events = header.event_count;
        benchmark::DoNotOptimize(checksum);
        rss_growth_mib = std::max(rss_growth_mib, peak_rss_mib() - rss_before_mib);
    }
    if (events != static_cast<std::uint64_t>(trace.events))
        state.SkipWithError("the reader did not see every event");
    state.counters["events_per_second"] = benchmark::Counter(
        static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["json_MB_per_second"] = benchmark::Counter(
        static_cast<double>(trace.json_bytes) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_event"] =
        static_cast<double>(trace.json_bytes) / static_cast<double>(trace.events);
    state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    state.counters["peak_rss_growth_MiB"] = rss_growth_mib;  // over the RSS before the read
    state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(ReadChromeTrace)
    ->ArgName("gzip")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// A SAX handler that only counts objects: what nlohmann::json costs before any work is done.
struct CountingSax : nlohmann::json_sax<nlohmann::json> {
    std::uint64_t objects = 0;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return ++objects, true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }
};

void NlohmannSaxBaseline(benchmark::State& state) {
    const TraceFiles& trace = files();
    for (auto _ : state) {
        std::ifstream in(trace.plain, std::ios::binary);
        CountingSax sax;
        if (!nlohmann::json::sax_parse(in, &sax))
            state.SkipWithError("nlohmann could not parse the trace");
        benchmark::DoNotOptimize(sax.objects);
    }
    state.counters["events_per_second"] = benchmark::Counter(
        static_cast<double>(trace.events), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["json_MB_per_second"] = benchmark::Counter(
        static_cast<double>(trace.json_bytes) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(NlohmannSaxBaseline)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
