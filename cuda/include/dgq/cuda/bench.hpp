#pragma once
// GPU benchmarks of DGQ compress/decompress, run by `dgq-bench --device cuda`.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace dgq::cuda {

struct BenchOptions {
  std::vector<std::int64_t> tokens{4096, 32768, 131072};  // Llama-3-8B-shaped layer
  int kv_heads = 8;
  int head_dim = 128;
  int repetitions = 20;   // timed calls per figure (median reported), after warm-up; at least 20 are run
  std::string json_path;  // if not empty, also write the results as JSON here
};

// Prints a table (time per call, GB/s of bytes the kernels must move, device-to-device copy
// GB/s measured in the same run, fraction of it) and returns a process exit code
// (77 when no CUDA device is present).
int run_benchmarks(const BenchOptions& options, std::ostream& out);

}  // namespace dgq::cuda
