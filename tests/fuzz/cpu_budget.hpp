#pragma once
// A CPU-time limit per fuzz input, armed by the environment variable DGQ_FUZZ_CPU_SECONDS
// (unset or 0: none; tools/fuzz-common.sh sets it for the fuzz scripts).
//
// Why not libFuzzer's -timeout: that is wall-clock time, so whether an input "hangs" depends on
// the machine's load, and a generous one (60 s, which load never reaches) costs a minute per
// input on which libhdf5 1.10.8 never returns (its global-heap loop, docs/robustness.md), twice
// (the run and the replay alone). CPU time (ITIMER_PROF, all threads of the process) does not
// grow with the load, so a budget far above what any input needs (milliseconds) decides the same
// way on a busy and an idle machine, and ends such a loop after a few seconds.
// When the budget is spent the process aborts: libFuzzer saves the input as crash-*, and its
// stack shows where the CPU went (tools/fuzz-classify.sh skips this handler's own frame).
#include <sys/time.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

extern "C" inline void dgq_fuzz_cpu_budget_spent(int) {
  static const char message[] = "==dgq-fuzz== ERROR: the input used up its CPU-time budget (DGQ_FUZZ_CPU_SECONDS)\n";
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  std::abort();
}

namespace dgq::fuzz {

class CpuBudget {
 public:
  CpuBudget() {
    static const long seconds = [] {
      const char* text = std::getenv("DGQ_FUZZ_CPU_SECONDS");
      return text ? std::strtol(text, nullptr, 10) : 0L;
    }();
    if (seconds <= 0) return;
    armed_ = true;
    std::signal(SIGPROF, dgq_fuzz_cpu_budget_spent);
    itimerval budget{};
    budget.it_value.tv_sec = seconds;
    setitimer(ITIMER_PROF, &budget, nullptr);
  }
  ~CpuBudget() {
    if (!armed_) return;
    const itimerval off{};
    setitimer(ITIMER_PROF, &off, nullptr);
  }
  CpuBudget(const CpuBudget&) = delete;
  CpuBudget& operator=(const CpuBudget&) = delete;

 private:
  bool armed_ = false;
};

}  // namespace dgq::fuzz
