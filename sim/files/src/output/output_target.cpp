#include "dgq/sim/files/output/output_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "dgq/errors.hpp"

namespace dgq::sim {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit before ELOOP

// /proc/<pid>/fd/<n> names an open descriptor (a pipe, a terminal, a file opened with >>), not
// a path: renaming a file to the path its link reads would write beside the descriptor.
bool names_open_descriptor(const fs::path& link) {
  const fs::path folder = link.parent_path();
  return folder.filename() == "fd" && folder.parent_path().parent_path() == "/proc";
}

// The link's folder with its own links resolved (/dev/fd -> /proc/<pid>/fd), so that a link
// into /proc is seen whichever path reached it.
fs::path resolved_folder(const fs::path& link) {
  std::error_code ignored;
  const fs::path folder = link.has_parent_path() ? link.parent_path() : fs::path(".");
  fs::path resolved = fs::weakly_canonical(folder, ignored);
  return resolved.empty() ? folder : resolved;
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  if (path.empty()) throw ParameterError("an output path is empty");
  fs::path at = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) {
      // Not there (or a folder on the way is missing: creating the file reports that).
      if (errno == ENOENT || errno == ENOTDIR) return {OutputTarget::Kind::file, at.string(), false};
      throw InputError(path + ": cannot examine the output: " + std::strerror(errno));
    }
    if (S_ISREG(st.st_mode)) return {OutputTarget::Kind::file, at.string(), true};
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory; name a file");
    if (!S_ISLNK(st.st_mode)) return {OutputTarget::Kind::stream, path, true};
    const fs::path folder = resolved_folder(at);
    if (names_open_descriptor(folder / at.filename())) return {OutputTarget::Kind::stream, path, true};
    const fs::path target = fs::read_symlink(at);
    at = target.is_absolute() ? target : folder / target;
  }
  throw InputError(path + ": too many levels of symbolic links");
}

void write_to_stream(const std::string& path, const std::string& bytes) {
  std::cout.flush();
  std::fflush(stdout);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw Error("cannot write '" + path + "': " + std::strerror(error));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace dgq::sim
