// Writes the input files of the CLI error tests into the folder given as argv[1]:
//   good.h5 (a small synthetic trace), text.h5 (not HDF5), truncated.h5 (good.h5 cut in half),
//   wrong-rank.h5 (/layers/1/k of rank 2), wrong-dtype.h5 (/layers/0/k int32),
//   nan.h5 (a NaN at /layers/1/v head 1, token 5, channel 3); prov/ (provenance_fixtures.hpp).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "provenance_fixtures.hpp"

using namespace dgq;
namespace h5 = dgq::sim::h5;

namespace {
sim::SynthOptions small() {
  return {.layers = 2, .q_heads = 4, .kv_heads = 2, .head_dim = 16, .tokens = 64, .probes = 4};
}

void replace_dataset(const std::string& path, const std::string& name, hid_t type, const std::vector<hsize_t>& shape) {
  h5::Handle file(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path), h5::Handle::Kind::file);
  h5::check_status(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT), path + ": delete " + name);
  h5::Handle ds = h5::create_dataset(file.get(), name, type, shape, {}, path + ": " + name);
  std::size_t count = 1;
  for (auto d : shape) count *= d;
  std::vector<std::byte> zeros(count * H5Tget_size(type));
  h5::write_all(ds.get(), type, zeros.data(), path + ": " + name);
}

void copy(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_cli_fixtures DIR\n";
    return 2;
  }
  try {
    const std::string dir = argv[1];
    const auto options = small();
    const auto kv_heads = static_cast<hsize_t>(options.kv_heads);
    const auto tokens = static_cast<hsize_t>(options.tokens);
    const auto head_dim = static_cast<hsize_t>(options.head_dim);
    std::filesystem::create_directories(dir);
    const std::string good = dir + "/good.h5";
    std::filesystem::remove(good);
    sim::write_synthetic_trace(options, good);
    std::ofstream(dir + "/text.h5") << "plain text, not HDF5\n";
    copy(good, dir + "/truncated.h5");
    std::filesystem::resize_file(dir + "/truncated.h5", std::filesystem::file_size(good) / 2);
    copy(good, dir + "/wrong-rank.h5");
    h5::Handle half = h5::half_type();
    replace_dataset(dir + "/wrong-rank.h5", "/layers/1/k", half.get(), {kv_heads, tokens * head_dim});
    copy(good, dir + "/wrong-dtype.h5");
    replace_dataset(dir + "/wrong-dtype.h5", "/layers/0/k", H5T_STD_I32LE, {kv_heads, tokens, head_dim});

    const std::string nan = dir + "/nan.h5";
    std::filesystem::remove(nan);
    sim::TraceWriter writer(nan, sim::synthetic_meta(options));
    writer.write_layer(sim::synthesize_layer(options, 0));
    auto layer1 = sim::synthesize_layer(options, 1);
    store_element(layer1.v.head(1), 5 * options.head_dim + 3, std::nanf(""));
    writer.write_layer(layer1);
    writer.finish();
    test::write_provenance_fixtures(dir);
  } catch (const std::exception& e) {
    std::cerr << "make_cli_fixtures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
