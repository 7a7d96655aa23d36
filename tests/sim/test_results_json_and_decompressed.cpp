// The --json summary and the --save-decompressed tensors of a run.
#include <catch2/catch.hpp>

#include <hdf5.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/files/results/run_summary.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "test_replay_support.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

std::vector<sim::RunResult> replay(const std::vector<const Scheme*>& schemes, const std::vector<std::string>& names,
                                   bool keep) {
  const auto meta = test::tiny_meta(DType::f16, 40);
  sim::ReplayOptions o;
  o.keep_decompressed = keep;
  o.layers = {1};
  sim::Replayer r(meta, "t.h5", schemes, names, o);
  r.add_layer(test::tiny_layer(meta, 1, DType::f32));
  return r.finish();
}

}  // namespace

TEST_CASE("the JSON summary is valid JSON with one entry per run and quoted infinities") {
  const auto dir = test::scratch_dir("results-json");
  const auto fp16 = make_scheme("fp16");
  const test::DamageScheme damage(20, 0.5f);
  const auto runs = replay({fp16.get(), &damage}, {"lossless", "damaged"}, false);
  sim::write_json_summary(dir + "/s.json", runs);
  std::ifstream in(dir + "/s.json");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  CHECK(s.find("\"format\" : \"dgq-results-summary\"") != std::string::npos);
  CHECK(s.find("\"name\" : \"lossless\"") != std::string::npos);
  CHECK(s.find("\"name\" : \"damaged\"") != std::string::npos);
  CHECK(s.find(": \"Infinity\"") != std::string::npos);  // K SNR of the lossless run, quoted
  CHECK(s.find(": Infinity") == std::string::npos);      // bare Infinity/NaN would not be JSON
  CHECK(s.find(": NaN") == std::string::npos);
  CHECK_FALSE(std::ifstream(dir + "/s.json.partial").good());
}

TEST_CASE("saved decompressed tensors are the scheme's output, in the trace's dtype") {
  const auto dir = test::scratch_dir("results-decompressed");
  const test::DamageScheme damage(20, 0.5f);
  const auto runs = replay({&damage}, {"d"}, true);
  REQUIRE(runs[0].decompressed.size() == 1);
  const auto& dec = runs[0].decompressed[0];
  CHECK(dec.layer == 1);
  // Reference: the scheme applied to head 1 of layer 1 directly.
  const auto meta = test::tiny_meta(DType::f16, 40);
  const auto layer = test::tiny_layer(meta, 1, DType::f32);
  Tensor3 expect(DType::f16, 1, 40, 8);
  damage.decompress(damage.compress(layer.v.head(1), TensorRole::value), expect.head(0));
  CHECK(std::memcmp(dec.v.head(1).data, expect.head(0).data, expect.head_bytes()) == 0);
  sim::add_runs(dir + "/r.h5", runs, false);
  const hid_t f = H5Fopen((dir + "/r.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(f, "/runs/d/decompressed/1/v", H5P_DEFAULT);
  REQUIRE(ds >= 0);
  std::vector<std::uint16_t> stored(2 * 40 * 8);
  const hid_t file_type = H5Dget_type(ds);  // the stored half type: read the raw bits
  H5Dread(ds, file_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored.data());
  H5Tclose(file_type);
  CHECK(std::memcmp(stored.data() + 40 * 8, expect.head(0).data, expect.head_bytes()) == 0);
  H5Dclose(ds);
  H5Fclose(f);
}
