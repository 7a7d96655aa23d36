// Hostile-file hardening: what the HDF5 layer does with hostile files and faults (the CLI tests in
// tests/cli run the committed reproducers in tests/fixtures/hostile end to end).
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
const std::string kHostile = std::string(DGQ_SOURCE_DIR) + "/tests/fixtures/hostile/";

}  // namespace

TEST_CASE("a file image in memory is read like the file on disk", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_image");
  const auto meta = test::tiny_meta(DType::f16);
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f16);
  const std::vector<char> bytes = test::file_bytes(dir + "/t.h5");
  sim::h5::ScopedFileImage image("in-memory.h5", bytes.data(), bytes.size());
  const sim::TraceReader from_memory("in-memory.h5");
  const sim::TraceReader from_disk(dir + "/t.h5");
  REQUIRE(from_memory.read_layer(1).k.storage == from_disk.read_layer(1).k.storage);
}

TEST_CASE("an empty or cut file image is 'not an HDF5 file or truncated'", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_image_cut");
  test::write_tiny_trace(dir + "/t.h5", test::tiny_meta(DType::f16), DType::f16);
  std::vector<char> bytes = test::file_bytes(dir + "/t.h5");
  const std::size_t size = GENERATE(0, 7, 512);
  CAPTURE(size);
  sim::h5::ScopedFileImage image("cut.h5", bytes.data(), size);
  const std::string message = test::input_error_of([] { sim::TraceReader reader("cut.h5"); });
  REQUIRE_THAT(message, Catch::StartsWith("cut.h5: "));
}

TEST_CASE("shapes not backed by stored bytes are refused before allocating, naming file and dataset", "[hostile]") {
  SECTION("K and V of 2^34 tokens in chunks never written") {
    const std::string message =
        test::input_error_of([] { sim::TraceReader reader(kHostile + "trace-huge-extent.h5"); });
    REQUIRE_THAT(message, Catch::Contains("trace-huge-extent.h5: /layers/0/k: shape [1, 17179869184, 32]"));
    REQUIRE_THAT(message, Catch::Contains("no data is stored"));
  }
  SECTION("/q_pos of 2^40 entries") {
    const std::string message = test::input_error_of([] { sim::TraceReader reader(kHostile + "trace-huge-q_pos.h5"); });
    REQUIRE_THAT(message, Catch::Contains("trace-huge-q_pos.h5: /q_pos: shape [1099511627776] is too large"));
  }
  SECTION("a compressed file whose tokens attributes say 2^60") {
    const std::string message =
        test::input_error_of([] { sim::CompressedReader reader(kHostile + "compressed-tokens-2p60.h5"); });
    REQUIRE_THAT(message, Catch::Contains("compressed-tokens-2p60.h5: attribute 'tokens'"));
    REQUIRE_THAT(message, Catch::Contains("overflows"));
  }
}

TEST_CASE("Tensor3 refuses negative and overflowing shapes instead of wrapping", "[hostile]") {
  REQUIRE_THROWS_AS(Tensor3(DType::f32, 1, std::int64_t{1} << 60, 32), ParameterError);
  REQUIRE_THROWS_AS(Tensor3(DType::f16, 2, -1, 8), ParameterError);
  REQUIRE(Tensor3(DType::f16, 0, 5, 8).storage.empty());
}

TEST_CASE("merge refuses a run with a hard-link cycle and leaves no output", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_cycle");
  const std::string in = kHostile + "results-link-cycle.h5";
  const std::string message = test::input_error_of([&] { sim::merge_results(dir + "/m.h5", {in, in}); });
  REQUIRE_THAT(message, Catch::Contains("/runs/q8_0/loop: object reached twice"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/m.h5"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/m.h5.partial"));
}

TEST_CASE("decompress refuses a stored scale of inf and writes nothing", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_inf_scale");
  const std::string message =
      test::input_error_of([&] { sim::decompress_to_trace(kHostile + "compressed-inf-scale.h5", dir + "/d.h5", 1); });
  REQUIRE_THAT(message, Catch::Contains("compressed-inf-scale.h5: /layers/0/v/0: stored block scale d 3 is inf"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/d.h5"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/d.h5.partial"));
}

TEST_CASE("an output lock is exclusive; the lock file goes with the process that created it", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_lock");
  const std::string out = dir + "/r.h5";
  {
    const sim::OutputLock first(out);
    REQUIRE(std::filesystem::exists(out + ".lock"));
    const std::string message = test::input_error_of([&] { sim::OutputLock second(out); });
    REQUIRE_THAT(message, Catch::Contains("r.h5: in use by another dgq process"));
    REQUIRE(std::filesystem::exists(out + ".lock"));  // the loser removes nothing
  }
  REQUIRE_FALSE(std::filesystem::exists(out + ".lock"));
  {  // a lock file this process did not create is used and left in place
    std::ofstream(out + ".lock") << "";
    { const sim::OutputLock again(out); }
    REQUIRE(std::filesystem::exists(out + ".lock"));
  }
  const std::string message = test::input_error_of([&] { sim::OutputLock none(dir + "/no/such/dir/r.h5"); });
  REQUIRE_THAT(message, Catch::Contains("cannot create the lock file"));
}

TEST_CASE("compress and decompress refuse more than 1024 threads", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_threads");
  test::write_tiny_trace(dir + "/t.h5", test::tiny_meta(DType::f16), DType::f16);
  const auto scheme = make_scheme("fp16");
  REQUIRE_THROWS_AS(sim::compress_trace(dir + "/t.h5", dir + "/c.h5", *scheme, 100000), ParameterError);
  REQUIRE_THROWS_AS(sim::decompress_to_trace(dir + "/t.h5", dir + "/d.h5", 100000), ParameterError);
}

TEST_CASE("fp16 keeps +-3e38 f32 inputs exactly; fp8-e4m3 maps them to +-448*scale, never inf", "[hostile]") {
  sim::TraceReader reader(kHostile + "trace-f32-3e38.h5");
  const auto layer = reader.read_layer(0);
  const ConstTensor k = layer.k.head(0);
  REQUIRE(load_element(k, 5 * k.channels + 3) == 3e38f);
  REQUIRE(load_element(k, 6 * k.channels + 4) == -3e38f);
  const std::string spec = GENERATE(as<std::string>{}, "fp16", "fp8-e4m3");
  CAPTURE(spec);
  const auto scheme = make_scheme(spec);
  const Compressed c = scheme->compress(k, TensorRole::key);
  Tensor3 out(k.dtype, 1, k.tokens, k.channels);
  scheme->decompress(c, out.head(0));
  for (std::int64_t i = 0; i < k.tokens * k.channels; ++i) REQUIRE(std::isfinite(load_element(out.head(0), i)));
  const float big = load_element(out.head(0), 5 * k.channels + 3);
  if (spec == "fp16")
    REQUIRE(big == 3e38f);
  else
    REQUIRE(std::fabs(big - 3e38f) <= 3e38f / 16);  // half an e4m3 ulp
  REQUIRE(load_element(out.head(0), 6 * k.channels + 4) == -big);
}

namespace {
// Open HDF5 identifiers by kind; equal before and after an operation = nothing leaked.
std::vector<hsize_t> open_ids() {
  std::vector<hsize_t> counts;
  for (H5I_type_t type : {H5I_FILE, H5I_GROUP, H5I_DATASET, H5I_DATASPACE, H5I_DATATYPE, H5I_ATTR, H5I_GENPROP_LST}) {
    hsize_t n = 0;
    H5Inmembers(type, &n);
    counts.push_back(n);
  }
  return counts;
}
}  // namespace

TEST_CASE("no HDF5 identifier is left open after a failed open, an error or a merge", "[hostile]") {
  const std::string dir = test::scratch_dir("hostile_leaks");
  test::write_tiny_trace(dir + "/t.h5", test::tiny_meta(DType::f16), DType::f16);
  const auto scheme = make_scheme("q8_0");
  sim::compress_trace(dir + "/t.h5", dir + "/c.h5", *scheme, 1);  // warms up libhdf5's own ids
  std::ofstream(dir + "/text.h5") << "not HDF5";
  const std::vector<char> bytes = test::file_bytes(dir + "/t.h5");
  std::ofstream(dir + "/cut.h5", std::ios::binary).write(bytes.data(), 4096);
  const std::vector<hsize_t> before = open_ids();
  const std::string which = GENERATE(as<std::string>{}, "not-hdf5", "cut", "huge-extent", "huge-q_pos", "tokens",
                                     "inf-scale", "cycle", "merge-duplicates");
  CAPTURE(which);
  try {
    if (which == "not-hdf5") sim::TraceReader r(dir + "/text.h5");
    if (which == "cut") sim::TraceReader r(dir + "/cut.h5");
    if (which == "huge-extent") sim::TraceReader r(kHostile + "trace-huge-extent.h5");
    if (which == "huge-q_pos") sim::TraceReader r(kHostile + "trace-huge-q_pos.h5");
    if (which == "tokens") sim::decompress_to_trace(kHostile + "compressed-tokens-2p60.h5", dir + "/d.h5", 1);
    if (which == "inf-scale") sim::decompress_to_trace(kHostile + "compressed-inf-scale.h5", dir + "/d.h5", 1);
    if (which == "cycle")
      sim::merge_results(dir + "/m.h5", {kHostile + "results-link-cycle.h5", kHostile + "results-link-cycle.h5"});
    if (which == "merge-duplicates") {  // the comparison of variable-length strings, then a clean close
      const auto r = sim::replay_trace(sim::TraceReader(dir + "/t.h5"), {scheme.get()}, {"q8_0"}, {});
      sim::add_runs(dir + "/r.h5", r, false);
      sim::merge_results(dir + "/m.h5", {dir + "/r.h5", dir + "/r.h5"});
    }
  } catch (const Error&) {}
  REQUIRE(open_ids() == before);
}
