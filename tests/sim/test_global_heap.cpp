// dgq's reader of variable-length strings from a global heap collection's bytes
// (sim/files/src/hdf5/global_heap.hpp): the layouts libhdf5 1.10.8 loops or copies out of bounds on
// are each one error, and a sound collection gives the string libhdf5 gives.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/trace.hpp"
#include "dgq/sim/model/tokens.hpp"
#include "hdf5/global_heap.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;
using sim::h5::GlobalHeapId;

namespace {

void put(std::vector<unsigned char>& bytes, std::size_t at, std::uint64_t value, unsigned width) {
  for (unsigned i = 0; i < width; ++i) bytes[at + i] = static_cast<unsigned char>(value >> (8 * i));
}

// A file of `prefix` bytes and then one collection at address `prefix`, as libhdf5 writes it:
// header, the objects 1..n (data padded to 8 bytes), free space filling the rest.
struct HeapFile {
  std::vector<unsigned char> bytes;
  std::uint64_t collection = 0;
  std::vector<std::size_t> object_at;  // offset of object i+1's header in `bytes`

  explicit HeapFile(const std::vector<std::string>& objects, std::size_t prefix = 64, std::uint64_t size = 4096)
      : bytes(prefix + size, 0), collection(prefix) {
    const std::size_t at = prefix;
    bytes[at] = 'G', bytes[at + 1] = 'C', bytes[at + 2] = 'O', bytes[at + 3] = 'L', bytes[at + 4] = 1;
    put(bytes, at + 8, size, 8);
    std::size_t p = at + 16;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      object_at.push_back(p);
      put(bytes, p, i + 1, 2);
      put(bytes, p + 8, objects[i].size(), 8);
      std::copy(objects[i].begin(), objects[i].end(), bytes.begin() + static_cast<std::ptrdiff_t>(p + 16));
      p += 16 + (objects[i].size() + 7) / 8 * 8;
    }
    put(bytes, p, 0, 2);
    put(bytes, p + 8, at + size - p, 8);
  }
  sim::h5::FileBytes file() const { return {-1, bytes.data(), bytes.size(), 0}; }
  GlobalHeapId id(std::uint32_t index, std::uint32_t length) const { return {length, collection, index}; }
  std::string read(const GlobalHeapId& id) const {
    return sim::h5::read_global_heap_string(file(), {}, id, "f.h5: attribute 'x'");
  }
};

std::string error_of(const HeapFile& heap, const GlobalHeapId& id) {
  try {
    heap.read(id);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a corrupt global heap is one error naming the collection, where libhdf5 1.10.8 loops or overreads",
          "[global-heap]") {
  HeapFile heap({"dgq-trace", "synthetic", "poetry"});
  SECTION("free space of size 0 (libhdf5's walk over the objects never advances)") {
    put(heap.bytes, heap.object_at[1], 0, 2);
    put(heap.bytes, heap.object_at[1] + 8, 0, 8);
    REQUIRE(
        error_of(heap, heap.id(3, 6)) ==
        "f.h5: attribute 'x': corrupt global heap (the collection at address 64: free space of 0 bytes at offset 48)");
  }
  SECTION("an object larger than what is left of the collection") {
    put(heap.bytes, heap.object_at[0] + 8, std::uint64_t{1} << 40, 8);
    REQUIRE_THAT(error_of(heap, heap.id(1, 9)),
                 Catch::Contains("object 1 of 1099511627776 bytes at offset 16 runs past its end (4096 bytes)"));
  }
  SECTION("an object whose size is not the string's length (libhdf5 copies the object's size into the string's)") {
    put(heap.bytes, heap.object_at[1] + 8, 200, 8);
    REQUIRE_THAT(error_of(heap, heap.id(2, 9)), Catch::Contains("object 2 holds 200 bytes, the string says 9"));
    REQUIRE_THAT(error_of(heap, heap.id(1, 4096)), Catch::Contains("object 1 holds 9 bytes, the string says 4096"));
  }
  SECTION("an object index the collection does not hold") {
    REQUIRE_THAT(error_of(heap, heap.id(4, 9)), Catch::Contains("no object 4 in it"));
    REQUIRE_THAT(error_of(heap, heap.id(0, 9)), Catch::Contains("object index 0 (objects are numbered 1 to 65535)"));
  }
  SECTION("a collection whose size runs past the end of the file, or is smaller than its header") {
    put(heap.bytes, heap.collection + 8, 8192, 8);
    REQUIRE_THAT(error_of(heap, heap.id(1, 9)),
                 Catch::Contains("size 8192 runs past the end of the file (4160 bytes)"));
    put(heap.bytes, heap.collection + 8, 8, 8);
    REQUIRE_THAT(error_of(heap, heap.id(1, 9)), Catch::Contains("size 8 is smaller than its header"));
  }
  SECTION("a heap id pointing at no collection, past the file, or at address 0") {
    REQUIRE_THAT(error_of(heap, {9, heap.collection + 8, 1}),
                 Catch::Contains("at address 72: no GCOL signature there"));
    REQUIRE_THAT(error_of(heap, {9, std::uint64_t{1} << 62, 1}), Catch::Contains("its header is not inside the file"));
    REQUIRE_THAT(error_of(heap, {9, 0, 1}), Catch::Contains("a string of 9 bytes stored at address 0"));
  }
  SECTION("another version of the collection format") {
    heap.bytes[heap.collection + 4] = 2;
    REQUIRE_THAT(error_of(heap, heap.id(1, 9)), Catch::Contains("version 2, dgq reads version 1"));
  }
}

TEST_CASE("a sound global heap gives the strings libhdf5 gives", "[global-heap]") {
  const HeapFile heap({"dgq-trace", "", "a longer string of 32 characters", std::string("nul\0inside", 10)});
  REQUIRE(heap.read(heap.id(1, 9)) == "dgq-trace");
  REQUIRE(heap.read(heap.id(3, 32)) == "a longer string of 32 characters");
  REQUIRE(heap.read(heap.id(4, 10)) == "nul");  // a C string ends at its first NUL
  REQUIRE(heap.read(heap.id(2, 0)) == "");
  REQUIRE(heap.read({0, 0, 0}) == "");  // an empty string stores no heap object
  SECTION("addresses count from the end of a user block") {
    HeapFile shifted({"after a user block"}, 512 + 64);
    sim::h5::FileBytes file = shifted.file();
    file.base_address = 512;
    REQUIRE(sim::h5::read_global_heap_string(file, {}, {18, 64, 1}, "f.h5") == "after a user block");
  }
}

// The committed reproducers (tests/fixtures/libhdf5; the CLI runs them through every command in
// tests/cli): where libhdf5 1.10.8 looped (until dgq's 60 s deadline) or copied out of bounds,
// the file passes the isolated metadata check and the string is refused at once, in the parent.
TEST_CASE("the libhdf5 reproducers' corrupt strings are refused by dgq's reader, in the parent", "[global-heap]") {
  const std::string dir = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/libhdf5/";
  SECTION("an object running past its collection (libhdf5 copied 8201 bytes into a 9-byte string)") {
    const std::string path = dir + "trace-global-heap-overflow.h5";
    REQUIRE(test::input_error_of([&] { sim::TraceReader reader(path); }) ==
            path +
                ": attribute 'source': corrupt global heap (the collection at address 2048: object 3 of 8201 "
                "bytes at offset 96 runs past its end (4096 bytes))");
  }
  SECTION("free space of size 0 (libhdf5 looped)") {
    const std::string path = dir + "tokens-global-heap-free-space-zero.h5";
    REQUIRE(test::input_error_of([&] { sim::read_token_file(path); }) ==
            path +
                ": attribute 'format': corrupt global heap (the collection at address 2048: free space of 0 bytes "
                "at offset 16)");
  }
  SECTION("a heap id claiming 2^31 + 3 bytes for a 3-byte object (libhdf5 asked for gigabytes)") {
    const std::string path = dir + "results-vl-string-huge-length.h5";
    const sim::h5::Handle file = sim::h5::open_file_readonly(path);  // the walk no longer asks libhdf5 for it
    const sim::h5::Handle run = sim::h5::open_group(file.get(), "runs/q8_0@tiny+tokens-llama+ctx32", path);
    REQUIRE(test::input_error_of([&] { sim::h5::read_string_attribute(run.get(), "query_rounding", path); }) ==
            path +
                ": attribute 'query_rounding': corrupt global heap (the collection at address 2048: object 8 "
                "holds 3 bytes, the string says 2147483651)");
  }
}
