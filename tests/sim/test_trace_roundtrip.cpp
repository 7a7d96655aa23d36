// Trace format v1: what the writer stores, the reader returns bit for bit.
#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>

#include <hdf5.h>

#include "dgq/errors.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
void require_same_tensor(const Tensor3& a, const Tensor3& b) {
  REQUIRE(a.dtype == b.dtype);
  REQUIRE(a.heads == b.heads);
  REQUIRE(a.tokens == b.tokens);
  REQUIRE(a.channels == b.channels);
  REQUIRE(a.storage == b.storage);
}
}  // namespace

TEST_CASE("trace round trip: zero probes and no optional datasets", "[trace]") {
  const std::string dir = test::scratch_dir("trace_no_probes");
  auto meta = test::tiny_meta(DType::f16, 17);
  meta.q_pos.clear();
  meta.seed.reset();
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f16);
  sim::TraceReader reader(dir + "/t.h5");
  REQUIRE(reader.meta().q_pos.empty());
  REQUIRE_FALSE(reader.meta().seed.has_value());
  REQUIRE(reader.meta().noise_mask.empty());
  REQUIRE(reader.meta().token_ids.empty());
  REQUIRE(reader.meta().text.empty());
  const auto layer = reader.read_layer(1);
  REQUIRE(layer.q.tokens == 0);
  require_same_tensor(layer.k, test::tiny_layer(meta, 1, DType::f16).k);
}

TEST_CASE("trace round trip is bit-exact for f16 and f32, metadata included", "[trace]") {
  const DType dtype = GENERATE(DType::f16, DType::f32);
  const DType q_dtype = GENERATE(DType::f16, DType::f32);
  CAPTURE(dtype_name(dtype), dtype_name(q_dtype));
  const std::string dir = test::scratch_dir("trace_roundtrip");
  auto meta = test::tiny_meta(dtype, 1500);  // more than one 1024-token chunk
  meta.token_ids.resize(meta.tokens);
  meta.noise_mask.resize(meta.tokens);
  for (std::int64_t t = 0; t < meta.tokens; ++t) {
    meta.token_ids[t] = static_cast<std::int32_t>(t * 7 % 128000);
    meta.noise_mask[t] = t % 9 == 4;
  }
  meta.text = "def f(x):\n    return x  # ünïcode";
  test::write_tiny_trace(dir + "/t.h5", meta, q_dtype);
  REQUIRE_FALSE(std::filesystem::exists(dir + "/t.h5.partial"));

  sim::TraceReader reader(dir + "/t.h5");
  test::require_same_meta(reader.meta(), meta);
  for (int layer = 0; layer < 2; ++layer) {
    const auto expected = test::tiny_layer(meta, layer, q_dtype);
    const auto data = reader.read_layer(layer);
    REQUIRE(data.layer == layer);
    require_same_tensor(data.k, expected.k);
    require_same_tensor(data.v, expected.v);
    require_same_tensor(data.q, expected.q);
  }
}

TEST_CASE("trace round trip keeps fp16 extremes and subnormals", "[trace]") {
  const std::string dir = test::scratch_dir("trace_extremes");
  auto meta = test::tiny_meta(DType::f16, 8);
  auto layer0 = test::tiny_layer(meta, 0, DType::f16);
  const std::uint16_t specials[] = {0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff, 0x8000, 0x0000, 0x3c00};
  for (std::size_t i = 0; i < std::size(specials); ++i) std::memcpy(layer0.k.storage.data() + 2 * i, &specials[i], 2);
  {
    sim::TraceWriter writer(dir + "/t.h5", meta);
    writer.write_layer(layer0);
    writer.write_layer(test::tiny_layer(meta, 1, DType::f16));
    writer.finish();
  }
  const auto data = sim::TraceReader(dir + "/t.h5").read_layer(0);
  require_same_tensor(data.k, layer0.k);
}

TEST_CASE("trace writer destroyed without finish leaves no file behind", "[trace]") {
  const std::string dir = test::scratch_dir("trace_abandoned");
  const auto meta = test::tiny_meta(DType::f16);
  {
    sim::TraceWriter writer(dir + "/t.h5", meta);
    writer.write_layer(test::tiny_layer(meta, 0, DType::f16));
    REQUIRE(std::filesystem::exists(dir + "/t.h5.partial"));
  }
  REQUIRE_FALSE(std::filesystem::exists(dir + "/t.h5.partial"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/t.h5"));
}

TEST_CASE("trace writer refuses to finish with layers missing and rejects bad layers", "[trace]") {
  const std::string dir = test::scratch_dir("trace_writer_checks");
  const auto meta = test::tiny_meta(DType::f16);
  sim::TraceWriter writer(dir + "/t.h5", meta);
  writer.write_layer(test::tiny_layer(meta, 0, DType::f16));
  REQUIRE_THROWS_WITH(writer.finish(), Catch::Contains("1 of 2 layers"));
  REQUIRE_THROWS_WITH(writer.write_layer(test::tiny_layer(meta, 0, DType::f16)), Catch::Contains("written twice"));
  REQUIRE_THROWS_AS(writer.write_layer(test::tiny_layer(meta, 2, DType::f16)), ParameterError);
  auto wrong_dtype = test::tiny_layer(meta, 1, DType::f16);
  wrong_dtype.k = Tensor3(DType::f32, meta.num_kv_heads, meta.tokens, meta.head_dim);
  REQUIRE_THROWS_WITH(writer.write_layer(wrong_dtype), Catch::Contains("dtype"));
  auto wrong_shape = test::tiny_layer(meta, 1, DType::f16);
  wrong_shape.v = Tensor3(DType::f16, meta.num_kv_heads, meta.tokens - 1, meta.head_dim);
  REQUIRE_THROWS_WITH(writer.write_layer(wrong_shape), Catch::Contains("/layers/1/v: expected shape [2, 40, 8]"));
}

TEST_CASE("trace writer rejects bad metadata", "[trace]") {
  const std::string dir = test::scratch_dir("trace_bad_meta");
  auto meta = test::tiny_meta(DType::f16);
  meta.q_pos = {5, 5};
  REQUIRE_THROWS_WITH(sim::TraceWriter(dir + "/t.h5", meta), Catch::Contains("increasing"));
  meta = test::tiny_meta(DType::f16);
  meta.q_pos = {40};
  REQUIRE_THROWS_WITH(sim::TraceWriter(dir + "/t.h5", meta), Catch::Contains("outside [0, 40)"));
  meta = test::tiny_meta(DType::f16);
  meta.num_q_heads = 3;
  REQUIRE_THROWS_AS(sim::TraceWriter(dir + "/t.h5", meta), ParameterError);
  REQUIRE(std::filesystem::is_empty(dir));
}

TEST_CASE("trace reader rejects a layer index out of range", "[trace]") {
  const std::string dir = test::scratch_dir("trace_layer_range");
  test::write_tiny_trace(dir + "/t.h5", test::tiny_meta(DType::f16), DType::f16);
  sim::TraceReader reader(dir + "/t.h5");
  REQUIRE_THROWS_WITH(reader.read_layer(2), Catch::Contains("layer 2 is outside [0, 2)"));
  REQUIRE_THROWS_AS(reader.read_layer(-1), InputError);
}

TEST_CASE("the trace writer stores K and V contiguous and unfiltered; deflated traces still read", "[trace]") {
  // Why unfiltered: inflating K/V dominated `dgq compress` (docs/benchmarks.md, trace-format.md).
  const std::string dir = test::scratch_dir("trace_unfiltered");
  const auto meta = test::tiny_meta(DType::f16, 40);
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f16);
  const hid_t file = H5Fopen((dir + "/t.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  for (const char* name : {"/layers/0/k", "/layers/0/v"}) {
    const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    const hid_t dcpl = H5Dget_create_plist(ds);
    CHECK(H5Pget_layout(dcpl) == H5D_CONTIGUOUS);
    CHECK(H5Pget_nfilters(dcpl) == 0);
    H5Pclose(dcpl);
    H5Dclose(ds);
  }
  H5Fclose(file);
  // The shipped traces were written with shuffle + deflate (tools/export-trace.py) and still read.
  sim::TraceReader shipped(std::string(DGQ_SOURCE_DIR) + "/data/smollm2-code-1k.h5");
  CHECK(shipped.read_layer(0).k.tokens == shipped.meta().tokens);
}
