// The optional root attribute `layer_ids` (the recorded model's index of each stored layer):
// absent stays empty, written ones read back, malformed ones are an InputError naming it.
#include <catch2/catch.hpp>

#include <hdf5.h>

#include "dgq/errors.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
// Rewrites the root attribute `layer_ids` of an existing file with these values.
void overwrite_layer_ids(const std::string& path, const std::vector<long long>& ids) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(file >= 0);
  if (H5Aexists(file, "layer_ids") > 0) REQUIRE(H5Adelete(file, "layer_ids") >= 0);
  const hsize_t n = ids.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t attr = H5Acreate2(file, "layer_ids", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Awrite(attr, H5T_NATIVE_LLONG, ids.data()) >= 0);
  H5Aclose(attr);
  H5Sclose(space);
  H5Fclose(file);
}
}  // namespace

TEST_CASE("trace layer_ids: absent gives an empty list", "[trace]") {
  const std::string path = test::scratch_dir("trace_layer_ids_absent") + "/t.h5";
  test::write_tiny_trace(path, test::tiny_meta(DType::f16), DType::f16);
  REQUIRE(sim::TraceReader(path).meta().layer_ids.empty());
}

TEST_CASE("trace layer_ids: written by TraceWriter, read back in order", "[trace]") {
  const std::string path = test::scratch_dir("trace_layer_ids_roundtrip") + "/t.h5";
  auto meta = test::tiny_meta(DType::f16);
  meta.layer_ids = {7, 29};
  test::write_tiny_trace(path, meta, DType::f16);
  REQUIRE(sim::TraceReader(path).meta().layer_ids == std::vector<int>{7, 29});
}

TEST_CASE("trace layer_ids: wrong length or a negative index is an error naming the attribute", "[trace]") {
  const std::string dir = test::scratch_dir("trace_layer_ids_bad");
  const std::string path = dir + "/t.h5";
  test::write_tiny_trace(path, test::tiny_meta(DType::f16), DType::f16);  // 2 layers
  overwrite_layer_ids(path, {0, 7, 15});
  REQUIRE_THROWS_MATCHES(
      sim::TraceReader(path), InputError,
      Catch::Matchers::Message(path + ": attribute 'layer_ids' has 3 entries for 2 layers (num_layers)"));
  overwrite_layer_ids(path, {0, -1});
  REQUIRE_THROWS_WITH(sim::TraceReader(path), Catch::Contains("'layer_ids'[1] = -1 is out of range"));
  overwrite_layer_ids(path, {3, 5});
  REQUIRE(sim::TraceReader(path).meta().layer_ids == std::vector<int>{3, 5});
}
