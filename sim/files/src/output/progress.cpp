#include "dgq/sim/files/output/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace dgq::sim {

ProgressMode progress_mode_for(bool quiet, bool stderr_is_terminal) {
  if (quiet) return ProgressMode::off;
  return stderr_is_terminal ? ProgressMode::bar : ProgressMode::lines;
}

ProgressMode progress_mode_for_stderr(bool quiet) { return progress_mode_for(quiet, isatty(fileno(stderr)) != 0); }

double steady_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s / 60 % 60);
  }
  return text;
}

namespace {
// The width of the terminal on stderr; 0 when unknown (not a terminal, or it does not say).
int stderr_columns() {
  winsize size{};
  return ioctl(fileno(stderr), TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}
}  // namespace

Progress::Progress(ProgressMode mode, std::string label, std::int64_t total, std::ostream& out, ProgressClock clock,
                   int columns)
    : mode_(total > 0 ? mode : ProgressMode::off),  // nothing to run, nothing to report
      label_(std::move(label)),
      total_(total),
      out_(out),
      clock_(std::move(clock)),
      columns_(columns),
      start_(clock_()) {
  // A bar from the start: a user sees at once that the command runs and how much it has to do.
  if (mode_ == ProgressMode::bar) draw_bar("", 0.0);
}

Progress::Progress(ProgressMode mode, std::string label, std::int64_t total)
    : Progress(mode, std::move(label), total, std::cerr, steady_clock_seconds,
               mode == ProgressMode::bar ? stderr_columns() : 0) {}

Progress::~Progress() {
  if (bar_open_) out_ << "\n" << std::flush;
}

void Progress::finished(const std::string& what, std::int64_t units) {
  computed_ += units;
  report(what, units);
}

void Progress::already_done(const std::string& what, std::int64_t units) { report(what, units); }

void Progress::report(const std::string& what, std::int64_t units) {
  assert(units > 0);
  done_ += units;
  assert(done_ <= total_ || mode_ == ProgressMode::off);
  if (mode_ == ProgressMode::off) return;
  const double elapsed = clock_() - start_;
  if (mode_ == ProgressMode::bar) {
    draw_bar(what, elapsed);
    return;
  }
  out_ << label_ << ": " << done_ << "/" << total_ << " " << what << ", " << format_duration(elapsed)
       << " elapsed, ETA " << eta_text(elapsed) << "\n"
       << std::flush;
}

// The time per computed unit, measured, times the units left: "?" until one was computed.
std::string Progress::eta_text(double elapsed) const {
  if (done_ >= total_) return "0s";
  if (computed_ == 0) return "?";
  return format_duration(elapsed / static_cast<double>(computed_) * static_cast<double>(total_ - done_));
}

std::string Progress::rate_text(double elapsed) const {
  if (computed_ == 0 || elapsed <= 0) return "";
  const double per_unit = elapsed / static_cast<double>(computed_);
  char text[32];
  if (per_unit >= 1) {
    std::snprintf(text, sizeof text, ", %.3g s each", per_unit);
  } else {
    std::snprintf(text, sizeof text, ", %.3g per s", 1 / per_unit);
  }
  return text;
}

void Progress::draw_bar(const std::string& what, double elapsed) {
  constexpr std::int64_t width = 24;
  const std::int64_t filled = width * done_ / total_;
  const std::string head = label_ + ": [" + std::string(static_cast<std::size_t>(filled), '#') +
                           std::string(static_cast<std::size_t>(width - filled), '.') + "] " + std::to_string(done_) +
                           "/" + std::to_string(total_);
  const std::string tail = rate_text(elapsed) + ", ETA " + eta_text(elapsed);
  std::string middle = what.empty() ? "" : " " + what;
  // Under the terminal's width, the unit's name shortened first: the bar and the ETA stay.
  const auto room = static_cast<std::int64_t>(columns_) - 1 - static_cast<std::int64_t>(head.size() + tail.size());
  if (columns_ > 0 && static_cast<std::int64_t>(middle.size()) > std::max<std::int64_t>(room, 0))
    middle = room > 3 ? middle.substr(0, static_cast<std::size_t>(room - 3)) + "..." : "";
  // "\033[K" clears what a longer previous drawing left to the right ("\r" does not).
  out_ << "\r" << head << middle << tail << "\033[K";
  bar_open_ = done_ < total_;
  if (!bar_open_) out_ << "\n";
  out_ << std::flush;
}

}  // namespace dgq::sim
