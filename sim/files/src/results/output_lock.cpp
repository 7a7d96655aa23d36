// OutputLock: flock() on OUTPUT.lock, so that two sweeps (or replays) never write one file.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dgq/errors.hpp"
#include "dgq/sim/files/output/partial_file.hpp"
#include "dgq/sim/files/results/results_file.hpp"

namespace dgq::sim {

namespace {
bool same_file(int fd, const std::string& path) {
  struct stat open_file {
  }, named{};
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_ino == named.st_ino &&
         open_file.st_dev == named.st_dev;
}
}  // namespace

OutputLock::OutputLock(const std::string& output) {
  require_results_output(output);
  path_ = stage_output(output, RunsInTarget::replace).target + ".lock";
  // A lock file removed by its creator between our open() and flock() is retried: the lock
  // must be on the file that is under the name now.
  for (int attempt = 0; attempt < 16; ++attempt) {
    created_ = true;
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EEXIST) {
      created_ = false;
      fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
      if (fd_ < 0 && errno == ENOENT) continue;
    }
    if (fd_ < 0)
      throw InputError(output + ": cannot create the lock file " + path_ + ": " + std::strerror(errno) +
                       " (is the output folder writable?)");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      if (error == EWOULDBLOCK)
        throw InputError(output + ": in use by another dgq process (" + path_ +
                         " is locked); wait for it to finish or choose another output");
      throw InputError(output + ": cannot lock " + path_ + ": " + std::strerror(error));
    }
    if (same_file(fd_, path_)) return;
    ::close(fd_);
    fd_ = -1;
  }
  throw InputError(output + ": cannot lock " + path_ + " (it keeps being replaced)");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  if (created_) ::unlink(path_.c_str());  // while still locked: a waiting process re-checks the name
  ::close(fd_);
}

}  // namespace dgq::sim
