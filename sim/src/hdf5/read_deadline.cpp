#include "hdf5/read_deadline.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dgq::sim::h5 {

namespace {
// Made before the alarm is armed: the signal handler may only write(2) and _exit(2).
char deadline_message[1024];
std::size_t deadline_length = 0;

void on_deadline(int) {
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, deadline_message, deadline_length);
  ::_exit(2);
}

unsigned read_timeout_seconds() {
  static const unsigned seconds = [] {
    const char* text = std::getenv("DGQ_HDF5_READ_TIMEOUT");
    return text ? static_cast<unsigned>(std::strtoul(text, nullptr, 10)) : 60u;
  }();
  return seconds;
}
}  // namespace

ReadDeadline::ReadDeadline(const std::string& where) : seconds_(read_timeout_seconds()) {
  if (seconds_ == 0) return;
  const std::string text = "dgq: error: " + where + ": libhdf5 did not finish reading a variable-length string in " +
                           std::to_string(seconds_) +
                           " s (corrupt global heap: libhdf5 1.10.8 loops in H5HG__protect; docs/robustness.md)\n";
  deadline_length = std::min(text.size(), sizeof deadline_message - 1);
  std::memcpy(deadline_message, text.data(), deadline_length);
  if (deadline_length == sizeof deadline_message - 1) deadline_message[deadline_length - 1] = '\n';
  struct sigaction action {};
  action.sa_handler = on_deadline;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, nullptr);
  alarm(seconds_);
}

ReadDeadline::~ReadDeadline() {
  if (seconds_ != 0) alarm(0);
}

}  // namespace dgq::sim::h5
