// Progress bar drawing: label, bar, percentage, rate and time left, carriage-return redrawn.
#include "app/cli/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace pipelens::cli {

ProgressBar::ProgressBar(std::string label, std::size_t total, std::string unit,
                         std::size_t counts_per_unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      counts_per_unit_(std::max<std::size_t>(counts_per_unit, 1)),
      on_terminal_(isatty(fileno(stderr)) == 1),
      started_(std::chrono::steady_clock::now()),
      last_draw_(started_) {}

ProgressBar::~ProgressBar() {
    finish();
}

void ProgressBar::update(std::size_t done, std::size_t total) {
    total_ = total;
    update(done);
}

void ProgressBar::update(std::size_t done) {
    if (!on_terminal_ || total_ == 0)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100))
        return;
    if (!drawn_ && now - started_ < std::chrono::milliseconds(300))
        return;  // short jobs finish before a bar would be readable
    last_draw_ = now;
    draw(done);
}

void ProgressBar::draw(std::size_t done) {
    constexpr int kWidth = 30;
    const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    const int filled = static_cast<int>(fraction * kWidth);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;  // counts per s
    const double left = rate > 0 ? static_cast<double>(total_ - std::min(done, total_)) / rate : 0;
    const double unit_rate = rate / static_cast<double>(counts_per_unit_);
    const std::string speed =
        unit_rate >= 1e6   ? fmt::format("{:.1f} M {}/s", unit_rate / 1e6, unit_)
        : unit_rate >= 1e3 ? fmt::format("{:.1f} k {}/s", unit_rate / 1e3, unit_)
        : unit_rate >= 0.1 ? fmt::format("{:.1f} {}/s", unit_rate, unit_)
                           : fmt::format("{:.2f} {}/min", unit_rate * 60, unit_);
    fmt::print(stderr, "\r{} [{}{}] {:3.0f}%  {}  {:.0f} s left ", label_, std::string(filled, '#'),
               std::string(kWidth - filled, '.'), fraction * 100, speed, left);
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::finish() {
    if (!drawn_)
        return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
}

void PhaseBars::operator()(std::string_view phase, std::size_t done, std::size_t total) {
    if (!bar_ || phase != phase_) {
        const Unit unit = unit_of_(phase);
        bar_.reset();
        bar_.emplace(std::string(phase), total, unit.name, unit.counts_per_unit);
        phase_ = phase;
    }
    bar_->update(done, total);
}

}  // namespace pipelens::cli
