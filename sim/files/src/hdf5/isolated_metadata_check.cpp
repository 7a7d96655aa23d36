#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <tuple>

#include "dgq/errors.hpp"
#include "hdf5/metadata_walk.hpp"

// Sanitizers and libFuzzer register a death callback (libFuzzer's writes a crash input); a
// child that dies must leave nothing behind but its exit status. Weak: absent without them.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace dgq::sim::h5 {

namespace {

constexpr int kChildOutOfMemory = 3;
// What the walk may allocate beyond what the parent had. dgq's own files need a few MiB of
// metadata (attributes of bytes to kilobytes, chunk indexes that libhdf5's metadata cache keeps
// under 32 MiB); 1 GiB is far above that and far below what a corrupt length asks for (the
// mutation campaign's mutants asked for 2-5 GiB and spent 5-20 s doing it under a 4 GiB limit).
constexpr std::uint64_t kChildExtraMemory = std::uint64_t{1} << 30;
constexpr std::size_t kMaxReportBytes = std::size_t{1} << 20;

// ---- the child ----------------------------------------------------------------------------

void restore_default_crash_handling() {
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGALRM, SIGXCPU}) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);
  }
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_UNBLOCK, &all, nullptr);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
}

// The process's private writable memory (VmData, what RLIMIT_DATA counts), in bytes; 0 if unknown.
std::uint64_t current_data_bytes() {
  std::ifstream status("/proc/self/status");
  std::string field;
  while (status >> field) {
    if (field == "VmData:") {
      std::uint64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

// RLIMIT_DATA, not RLIMIT_AS: it counts heap and private anonymous mappings (every malloc,
// small or huge), not reserved address space, so the same limit works under AddressSanitizer,
// whose shadow memory reserves terabytes of addresses (already counted in VmData; the child may
// map only kChildExtraMemory more). An inherited lower limit is kept.
void limit_child_resources() {
  const struct rlimit no_core { 0, 0 };
  setrlimit(RLIMIT_CORE, &no_core);
  const std::uint64_t used = current_data_bytes();
  struct rlimit data {};
  if (used == 0 || getrlimit(RLIMIT_DATA, &data) != 0) return;
  const std::uint64_t wanted = used + kChildExtraMemory;
  if (data.rlim_cur == RLIM_INFINITY || wanted < data.rlim_cur) data.rlim_cur = wanted;
  setrlimit(RLIMIT_DATA, &data);
}

// libhdf5 reports a refused malloc as an ordinary error (resource class, "no space available
// for allocation" or "can't allocate space") and the walk goes on; the parent, without the
// child's limit, would then grant the same absurd request. A refused allocation anywhere in the
// walk is therefore damage. Installed as the automatic error handler, called whenever a
// libhdf5 API call fails.
bool walk_ran_out_of_memory = false;

herr_t note_allocation_failure(unsigned, const H5E_error2_t* error, void*) {
  if (error->min_num == H5E_NOSPACE || error->min_num == H5E_CANTALLOC) walk_ran_out_of_memory = true;
  return 0;
}

herr_t on_hdf5_error(hid_t stack, void*) {
  H5Ewalk2(stack, H5E_WALK_UPWARD, note_allocation_failure, nullptr);
  return 0;
}

[[noreturn]] void run_child(const OpenInChild& open, int done_fd, int report_fd, unsigned timeout) {
  restore_default_crash_handling();
  if (report_fd >= 0) dup2(report_fd, STDERR_FILENO);
  limit_child_resources();
  // Freed memory filled with a pattern, so that a read after free is more likely to see garbage
  // and fail here (no guarantee: tests/fixtures/libhdf5/compressed-attribute-use-after-free.h5
  // still passes a Release child; AddressSanitizer builds catch it).
  mallopt(M_PERTURB, 0xA5);
  alarm(timeout);
  H5Eset_auto2(H5E_DEFAULT, on_hdf5_error, nullptr);
  int code = 0;
  try {
    const hid_t file = open();
    if (file >= 0) {
      walk_metadata(file);
      // Closing frees what libhdf5 allocated while reading: a heap overflow that went unnoticed
      // (a Release build has no sanitizer) is caught by the allocator's checks here, in the child.
      H5Fclose(file);
      H5close();
    }
  } catch (const std::bad_alloc&) {
    code = kChildOutOfMemory;
  } catch (...) {
    // An ordinary error is not damage: the parent meets it again and reports it in context.
  }
  if (walk_ran_out_of_memory) code = kChildOutOfMemory;
  const char done = 'K';
  [[maybe_unused]] const ssize_t ignored = ::write(done_fd, &done, 1);
  ::_exit(code);
}

// ---- the parent ---------------------------------------------------------------------------

struct ChildOutcome {
  bool finished = false;  // the child reached its end and said so
  bool timed_out = false;
  int status = 0;  // waitpid status
};

// Waits for the child's "done" byte or its death, at most `seconds` (+ slack for the child's
// own alarm to fire first); kills it past that.
ChildOutcome wait_for_child(pid_t child, int done_fd, unsigned seconds) {
  ChildOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds + 2);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      ::kill(child, SIGKILL);
      break;
    }
    struct pollfd pfd {
      done_fd, POLLIN, 0
    };
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready > 0) {
      char byte = 0;
      outcome.finished = ::read(done_fd, &byte, 1) == 1 && byte == 'K';
    }
    if (ready != 0) break;
  }
  while (::waitpid(child, &outcome.status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(outcome.status) && WTERMSIG(outcome.status) == SIGALRM) outcome.timed_out = true;
  return outcome;
}

// The sanitizer's or libFuzzer's one-line summary of what killed the child, if it wrote one.
std::string report_summary(int report_fd) {
  if (report_fd < 0) return "";
  std::string text(kMaxReportBytes, '\0');
  const ssize_t n = ::pread(report_fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::string best;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (const auto at = line.find("SUMMARY: "); at != std::string::npos) return line.substr(at + 9);
    if (best.empty() && line.find("ERROR: ") != std::string::npos) best = line.substr(line.find("ERROR: ") + 7);
  }
  return best;
}

std::string describe_failure(const ChildOutcome& outcome, unsigned seconds, const std::string& summary) {
  const std::string where =
      " while dgq walked its groups, datasets and attributes in a child process; dgq did not read it";
  if (outcome.timed_out)
    return "libhdf5 did not finish reading the file's metadata in " + std::to_string(seconds) + " s" + where;
  if (WIFSIGNALED(outcome.status)) {
    const int sig = WTERMSIG(outcome.status);
    const char* name = sigabbrev_np(sig);
    return "libhdf5 crashed with signal " + std::to_string(sig) + (name ? std::string(" SIG") + name : "") + where;
  }
  const int code = WIFEXITED(outcome.status) ? WEXITSTATUS(outcome.status) : -1;
  // Under AddressSanitizer or libFuzzer a refused allocation ends the child with their report.
  const bool sanitizer_out_of_memory = summary.find("out-of-memory") != std::string::npos ||
                                       summary.find("allocation-size-too-big") != std::string::npos ||
                                       summary.find("malloc limit") != std::string::npos;
  if (code == kChildOutOfMemory || sanitizer_out_of_memory)
    return "reading it needs more memory than the " + std::to_string(kChildExtraMemory >> 30) +
           " GiB the check allows" + where;
  return "libhdf5 failed" + (summary.empty() ? " (exit status " + std::to_string(code) + ")" : ": " + summary) + where;
}

// ---- files already checked --------------------------------------------------------------

// The status-change time is in it too: any write, rename or chmod moves it, and no call sets it
// back (utimensat can reset the modification time, not this one).
using FileIdentity = std::tuple<dev_t, ino_t, off_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev,          st.st_ino,         st.st_size,        st.st_mtim.tv_sec,
                      st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
}

std::mutex checks_mutex;
std::size_t checks_started = 0;
std::set<FileIdentity>& checked_files() {
  static std::set<FileIdentity> files;
  return files;
}
std::set<FileIdentity>& written_files() {  // a subset of checked_files()
  static std::set<FileIdentity> files;
  return files;
}

void throw_damaged(const std::string& name, const std::string& why) {
  throw InputError(name + ": damaged HDF5 metadata (" + one_line(why) + ")");
}

}  // namespace

unsigned metadata_check_timeout_seconds() {
  static const unsigned seconds = [] {
    const char* text = std::getenv("DGQ_HDF5_CHECK_TIMEOUT");
    const unsigned long value = text ? std::strtoul(text, nullptr, 10) : 60ul;
    return static_cast<unsigned>(value == 0 ? 1 : value > 86400 ? 86400 : value);
  }();
  return seconds;
}

std::size_t metadata_checks_started() {
  const std::lock_guard<std::mutex> lock(checks_mutex);
  return checks_started;
}

void remember_written_here(const std::string& path) {
  const std::lock_guard<std::mutex> lock(checks_mutex);
  if (const std::optional<FileIdentity> identity = identity_of(path)) {
    checked_files().insert(*identity);
    written_files().insert(*identity);
  }
}

bool is_written_here(const std::string& path) {
  const std::lock_guard<std::mutex> lock(checks_mutex);
  const std::optional<FileIdentity> identity = identity_of(path);
  return identity && written_files().count(*identity) > 0;
}

void check_metadata_isolated(const std::string& name, const OpenInChild& open, bool remember) {
  check_metadata_isolated(name, open, remember, metadata_check_timeout_seconds());
}

void check_metadata_isolated(const std::string& name, const OpenInChild& open, bool remember,
                             unsigned timeout_seconds) {
  const std::lock_guard<std::mutex> lock(checks_mutex);
  const std::optional<FileIdentity> identity = remember ? identity_of(name) : std::nullopt;
  if (identity && checked_files().count(*identity)) return;

  const unsigned seconds = timeout_seconds == 0 ? 1 : timeout_seconds;
  ++checks_started;
  int done_pipe[2];
  if (::pipe2(done_pipe, O_CLOEXEC) != 0)
    throw Error(name + ": cannot start the check of its HDF5 metadata: " + std::strerror(errno));
  const int report_fd = ::memfd_create("dgq-hdf5-check", MFD_CLOEXEC);  // -1: no summary, not fatal
  std::fflush(nullptr);                                                 // nothing buffered is written twice
  const pid_t child = ::fork();
  if (child == 0) run_child(open, done_pipe[1], report_fd, seconds);
  ::close(done_pipe[1]);
  if (child < 0) {
    const int error = errno;
    ::close(done_pipe[0]);
    if (report_fd >= 0) ::close(report_fd);
    throw Error(name + ": cannot start the check of its HDF5 metadata: " + std::strerror(error));
  }
  const ChildOutcome outcome = wait_for_child(child, done_pipe[0], seconds);
  ::close(done_pipe[0]);
  const std::string summary = report_summary(report_fd);
  if (report_fd >= 0) ::close(report_fd);

  const bool clean =
      outcome.finished && !outcome.timed_out && WIFEXITED(outcome.status) && WEXITSTATUS(outcome.status) == 0;
  if (!clean) throw_damaged(name, describe_failure(outcome, seconds, summary));
  if (identity) checked_files().insert(*identity);
}

}  // namespace dgq::sim::h5
