// What the isolation of hostile HDF5 costs (docs/robustness.md, "Hostile HDF5 isolated"): for each
// file, the median over interleaved rounds of
//   open   plain H5Fopen + H5Fclose in this process,
//   check  the metadata walk in a forked child (check_metadata_isolated, never remembered),
//   work   what a command does with a trace anyway: TraceReader opens it and reads every layer,
// and the ratio check / work. Each open of a file pays `check` once per process (a file that
// passed is remembered while unchanged). Not a test: a ratio measured in one run.
//   dgq-open-bench [--rounds N] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"
#include "dgq/sim/files/trace.hpp"

namespace {
using Clock = std::chrono::steady_clock;
namespace h5 = dgq::sim::h5;

template <class F>
double milliseconds(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void plain_open(const std::string& path) {
  h5::silence_hdf5_errors();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id >= 0) H5Fclose(id);
}

void isolated_check(const std::string& path) {
  h5::check_metadata_isolated(
      path, [&] { return H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT); }, false);
}

void read_trace(const std::string& path) {
  const dgq::sim::TraceReader reader(path);
  for (int layer = 0; layer < reader.meta().num_layers; ++layer) (void)reader.read_layer(layer);
}
}  // namespace

int main(int argc, char** argv) {
  int rounds = 21;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else
      files.push_back(arg);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: dgq-open-bench [--rounds N] TRACE.h5...\n");
    return 2;
  }
  std::printf("%-44s %10s %10s %10s %12s\n", "file", "open ms", "check ms", "work ms", "check/work");
  for (const std::string& path : files) {
    std::vector<double> open, check, work;
    for (int r = 0; r < rounds; ++r) {  // interleaved, so load changes hit all three alike
      open.push_back(milliseconds([&] { plain_open(path); }));
      check.push_back(milliseconds([&] { isolated_check(path); }));
      work.push_back(milliseconds([&] { read_trace(path); }));
    }
    const std::string name = path.substr(path.find_last_of('/') + 1);
    std::printf("%-44s %10.3f %10.3f %10.3f %12.3f\n", name.c_str(), median(open), median(check), median(work),
                median(check) / median(work));
  }
  return 0;
}
