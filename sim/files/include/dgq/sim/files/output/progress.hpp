#pragma once
// Progress of the commands that run for minutes (eval, the passkey task, sweeps, replay,
// compress) on stderr, on by default: stdout carries the results and is compared byte for
// byte, so progress never goes there. On a terminal a bar with the rate and the ETA, redrawn in
// place; anywhere else (a pipe, a log file, a batch job's output) one plain line per finished
// unit with the elapsed time and the ETA, so a log shows how far a run got without carriage
// returns. `--quiet` turns it off (docs/cli.md, "Progress").
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace dgq::sim {

enum class ProgressMode { off, bar, lines };

// --quiet: off; otherwise a bar on a terminal and lines elsewhere.
ProgressMode progress_mode_for(bool quiet, bool stderr_is_terminal);
// The same for this process's stderr (isatty).
ProgressMode progress_mode_for_stderr(bool quiet);

// Seconds since an arbitrary origin; tests pass a fake one so the lines they compare are exact.
using ProgressClock = std::function<double()>;
double steady_clock_seconds();

// "7s", "3m07s", "2h05m": the elapsed time and the ETA of a progress line.
std::string format_duration(double seconds);

// A run of `total` units (a chunk through one cache, a prompt through one cache, a sweep run,
// a trace layer), reported as each one finishes. The ETA is the mean time of the units this
// process computed times the units left: units that cost no work (finished by an earlier,
// interrupted run, or read from a reused file) count as done but not toward the rate, and before the first computed
// unit the ETA is "?". Not thread-safe: call it from the thread that runs the loop.
class Progress {
 public:
  // `columns`: the terminal's width, which a bar never reaches (a wrapped line would not be
  // redrawn in place: "\r" returns to its last row); 0 = no limit.
  Progress(ProgressMode mode, std::string label, std::int64_t total, std::ostream& out,
           ProgressClock clock = steady_clock_seconds, int columns = 0);
  // On stderr, timed by the steady clock, a bar as wide as the terminal allows.
  Progress(ProgressMode mode, std::string label, std::int64_t total);
  // A bar left unfinished (the run failed) is ended with a newline, so that the error that
  // follows is a line of its own.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `units` computed by this process (a sweep's pass finishes several runs at once).
  void finished(const std::string& what, std::int64_t units = 1);
  // `units` that cost no work: finished by an earlier run, read from a reused file.
  void already_done(const std::string& what, std::int64_t units = 1);

  std::int64_t done() const { return done_; }

 private:
  void report(const std::string& what, std::int64_t units);
  std::string eta_text(double elapsed) const;
  std::string rate_text(double elapsed) const;
  void draw_bar(const std::string& what, double elapsed);

  ProgressMode mode_;
  std::string label_;
  std::int64_t total_;
  std::ostream& out_;
  ProgressClock clock_;
  int columns_;
  double start_;
  std::int64_t done_ = 0;
  std::int64_t computed_ = 0;
  bool bar_open_ = false;  // a bar is drawn and its line not yet ended
};

}  // namespace dgq::sim
