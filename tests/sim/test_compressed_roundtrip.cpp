// Compressed files: what dgq compress stores is exactly Scheme::compress's output, what dgq
// decompress returns is exactly Scheme::decompress's, for any thread count.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

TEST_CASE("compressed file: units equal Scheme::compress, decompress equals Scheme::decompress", "[compressed]") {
  const std::string spec =
      GENERATE(as<std::string>{}, "dgq", "dgq:markers=bitmap,granularity=segment-channel",
               "dgq:markers=inband,win=8,group_ratio=0.9", "q8_0", "fp16", "int4-group64", "kivi-2", "fp8-e4m3");
  const DType dtype = GENERATE(DType::f16, DType::f32);
  CAPTURE(spec, dtype_name(dtype));
  const std::string dir = test::scratch_dir("compressed_roundtrip");
  auto meta = test::tiny_meta(dtype, 200);
  meta.head_dim = 64;  // group64 and q8_0 need whole blocks
  meta.noise_mask.assign(200, 0);
  meta.noise_mask[17] = 1;
  meta.text = "round trip";
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f32);
  const auto scheme = make_scheme(spec);

  const auto summary = sim::compress_trace(dir + "/t.h5", dir + "/c.h5", *scheme, 2);
  REQUIRE_FALSE(std::filesystem::exists(dir + "/c.h5.partial"));
  REQUIRE(summary.scheme == scheme->spec());
  REQUIRE(summary.input_bytes == 2u * 2 * 2 * 200 * 64 * dtype_size(dtype));

  sim::CompressedReader reader(dir + "/c.h5");
  REQUIRE(reader.scheme() == scheme->spec());
  REQUIRE(reader.meta().tokens == 200);
  REQUIRE(reader.meta().kv_dtype == dtype);
  REQUIRE(reader.meta().noise_mask == meta.noise_mask);
  REQUIRE(reader.meta().text == "round trip");

  sim::decompress_to_trace(dir + "/c.h5", dir + "/d.h5", 2);
  sim::TraceReader original(dir + "/t.h5"), restored(dir + "/d.h5");
  REQUIRE(restored.meta().q_pos == meta.q_pos);
  REQUIRE(restored.meta().kv_dtype == dtype);
  std::uint64_t stored = 0;
  for (int layer = 0; layer < 2; ++layer) {
    const auto in = original.read_layer(layer);
    const auto out = restored.read_layer(layer);
    REQUIRE(out.q.storage == in.q.storage);
    for (TensorRole role : {TensorRole::key, TensorRole::value}) {
      for (int head = 0; head < 2; ++head) {
        CAPTURE(layer, role_name(role), head);
        const Tensor3& source = role == TensorRole::key ? in.k : in.v;
        const Compressed direct = scheme->compress(source.head(head), role);
        const Compressed stored_unit = reader.read_unit(layer, role, head);
        REQUIRE(stored_unit.parts == direct.parts);
        REQUIRE(stored_unit.segment_edges() == direct.segment_edges());
        REQUIRE(stored_unit.tokens == direct.tokens);
        REQUIRE(stored_unit.dtype == direct.dtype);
        stored += direct.total_bytes();
        Tensor3 expected(dtype, 1, 200, 64);
        scheme->decompress(direct, expected.head(0));
        const Tensor3& got = role == TensorRole::key ? out.k : out.v;
        REQUIRE(std::memcmp(got.head(head).data, expected.storage.data(), expected.storage.size()) == 0);
      }
    }
  }
  REQUIRE(summary.stored_bytes == stored);
}

TEST_CASE("compressed file: identical bytes for 1 and 2 threads", "[compressed]") {
  const std::string dir = test::scratch_dir("compressed_threads");
  auto meta = test::tiny_meta(DType::f16, 300);
  test::write_tiny_trace(dir + "/t.h5", meta, DType::f16);
  const auto scheme = make_scheme("dgq:win=8");
  sim::compress_trace(dir + "/t.h5", dir + "/one.h5", *scheme, 1);
  sim::compress_trace(dir + "/t.h5", dir + "/two.h5", *scheme, 2);
  const bool same = test::file_bytes(dir + "/one.h5") == test::file_bytes(dir + "/two.h5");
  REQUIRE(same);
  sim::decompress_to_trace(dir + "/one.h5", dir + "/d1.h5", 1);
  sim::decompress_to_trace(dir + "/one.h5", dir + "/d2.h5", 2);
  const bool same_restored = test::file_bytes(dir + "/d1.h5") == test::file_bytes(dir + "/d2.h5");
  REQUIRE(same_restored);
}

TEST_CASE("compressed file: errors leave no output and name the file", "[compressed]") {
  const std::string dir = test::scratch_dir("compressed_errors");
  const auto scheme = make_scheme("dgq");
  REQUIRE_THAT(test::input_error_of([&] { sim::compress_trace(dir + "/missing.h5", dir + "/c.h5", *scheme); }),
               Catch::Contains("missing.h5: no such file"));
  // A trace given to the compressed reader, and a compressed file given to the trace reader.
  test::write_tiny_trace(dir + "/t.h5", test::tiny_meta(DType::f16), DType::f16);
  REQUIRE_THAT(test::input_error_of([&] { sim::CompressedReader r(dir + "/t.h5"); }),
               Catch::Contains("attribute 'format' is 'dgq-trace', expected 'dgq-compressed'"));
  sim::compress_trace(dir + "/t.h5", dir + "/c.h5", *scheme);
  REQUIRE(sim::is_compressed_file(dir + "/c.h5"));
  REQUIRE_FALSE(sim::is_compressed_file(dir + "/t.h5"));
  REQUIRE_THAT(test::input_error_of([&] { sim::TraceReader r(dir + "/c.h5"); }),
               Catch::Contains("expected 'dgq-trace'"));
  // A truncated compressed file: decompress fails and leaves nothing behind.
  std::filesystem::copy_file(dir + "/c.h5", dir + "/cut.h5");
  std::filesystem::resize_file(dir + "/cut.h5", std::filesystem::file_size(dir + "/c.h5") / 2);
  REQUIRE_THAT(test::input_error_of([&] { sim::decompress_to_trace(dir + "/cut.h5", dir + "/d.h5"); }),
               Catch::Contains("not an HDF5 file or truncated"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/d.h5"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/d.h5.partial"));
  REQUIRE_THROWS_AS(sim::compress_trace(dir + "/t.h5", dir + "/e.h5", *scheme, -1), ParameterError);
}
