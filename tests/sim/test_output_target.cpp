// Where outputs go (sim/files/include/dgq/sim/files/output/output_target.hpp, partial_file.hpp): a regular file or a
// new path is replaced through TARGET.partial and a rename; a symbolic link is followed and stays a link; a FIFO or an
// open descriptor (/proc/self/fd/N) is written through, never renamed over; a directory is refused; a file holding runs
// is replaced only by a writer that keeps them. No test here touches /dev: the old rule renamed over whatever it was
// given, so a test of /dev/null run against it as root would have replaced the machine's /dev/null.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/output/output_target.hpp"
#include "dgq/sim/files/output/partial_file.hpp"
#include "dgq/sim/files/output/text_output.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "output/runs_held.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;
namespace fs = std::filesystem;
using Kind = sim::OutputTarget::Kind;

namespace {

std::string output_text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A results file with one run group: what no other output may replace.
void write_results_with_one_run(const std::string& path) {
  sim::h5::PartialOutput out(path);
  sim::h5::write_string_attribute(out.file(), "format", "dgq-results");
  sim::h5::Handle runs = sim::h5::create_group(out.file(), "runs", path);
  sim::h5::Handle run = sim::h5::create_group(runs.get(), "q8_0@x", path);
  sim::h5::write_int_attribute(run.get(), "complete", 1);
  run.reset();
  runs.reset();
  out.commit();
}

// The read end of a FIFO, opened without waiting for a writer, and what it holds once written.
struct FifoReader {
  explicit FifoReader(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK)) { REQUIRE(fd >= 0); }
  ~FifoReader() { ::close(fd); }
  std::string available() const {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    return text;
  }
  int fd;
};

}  // namespace

TEST_CASE("output target: a new path and a regular file are files to replace, under their own name", "[output]") {
  const auto dir = test::scratch_dir("output-target-plain");
  const sim::OutputTarget fresh = sim::resolve_output(dir + "/new.json");
  CHECK(fresh.kind == Kind::file);
  CHECK(fresh.path == dir + "/new.json");
  CHECK_FALSE(fresh.exists);
  std::ofstream(dir + "/old.json") << "{}";
  const sim::OutputTarget old = sim::resolve_output(dir + "/old.json");
  CHECK(old.kind == Kind::file);
  CHECK(old.path == dir + "/old.json");
  CHECK(old.exists);
  // A missing folder on the way is a new path: creating the file names the folder.
  CHECK_FALSE(sim::resolve_output(dir + "/no/such/dir/x.json").exists);
}

TEST_CASE("output target: a symbolic link is followed to its final target, dangling or not", "[output]") {
  const auto dir = test::scratch_dir("output-target-links");
  std::ofstream(dir + "/real.json") << "{}";
  fs::create_symlink("real.json", dir + "/link.json");  // relative: resolved from the link's folder
  fs::create_symlink(dir + "/link.json", dir + "/link-to-link.json");
  fs::create_symlink("missing.json", dir + "/dangling.json");
  CHECK(fs::equivalent(sim::resolve_output(dir + "/link.json").path, dir + "/real.json"));
  const sim::OutputTarget chained = sim::resolve_output(dir + "/link-to-link.json");
  CHECK(chained.kind == Kind::file);
  CHECK(chained.exists);
  CHECK(fs::equivalent(chained.path, dir + "/real.json"));
  const sim::OutputTarget dangling = sim::resolve_output(dir + "/dangling.json");
  CHECK(dangling.kind == Kind::file);
  CHECK_FALSE(dangling.exists);
  CHECK(fs::path(dangling.path).filename() == "missing.json");
}

TEST_CASE("output target: a directory and a loop of links are refused by name", "[output]") {
  const auto dir = test::scratch_dir("output-target-refused");
  CHECK_THROWS_WITH(sim::resolve_output(dir), Catch::Contains(dir + ": is a directory"));
  fs::create_symlink("b", dir + "/a");
  fs::create_symlink("a", dir + "/b");
  CHECK_THROWS_WITH(sim::resolve_output(dir + "/a"), Catch::Contains("too many levels of symbolic links"));
}

TEST_CASE("output target: a FIFO and an open descriptor are streams, written through as given", "[output]") {
  const auto dir = test::scratch_dir("output-target-streams");
  REQUIRE(::mkfifo((dir + "/pipe").c_str(), 0600) == 0);
  const sim::OutputTarget fifo = sim::resolve_output(dir + "/pipe");
  CHECK(fifo.kind == Kind::stream);
  CHECK(fifo.path == dir + "/pipe");
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  // /proc/self/fd/N reads as the pipe's name ("pipe:[...]"), not a path: never "a new file".
  const std::string descriptor = "/proc/self/fd/" + std::to_string(ends[1]);
  CHECK(sim::resolve_output(descriptor).kind == Kind::stream);
  CHECK(sim::resolve_output("/dev/fd/" + std::to_string(ends[1])).kind == Kind::stream);  // /dev/fd -> /proc/self/fd
  ::close(ends[0]);
  ::close(ends[1]);
}

TEST_CASE("write_text_file through a symbolic link replaces the target and keeps the link", "[output]") {
  const auto dir = test::scratch_dir("output-text-link");
  std::ofstream(dir + "/real.json") << "old";
  fs::create_symlink("real.json", dir + "/link.json");
  sim::write_text_file(dir + "/link.json", "new\n");
  CHECK(fs::is_symlink(dir + "/link.json"));  // before: renamed over, the link became a regular file
  CHECK(output_text_of(dir + "/real.json") == "new\n");
  CHECK_FALSE(fs::exists(dir + "/real.json.partial"));
  CHECK_FALSE(fs::exists(dir + "/link.json.partial"));
}

TEST_CASE("write_text_file into a FIFO writes through it and leaves it a FIFO", "[output]") {
  const auto dir = test::scratch_dir("output-text-fifo");
  const std::string pipe = dir + "/pipe";
  REQUIRE(::mkfifo(pipe.c_str(), 0600) == 0);
  const FifoReader reader(pipe);  // a reader is there, so the writer's open does not wait
  sim::write_text_file(pipe, "{\"a\": 1}\n");
  CHECK(reader.available() == "{\"a\": 1}\n");
  CHECK(fs::is_fifo(pipe));  // before: PIPE.partial renamed over it, a regular file in its place
  CHECK_FALSE(fs::exists(pipe + ".partial"));
}

TEST_CASE("an HDF5 output to a FIFO is refused before anything is created", "[output]") {
  const auto dir = test::scratch_dir("output-h5-fifo");
  const std::string pipe = dir + "/pipe";
  REQUIRE(::mkfifo(pipe.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(sim::h5::PartialOutput(pipe), Catch::Contains(pipe + ": not a regular file"));
  CHECK(fs::is_fifo(pipe));
  CHECK_FALSE(fs::exists(pipe + ".partial"));
}

TEST_CASE("an HDF5 output through a symbolic link replaces the target and keeps the link", "[output]") {
  const auto dir = test::scratch_dir("output-h5-link");
  fs::create_symlink("real.h5", dir + "/link.h5");  // dangling: the target is created
  sim::h5::PartialOutput out(dir + "/link.h5");
  sim::h5::write_string_attribute(out.file(), "format", "test");
  out.commit();
  CHECK(fs::is_symlink(dir + "/link.h5"));
  CHECK(fs::is_regular_file(dir + "/real.h5"));
}

TEST_CASE("a file holding runs is replaced only by a writer that keeps them", "[output]") {
  const auto dir = test::scratch_dir("output-runs-held");
  const std::string results = dir + "/results.h5";
  write_results_with_one_run(results);
  CHECK(sim::runs_held(results).runs == 1);
  CHECK(sim::runs_held(results).format == "dgq-results");
  const auto before = test::file_bytes(results);
  CHECK_THROWS_WITH(sim::write_text_file(results, "{}"),
                    Catch::Contains(results + ": holds 1 run(s) (a dgq-results file); this output would replace them"));
  CHECK_THROWS_AS(sim::check_text_output(results), InputError);
  CHECK_THROWS_AS(sim::h5::PartialOutput(results), InputError);
  CHECK(test::file_bytes(results) == before);
  CHECK_FALSE(fs::exists(results + ".partial"));
  { sim::h5::PartialOutput allowed(results, sim::RunsInTarget::replace); }  // not committed: nothing changes
  CHECK(test::file_bytes(results) == before);
  // Other files are no one's runs: a text file and an HDF5 file of another format.
  std::ofstream(dir + "/table.csv") << "a,b\n";
  CHECK(sim::runs_held(dir + "/table.csv").runs == 0);
  sim::write_text_file(dir + "/table.csv", "c\n");
  CHECK(output_text_of(dir + "/table.csv") == "c\n");
}
