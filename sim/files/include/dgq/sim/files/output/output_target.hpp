#pragma once
// What an output path names, and so how dgq may write it (docs/robustness.md, "Outputs"):
//   - a new path or a regular file: a file dgq replaces whole, through TARGET.partial and a
//     rename (partial_file.hpp);
//   - a symbolic link: followed to its final target, which is treated as above, so the link
//     stays a link and its target is replaced (a dangling link's target is created);
//   - a device, FIFO or socket (/dev/null, a named pipe, /dev/stdout on a terminal or a pipe)
//     and any link into /proc/<pid>/fd (/dev/stdout, /dev/fd/N: an open descriptor, whatever
//     it is): a stream, written through as it is, never renamed over;
//   - a directory: refused.
// Before this rule every output was renamed over, so root's `--json /dev/stdout` replaced the
// /dev/stdout link with a regular file.
#include <string>

namespace dgq::sim {

struct OutputTarget {
  enum class Kind { file, stream };
  Kind kind = Kind::file;
  // file: the path to replace (a link's final target); stream: the path as given.
  std::string path;
  bool exists = false;  // file: a regular file is there now
};

// Throws InputError naming `path` for a directory, a loop of links, or a path that cannot be
// examined.
OutputTarget resolve_output(const std::string& path);

// Writes `bytes` through the stream at `path` (opened for appending, never created or
// truncated), after flushing std::cout so that what dgq printed before comes first. Throws
// Error("cannot write 'PATH': ...").
void write_to_stream(const std::string& path, const std::string& bytes);

}  // namespace dgq::sim
