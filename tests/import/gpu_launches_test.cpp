// The GPU work a CPU span launched: kernels tied to their launches by correlation, a CUDA graph's
// kernels spanned together, and what has no partner ignored.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/import/gpu_launches.hpp"

namespace pipelens::import {
namespace {

// An "X" event of `category` from `start_ns` for `length_ns` with args {"correlation": id}.
class Event {
  public:
    Event(std::string category, std::int64_t start_ns, std::int64_t length_ns,
          std::string correlation, std::string phase = "X")
        : category_(std::move(category)),
          phase_(std::move(phase)),
          correlation_(std::move(correlation)) {
        args_.push_back({"correlation", correlation_, true, false});
        event_.cat = category_;
        event_.ph = phase_;
        event_.ts_ns = start_ns;
        event_.dur_ns = length_ns;
        event_.args = args_;
    }
    const ChromeEvent& get() const { return event_; }

  private:
    std::string category_, phase_, correlation_;
    std::vector<ChromeArg> args_;
    ChromeEvent event_;
};

GpuLaunches kept(const std::vector<Event>& events) {
    GpuLaunches launches;
    for (const Event& event : events)
        launches.keep(event.get());
    launches.finish();
    return launches;
}

std::pair<std::int64_t, std::int64_t> span(const std::optional<GpuSpan>& gpu) {
    return gpu ? std::pair{gpu->start_ns, gpu->end_ns}
               : std::pair<std::int64_t, std::int64_t>{-1, -1};
}

using Span = std::pair<std::int64_t, std::int64_t>;

TEST(GpuLaunches, AWindowSpansTheWorkOfEveryLaunchInsideItBoundsIncluded) {
    const GpuLaunches launches = kept({
        {"kernel", 300, 50, "2"},  // GPU operations first: files list them in any order
        {"cuda_runtime", 100, 5, "1"},
        {"cuda_runtime", 200, 5, "2"},
        {"kernel", 150, 100, "1"},
        {"cuda_driver", 400, 5, "3"},
        {"gpu_memcpy", 500, 20, "3"},
    });
    EXPECT_EQ(span(launches.work_launched(100, 200)), (Span{150, 350}));
    EXPECT_EQ(span(launches.work_launched(101, 200)), (Span{300, 350}));
    EXPECT_EQ(span(launches.work_launched(100, 199)), (Span{150, 250}));
    EXPECT_EQ(span(launches.work_launched(0, 1000)), (Span{150, 520}));
    EXPECT_EQ(span(launches.work_launched(201, 399)), (Span{-1, -1}));
}

TEST(GpuLaunches, AGraphsKernelsShareTheirLaunchAndAreSpannedTogether) {
    const GpuLaunches launches = kept({
        {"cuda_runtime", 10, 1, "7"},
        {"kernel", 40, 10, "7"},
        {"kernel", 20, 5, "7"},
        {"gpu_memset", 60, 2, "7"},
    });
    EXPECT_EQ(span(launches.work_launched(0, 10)), (Span{20, 62}));
}

TEST(GpuLaunches, WhatHasNoPartnerOrNoCorrelationTimesNothing) {
    const GpuLaunches launches = kept({
        {"cuda_runtime", 10, 1, "1"},  // cudaStreamSynchronize: nothing on the GPU
        {"kernel", 30, 10, "99"},      // its launch lost
        {"cuda_runtime", 50, 1, "0"},  // no correlation
        {"kernel", 60, 10, "0"},
        {"cuda_runtime", 70, 1, "\"x\""},
        {"kernel", 80, 10, "\"x\""},
        {"cpu_op", 90, 1, "5"},  // not a launch
        {"kernel", 95, 10, "5"},
        {"cuda_runtime", 110, 1, "6", "i"},  // not a complete event
        {"kernel", 120, 10, "6"},
    });
    EXPECT_EQ(span(launches.work_launched(0, 1000)), (Span{-1, -1}));
}

// Other runtimes, and the categories Kineto wrote before PyTorch 1.13 (HolisticTraceAnalysis's
// inference_rank_1.json.gz: "Runtime" and "Kernel").
TEST(GpuLaunches, OtherRuntimesAndOlderCategoriesLaunchToo) {
    const GpuLaunches launches = kept({
        {"xpu_runtime", 10, 1, "1"},
        {"kernel", 20, 10, "1"},
        {"Runtime", 100, 1, "2"},
        {"Kernel", 120, 10, "2"},
        {"Runtime", 200, 1, "3"},
        {"Memcpy", 220, 10, "3"},
    });
    EXPECT_EQ(span(launches.work_launched(0, 10)), (Span{20, 30}));
    EXPECT_EQ(span(launches.work_launched(100, 100)), (Span{120, 130}));
    EXPECT_EQ(span(launches.work_launched(200, 200)), (Span{220, 230}));
}

TEST(GpuLaunches, ShiftedTimesKeepEachOperationsLength) {
    GpuLaunches launches;
    for (const Event& event : {Event{"cuda_runtime", 10, 1, "1"}, Event{"kernel", 20, 10, "1"}})
        launches.keep(event.get());
    launches.shift_times([](std::int64_t& time) { time += 1000; });
    launches.finish();
    EXPECT_EQ(span(launches.work_launched(1000, 1010)), (Span{1020, 1030}));
    EXPECT_EQ(span(launches.work_launched(0, 999)), (Span{-1, -1}));
}

}  // namespace
}  // namespace pipelens::import
