// bf16 traces (docs/trace-format.md): stored as uint16 bits with the dataset
// attribute dtype = "bf16"; read back bit for bit, and usable end to end (compress,
// decompress, replay).
#include <catch2/catch.hpp>

#include <hdf5.h>

#include "dgq/errors.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
// The stored HDF5 type class/size/sign of a dataset, and its "dtype" attribute if any.
struct StoredType {
  H5T_class_t cls;
  std::size_t size;
  H5T_sign_t sign;
  bool has_marker;
};

StoredType stored_type(const std::string& path, const std::string& dataset) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  const hid_t type = H5Dget_type(ds);
  const StoredType out{H5Tget_class(type), H5Tget_size(type), H5Tget_sign(type), H5Aexists(ds, "dtype") > 0};
  H5Tclose(type);
  H5Dclose(ds);
  H5Fclose(file);
  return out;
}

// Removes the bf16 marker of one dataset, leaving a plain uint16 dataset.
void drop_marker(const std::string& path, const std::string& dataset) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  H5Adelete(ds, "dtype");
  H5Dclose(ds);
  H5Fclose(file);
}
}  // namespace

TEST_CASE("bf16 trace: stored as uint16 with dtype='bf16', read back bit for bit", "[trace][bf16]") {
  const std::string dir = test::scratch_dir("trace_bf16");
  const auto meta = test::tiny_meta(DType::bf16, 1100);  // more than one chunk
  test::write_tiny_trace(dir + "/t.h5", meta, DType::bf16);
  const StoredType k = stored_type(dir + "/t.h5", "/layers/1/k");
  REQUIRE(k.cls == H5T_INTEGER);
  REQUIRE(k.size == 2);
  REQUIRE(k.sign == H5T_SGN_NONE);
  REQUIRE(k.has_marker);
  sim::TraceReader reader(dir + "/t.h5");
  REQUIRE(reader.meta().kv_dtype == DType::bf16);
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    const auto expected = test::tiny_layer(meta, layer, DType::bf16);
    const auto got = reader.read_layer(layer);
    REQUIRE(got.k.dtype == DType::bf16);
    REQUIRE(got.q.dtype == DType::bf16);
    REQUIRE(got.k.storage == expected.k.storage);
    REQUIRE(got.v.storage == expected.v.storage);
    REQUIRE(got.q.storage == expected.q.storage);
  }
}

TEST_CASE("bf16 trace: a uint16 dataset without the marker is rejected, naming it", "[trace][bf16]") {
  const std::string dir = test::scratch_dir("trace_bf16_unmarked");
  const auto meta = test::tiny_meta(DType::bf16);
  test::write_tiny_trace(dir + "/t.h5", meta, DType::bf16);
  drop_marker(dir + "/t.h5", "/layers/1/v");
  const std::string message = test::input_error_of([&] { sim::TraceReader reader(dir + "/t.h5"); });
  REQUIRE_THAT(message, Catch::Contains("t.h5: /layers/1/v: unsupported dtype unsigned integer (2 bytes)"));
}

TEST_CASE("bf16 trace: a non-finite bf16 value is reported with its index", "[trace][bf16]") {
  const std::string dir = test::scratch_dir("trace_bf16_nan");
  const auto meta = test::tiny_meta(DType::bf16);
  sim::TraceWriter writer(dir + "/t.h5", meta);
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    auto data = test::tiny_layer(meta, layer, DType::bf16);
    if (layer == 1) store_element(data.v.head(1), 5 * meta.head_dim + 3, std::numeric_limits<float>::infinity());
    writer.write_layer(data);
  }
  writer.finish();
  sim::TraceReader reader(dir + "/t.h5");
  const std::string message = test::input_error_of([&] { (void)reader.read_layer(1); });
  REQUIRE_THAT(message, Catch::Contains("/layers/1/v: non-finite value inf at head 1, token 5, channel 3"));
}

TEST_CASE("bf16 trace: compress and decompress with fp16 give the same bytes; replay runs", "[trace][bf16]") {
  const std::string dir = test::scratch_dir("trace_bf16_end_to_end");
  auto meta = test::tiny_meta(DType::bf16, 96);
  meta.head_dim = 64;
  test::write_tiny_trace(dir + "/t.h5", meta, DType::bf16);
  const auto fp16 = make_scheme("fp16");
  sim::compress_trace(dir + "/t.h5", dir + "/c.h5", *fp16, 1);
  sim::decompress_to_trace(dir + "/c.h5", dir + "/d.h5", 1);
  sim::TraceReader original(dir + "/t.h5"), restored(dir + "/d.h5");
  REQUIRE(restored.meta().kv_dtype == DType::bf16);
  for (int layer = 0; layer < meta.num_layers; ++layer) {
    REQUIRE(restored.read_layer(layer).k.storage == original.read_layer(layer).k.storage);
    REQUIRE(restored.read_layer(layer).v.storage == original.read_layer(layer).v.storage);
  }
  const auto q8 = make_scheme("q8_0");
  const auto runs = sim::replay_trace(original, {fp16.get(), q8.get()}, {"fp16", "q8_0"}, {});
  REQUIRE(runs.size() == 2);
  REQUIRE(runs[0].layers.size() == 2);
}
