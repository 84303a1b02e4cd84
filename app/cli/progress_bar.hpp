// A one-line progress bar on stderr for long commands, drawn only when stderr is a terminal
// (CI logs and pipes stay clean) and redrawn at most ten times a second, so updating it from a
// hot loop costs a clock read.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace pipelens::cli {

class ProgressBar {
  public:
    // `unit`: what is counted, for the rate ("rows": 1.2 M rows/s; "layouts": 35.0 layouts/s);
    // `counts_per_unit`: how many counts make one unit (1000 when thousandths are counted).
    ProgressBar(std::string label, std::size_t total, std::string unit = "rows",
                std::size_t counts_per_unit = 1);
    ~ProgressBar();  // clears the line if it was drawn
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    void update(std::size_t done);
    void update(std::size_t done, std::size_t total);  // the total became known or grew
    void finish();

  private:
    void draw(std::size_t done);

    std::string label_;
    std::size_t total_;
    std::string unit_;
    std::size_t counts_per_unit_;
    bool on_terminal_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point started_;
    std::chrono::steady_clock::time_point last_draw_;
};

// A bar per phase of a job that reports (phase, done, total), as the planner and the partition
// search do: a new phase replaces the bar. `unit_of(phase)` says what the phase counts.
class PhaseBars {
  public:
    struct Unit {
        std::string name;                 // "layouts"
        std::size_t counts_per_unit = 1;  // 1000 when thousandths are counted
    };
    explicit PhaseBars(std::function<Unit(std::string_view phase)> unit_of)
        : unit_of_(std::move(unit_of)) {}

    void operator()(std::string_view phase, std::size_t done, std::size_t total);
    void finish() { bar_.reset(); }

  private:
    std::function<Unit(std::string_view)> unit_of_;
    std::optional<ProgressBar> bar_;
    std::string phase_;
};

}  // namespace pipelens::cli
