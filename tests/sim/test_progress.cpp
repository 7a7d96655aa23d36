// The progress reporter of the long commands (dgq/sim/files/output/progress.hpp): the mode chosen for a
// terminal, a pipe and --quiet; the exact lines and bar drawings on a fake clock, so the
// elapsed time, the rate and the ETA are checked to the character without timing anything.
#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

#include "dgq/sim/files/output/progress.hpp"

using dgq::sim::format_duration;
using dgq::sim::Progress;
using dgq::sim::progress_mode_for;
using dgq::sim::ProgressMode;

namespace {
// A clock the test advances by hand.
struct FakeClock {
  double now = 100.0;
  dgq::sim::ProgressClock function() {
    return [this] { return now; };
  }
};
}  // namespace

TEST_CASE("progress: --quiet is off everywhere, otherwise a bar on a terminal and lines elsewhere") {
  CHECK(progress_mode_for(true, true) == ProgressMode::off);
  CHECK(progress_mode_for(true, false) == ProgressMode::off);
  CHECK(progress_mode_for(false, true) == ProgressMode::bar);
  CHECK(progress_mode_for(false, false) == ProgressMode::lines);
}

TEST_CASE("progress: durations round to the second, then minutes and seconds, then hours and minutes") {
  CHECK(format_duration(-3) == "0s");  // a clock step back is not a negative time
  CHECK(format_duration(0.4) == "0s");
  CHECK(format_duration(59.4) == "59s");
  CHECK(format_duration(59.6) == "1m00s");
  CHECK(format_duration(187) == "3m07s");
  CHECK(format_duration(3599.4) == "59m59s");
  CHECK(format_duration(3600) == "1h00m");
  CHECK(format_duration(7530) == "2h05m");
  CHECK(format_duration(90000) == "25h00m");
}

TEST_CASE("progress: nothing to run prints nothing, in any mode") {
  FakeClock clock;
  for (ProgressMode mode : {ProgressMode::off, ProgressMode::bar, ProgressMode::lines}) {
    std::ostringstream out;
    { const Progress p(mode, "eval", 0, out, clock.function()); }
    CHECK(out.str().empty());
  }
}

TEST_CASE("progress: off prints nothing however many units finish") {
  FakeClock clock;
  std::ostringstream out;
  Progress p(ProgressMode::off, "eval", 3, out, clock.function());
  p.finished("chunk 0 fp16");
  p.already_done("chunk 1 fp16 (resumed)");
  p.finished("chunk 2 fp16");
  CHECK(p.done() == 3);
  CHECK(out.str().empty());
}

TEST_CASE("progress: lines, one per finished unit, the ETA from the mean time of the units computed") {
  FakeClock clock;
  std::ostringstream out;
  Progress p(ProgressMode::lines, "eval", 4, out, clock.function());
  CHECK(out.str().empty());  // no line before a unit has finished
  clock.now += 10;
  p.finished("chunk 0 fp16");
  clock.now += 20;
  p.finished("chunk 0 q8_0");
  clock.now += 30;
  p.finished("chunk 1 fp16");
  clock.now += 90;
  p.finished("chunk 1 q8_0");
  CHECK(out.str() ==
        "eval: 1/4 chunk 0 fp16, 10s elapsed, ETA 30s\n"
        "eval: 2/4 chunk 0 q8_0, 30s elapsed, ETA 30s\n"
        "eval: 3/4 chunk 1 fp16, 1m00s elapsed, ETA 20s\n"
        "eval: 4/4 chunk 1 q8_0, 2m30s elapsed, ETA 0s\n");
}

TEST_CASE("progress: units an earlier run finished count as done, not toward the rate: ETA ? until one is computed") {
  FakeClock clock;
  std::ostringstream out;
  Progress p(ProgressMode::lines, "sweep", 10, out, clock.function());
  p.already_done("run(s) done (already complete)", 6);
  clock.now += 1;
  p.already_done("chunk 3 (resumed)");
  clock.now += 60;
  p.finished("run(s) done (trace a)", 2);  // 61 s for 2 runs: 30.5 s each, 1 left
  CHECK(out.str() ==
        "sweep: 6/10 run(s) done (already complete), 0s elapsed, ETA ?\n"
        "sweep: 7/10 chunk 3 (resumed), 1s elapsed, ETA ?\n"
        "sweep: 9/10 run(s) done (trace a), 1m01s elapsed, ETA 31s\n");
}

TEST_CASE("progress: a bar is drawn at once, redrawn in place with the rate and the ETA, and ended by a newline") {
  FakeClock clock;
  std::ostringstream out;
  {
    Progress p(ProgressMode::bar, "replay t.h5", 3, out, clock.function());
    CHECK(out.str() == "\rreplay t.h5: [........................] 0/3, ETA ?\033[K");
    out.str("");
    clock.now += 0.5;
    p.finished("layer(s)");
    CHECK(out.str() == "\rreplay t.h5: [########................] 1/3 layer(s), 2 per s, ETA 1s\033[K");
    out.str("");
    clock.now += 119.5;
    p.finished("layer(s)");
    CHECK(out.str() == "\rreplay t.h5: [################........] 2/3 layer(s), 60 s each, ETA 1m00s\033[K");
    out.str("");
    p.finished("layer(s)");
    CHECK(out.str() == "\rreplay t.h5: [########################] 3/3 layer(s), 40 s each, ETA 0s\033[K\n");
    out.str("");
  }
  CHECK(out.str().empty());  // a finished bar gets no second newline
}

TEST_CASE("progress: a bar stays under the terminal's width: the unit's name is shortened, the bar and ETA kept") {
  FakeClock clock;
  std::ostringstream out;
  Progress p(ProgressMode::bar, "eval", 2, out, clock.function(), 72);
  out.str("");
  clock.now += 4;
  p.finished("chunk 0 dgq:win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment");
  CHECK(out.str() == "\reval: [############............] 1/2 chunk 0 dgq:w..., 4 s each, ETA 4s\033[K");
  CHECK(out.str().size() - std::string("\r\033[K").size() == 71);
}

TEST_CASE("progress: a terminal too narrow for the unit's name drops it") {
  FakeClock clock;
  std::ostringstream out;
  Progress p(ProgressMode::bar, "eval", 2, out, clock.function(), 40);
  out.str("");
  p.finished("chunk 0 fp16");
  CHECK(out.str() == "\reval: [############............] 1/2, ETA 0s\033[K");
}

TEST_CASE("progress: a bar left unfinished by an error ends its line, so the error gets a line of its own") {
  FakeClock clock;
  std::ostringstream out;
  try {
    Progress p(ProgressMode::bar, "eval", 5, out, clock.function());
    p.finished("chunk 0 fp16");
    throw std::runtime_error("a bad chunk");
  } catch (const std::runtime_error&) {}
  const std::string text = out.str();
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);
}

TEST_CASE("progress: lines never carry a carriage return or an escape, for logs") {
  FakeClock clock;
  std::ostringstream out;
  {
    Progress p(ProgressMode::lines, "eval passkey", 2, out, clock.function());
    clock.now += 5;
    p.finished("prompt 0 (1024 tokens) fp16");
  }  // unfinished: lines end every line they print, a destructor adds nothing
  CHECK(out.str().find('\r') == std::string::npos);
  CHECK(out.str().find('\033') == std::string::npos);
  CHECK(out.str() == "eval passkey: 1/2 prompt 0 (1024 tokens) fp16, 5s elapsed, ETA 5s\n");
}
