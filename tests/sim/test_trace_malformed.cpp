// Malformed traces: each defect gives dgq::InputError naming the file, the dataset and,
// for values, the index.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;
namespace h5 = dgq::sim::h5;

namespace {
std::string make_valid(const std::string& dir, DType dtype = DType::f16) {
  const std::string path = dir + "/t.h5";
  test::write_tiny_trace(path, test::tiny_meta(dtype), DType::f16);
  return path;
}

// Replaces dataset `name` with one of the given type and shape (zeros).
void replace_dataset(const std::string& path, const std::string& name, hid_t type, std::vector<hsize_t> shape) {
  h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), h5::Handle::Kind::file);
  REQUIRE(file.valid());
  REQUIRE(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT) >= 0);
  h5::Handle ds = h5::create_dataset(file.get(), name, type, shape, {}, "test");
  std::size_t count = 1;
  for (auto d : shape) count *= d;
  std::vector<std::byte> zeros(count * H5Tget_size(type));
  h5::write_all(ds.get(), type, zeros.data(), "test");
}

void require_input_error(const std::string& path, const std::string& fragment) {
  REQUIRE_THAT(test::input_error_of([&] { sim::TraceReader reader(path); }), Catch::Contains(fragment));
}
}  // namespace

TEST_CASE("malformed trace: missing file", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_missing");
  require_input_error(dir + "/nope.h5", dir + "/nope.h5: no such file");
}

TEST_CASE("malformed trace: not an HDF5 file", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_text");
  std::ofstream(dir + "/t.h5") << "this is plain text, not HDF5\n";
  require_input_error(dir + "/t.h5", dir + "/t.h5: not an HDF5 file or truncated");
}

TEST_CASE("malformed trace: an empty file", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_empty");
  std::ofstream(dir + "/t.h5").flush();
  require_input_error(dir + "/t.h5", "not an HDF5 file or truncated");
}

TEST_CASE("malformed trace: a truncated HDF5 file", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_truncated");
  const std::string path = make_valid(dir);
  const auto size = std::filesystem::file_size(path);
  for (const auto keep : {size / 2, size - 1, std::uintmax_t{600}}) {
    CAPTURE(size, keep);
    std::filesystem::copy_file(path, dir + "/cut.h5", std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(dir + "/cut.h5", keep);
    require_input_error(dir + "/cut.h5", "not an HDF5 file or truncated");
  }
}

TEST_CASE("malformed trace: wrong format attribute and version", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_format");
  const std::string path = make_valid(dir);
  {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), h5::Handle::Kind::file);
    H5Adelete(file.get(), "version");
    h5::write_int_attribute(file.get(), "version", 2);
  }
  require_input_error(path, "unsupported version 2");
  {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), h5::Handle::Kind::file);
    H5Adelete(file.get(), "format");
    h5::write_string_attribute(file.get(), "format", "something-else");
  }
  require_input_error(path, "attribute 'format' is 'something-else', expected 'dgq-trace'");
  {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), h5::Handle::Kind::file);
    H5Adelete(file.get(), "format");
  }
  require_input_error(path, "attribute 'format' is missing");
}

TEST_CASE("malformed trace: a missing layer dataset", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_missing_ds");
  const std::string path = make_valid(dir);
  {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), h5::Handle::Kind::file);
    REQUIRE(H5Ldelete(file.get(), "/layers/1/v", H5P_DEFAULT) >= 0);
  }
  require_input_error(path, path + ": /layers/1/v: dataset is missing");
}

TEST_CASE("malformed trace: wrong rank", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_rank");
  const std::string path = make_valid(dir);
  h5::Handle half = h5::half_type();
  replace_dataset(path, "/layers/1/k", half.get(), {2, 40 * 8});
  require_input_error(path, path + ": /layers/1/k: expected rank 3, found rank 2 [2, 320]");
}

TEST_CASE("malformed trace: wrong shape names expected and found", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_shape");
  const std::string path = make_valid(dir);
  h5::Handle half = h5::half_type();
  replace_dataset(path, "/layers/1/v", half.get(), {2, 39, 8});
  require_input_error(path, path + ": /layers/1/v: expected shape [2, 40, 8], found [2, 39, 8]");
}

TEST_CASE("malformed trace: integer dtype for k", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_dtype");
  const std::string path = make_valid(dir);
  replace_dataset(path, "/layers/0/k", H5T_STD_I32LE, {2, 40, 8});
  require_input_error(path, path + ": /layers/0/k: unsupported dtype integer (4 bytes)");
}

TEST_CASE("malformed trace: mixed k/v dtypes", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_mixed");
  const std::string path = make_valid(dir);
  replace_dataset(path, "/layers/1/v", H5T_IEEE_F32LE, {2, 40, 8});
  require_input_error(path, "/layers/1/v: dtype f32 differs from /layers/0/k (f16)");
}

TEST_CASE("malformed trace: q_pos out of range or not increasing", "[trace][malformed]") {
  const std::string dir = test::scratch_dir("malformed_qpos");
  const std::string path = make_valid(dir);
  auto rewrite = [&](std::vector<std::int32_t> q_pos) {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), h5::Handle::Kind::file);
    H5Ldelete(file.get(), "/q_pos", H5P_DEFAULT);
    h5::write_vector(file.get(), "/q_pos", q_pos, "test");
  };
  rewrite({3, 20, 40});
  require_input_error(path, "/q_pos: value 40 at index 2 is outside [0, 40)");
  rewrite({3, 3, 39});
  require_input_error(path, "/q_pos: not increasing at index 1");
}

TEST_CASE("malformed trace: NaN and Inf name dataset, head, token and channel", "[trace][malformed]") {
  const DType dtype = GENERATE(DType::f16, DType::f32);
  const std::string dir = test::scratch_dir("malformed_nan");
  auto meta = test::tiny_meta(dtype);
  auto layer1 = test::tiny_layer(meta, 1, DType::f16);
  store_element(layer1.v.head(1), 17 * 8 + 5, std::nanf(""));
  store_element(layer1.k.head(0), 3 * 8 + 2, INFINITY);
  const std::string path = dir + "/t.h5";
  {
    sim::TraceWriter writer(path, meta);
    writer.write_layer(test::tiny_layer(meta, 0, DType::f16));
    writer.write_layer(layer1);
    writer.finish();
  }
  sim::TraceReader reader(path);  // opening checks metadata only
  REQUIRE_NOTHROW(reader.read_layer(0));
  REQUIRE_THAT(test::input_error_of([&] { reader.read_layer(1); }),
               Catch::Contains(path + ": /layers/1/k: non-finite value inf at head 0, token 3, channel 2"));
  store_element(layer1.k.head(0), 3 * 8 + 2, 1.0f);
  std::filesystem::remove(path);
  {
    sim::TraceWriter writer(path, meta);
    writer.write_layer(test::tiny_layer(meta, 0, DType::f16));
    writer.write_layer(layer1);
    writer.finish();
  }
  REQUIRE_THAT(test::input_error_of([&] { sim::TraceReader(path).read_layer(1); }),
               Catch::Contains("/layers/1/v: non-finite value nan at head 1, token 17, channel 5"));
}
