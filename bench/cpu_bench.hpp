#pragma once
// CPU throughput of DGQ and the baselines on one KV layer (heads x tokens x channels, fp16).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace dgq::bench {

struct CpuOptions {
  std::int64_t tokens = 32768;
  int heads = 8;
  int head_dim = 128;
  int repetitions = 7;  // timed runs per figure; the median is reported
  std::vector<int> threads{1, 2};
  std::vector<std::string> schemes;  // scheme specs; empty = "dgq (direct)" + every family
};

struct Figure {
  std::string what;  // "memcpy", "dgq", "q8_0", ...
  std::string op;    // "copy", "compress", "decompress"
  int threads = 1;
  double seconds = 0;      // median wall time
  double cpu_seconds = 0;  // median CPU time of the process (all threads): robust on a shared machine
  double input_bytes = 0;  // fp16 bytes of the layer
  double moved_bytes = 0;  // bytes the operation must read + write at least
};

// Runs every figure and returns them (memcpy first for each thread count).
std::vector<Figure> run_cpu(const CpuOptions& o, std::ostream& log);

// Table with GB/s of input, G elements/s, GB/s moved and the fraction of memcpy's GB/s.
void print_table(const std::vector<Figure>& figures, std::ostream& out);
// The same as JSON, written to path via path.partial + rename.
void write_json(const std::vector<Figure>& figures, const std::string& path);

}  // namespace dgq::bench
