// Hostile HDF5 isolated: hostile HDF5 metadata is walked in a forked child first; a child that dies,
// fails, stalls or over-allocates becomes one InputError "FILE: damaged HDF5 metadata (...)".
// The mechanism is tested with children that fail on purpose (deterministic, whatever
// libhdf5 does); the committed libhdf5 reproducers are then run through the real open.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <new>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"
#include "dgq/sim/files/trace.hpp"
#include "hdf5/metadata_walk.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;
namespace h5 = dgq::sim::h5;
namespace fs = std::filesystem;

namespace {
const std::string kLibhdf5 = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/libhdf5/";

std::string damage_of(const h5::OpenInChild& open, unsigned timeout = 5) {
  return test::input_error_of([&] { h5::check_metadata_isolated("x.h5", open, false, timeout); });
}
}  // namespace

TEST_CASE("a child that cannot open the file is not damage: the parent reports the open itself", "[isolation]") {
  REQUIRE_NOTHROW(h5::check_metadata_isolated(
      "x.h5", [] { return hid_t{-1}; }, false, 5));
  REQUIRE_NOTHROW(h5::check_metadata_isolated(
      "x.h5", []() -> hid_t { throw InputError("ordinary"); }, false, 5));
}

TEST_CASE("a child killed by a signal becomes 'damaged HDF5 metadata' naming the signal", "[isolation]") {
  const std::string message = damage_of([]() -> hid_t {
    ::raise(SIGSEGV);
    return -1;
  });
  REQUIRE_THAT(message, Catch::StartsWith("x.h5: damaged HDF5 metadata (libhdf5 crashed with signal 11 SIGSEGV"));
  REQUIRE(message.find('\n') == std::string::npos);
}

TEST_CASE("a child that aborts is damage too", "[isolation]") {
  const std::string message = damage_of([]() -> hid_t { std::abort(); });
  REQUIRE_THAT(message, Catch::StartsWith("x.h5: damaged HDF5 metadata (libhdf5 crashed with signal 6 SIGABRT"));
}

TEST_CASE("a child past its deadline is killed and named with the deadline", "[isolation]") {
  const std::string message = damage_of(
      []() -> hid_t {
        for (;;) ::pause();
      },
      1);
  REQUIRE_THAT(message, Catch::StartsWith("x.h5: damaged HDF5 metadata (libhdf5 did not finish reading the "
                                          "file's metadata in 1 s"));
}

TEST_CASE("a child that exits with an error status is damage, with its status", "[isolation]") {
  const std::string message = damage_of([]() -> hid_t { ::_exit(7); });
  REQUIRE_THAT(message, Catch::Contains("damaged HDF5 metadata (libhdf5 failed (exit status 7)"));
}

TEST_CASE("a child whose allocation fails is damage, naming the memory limit", "[isolation]") {
  const std::string message = damage_of([]() -> hid_t { throw std::bad_alloc(); });
  REQUIRE_THAT(
      message,
      Catch::StartsWith("x.h5: damaged HDF5 metadata (reading it needs more memory than the 1 GiB the check allows"));
}

// The limit is RLIMIT_DATA above what the parent had, so it holds under AddressSanitizer too
// (there the allocator's own out-of-memory report ends the child, with the same message).
TEST_CASE("a child that asks for more memory than its limit is damage", "[isolation]") {
  const std::string message = damage_of([]() -> hid_t {
    std::vector<char> huge(std::size_t{2} << 30);
    return huge[12345] == 0 ? -1 : -2;
  });
  REQUIRE_THAT(
      message,
      Catch::StartsWith("x.h5: damaged HDF5 metadata (reading it needs more memory than the 1 GiB the check allows"));
}

TEST_CASE("a sound file from outside passes, is walked whole, and is checked once while unchanged", "[isolation]") {
  const std::string dir = test::scratch_dir("isolation_sound");
  const auto meta = test::tiny_meta(DType::f16);
  test::write_tiny_trace(dir + "/written.h5", meta, DType::f16);
  // A copy made by another writer (std::filesystem, not this process's HDF5 writers) is a file
  // from outside: its first open is checked.
  fs::copy_file(dir + "/written.h5", dir + "/t.h5", fs::copy_options::overwrite_existing);

  const std::size_t before = h5::metadata_checks_started();
  { const sim::TraceReader first(dir + "/t.h5"); }
  { const sim::TraceReader second(dir + "/t.h5"); }
  REQUIRE(h5::metadata_checks_started() == before + 1);

  const h5::Handle file = h5::open_file_readonly(dir + "/t.h5");
  const h5::MetadataWalkCounts counts = h5::walk_metadata(file.get());
  CAPTURE(counts.objects, counts.links, counts.attributes, counts.values_read);
  REQUIRE(counts.objects >=
          static_cast<std::size_t>(1 + meta.num_layers * 4));  // root, /layers, each layer group and its k, v, q
  REQUIRE(counts.attributes >= 1);
  REQUIRE(counts.values_read == counts.attributes);

  test::write_tiny_trace(dir + "/other.h5", meta, DType::f32);  // changed in place by another writer
  fs::copy_file(dir + "/other.h5", dir + "/t.h5", fs::copy_options::overwrite_existing);
  { const sim::TraceReader third(dir + "/t.h5"); }
  REQUIRE(h5::metadata_checks_started() == before + 2);
}

TEST_CASE("a file this process wrote and closed is read back unchecked until anything changes it", "[isolation]") {
  // A sweep rewrites its results file after every pass and reads it back before the next; a
  // walk of the whole file each time grew with the file (docs/robustness.md, "What the check costs").
  const std::string dir = test::scratch_dir("isolation_written_here");
  const auto meta = test::tiny_meta(DType::f16);
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f16);

  const std::size_t before = h5::metadata_checks_started();
  { const sim::TraceReader mine(dir + "/t.h5"); }
  REQUIRE(h5::metadata_checks_started() == before);
  REQUIRE(h5::is_written_here(dir + "/t.h5"));

  // Same bytes, same size, same inode: only the times move, and that is enough to check again.
  REQUIRE(::utimensat(AT_FDCWD, (dir + "/t.h5").c_str(), nullptr, 0) == 0);
  { const sim::TraceReader touched(dir + "/t.h5"); }
  REQUIRE(h5::metadata_checks_started() == before + 1);
  REQUIRE_FALSE(h5::is_written_here(dir + "/t.h5"));  // checked for reading now, never for writing

  // Replaced under the same name by another file (another inode): checked again, and a
  // damaged replacement is refused although the name was once written here.
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f16);
  fs::copy_file(kLibhdf5 + "trace-global-heap-overflow.h5", dir + "/bad.h5");
  fs::rename(dir + "/bad.h5", dir + "/t.h5");
  const std::string message = test::input_error_of([&] { sim::TraceReader reader(dir + "/t.h5"); });
  REQUIRE_THAT(message, Catch::StartsWith(dir + "/t.h5: attribute 'source': corrupt global heap ("));
  REQUIRE(h5::metadata_checks_started() == before + 2);
}
