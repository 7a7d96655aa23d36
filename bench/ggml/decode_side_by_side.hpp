#pragma once
// One decode step of attention timed in one process: ggml's ggml_flash_attn_ext on the CPU with
// f16, q8_0, q4_0 and iq4_nl K/V, dgq's decode attention on stored blocks (dgq/cpu/
// decode_attention.hpp) on the same bytes and on the codes of DGQ v1, dgq2 and KIVI (types ggml
// lacks), and memcpy of each cache's bytes (docs/benchmarks.md,
// "Decode attention next to ggml"). Rounds are interleaved as in side_by_side.hpp; medians.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace dgq::ggml_bench {

struct DecodeOptions {
  int kv_heads = 8;  // Llama-3.1-8B's layer: 8 KV heads, GQA 4, head_dim 128
  int group = 4;
  std::vector<int> head_dims{64, 128, 256};
  std::vector<std::int64_t> lengths{4096, 16384, 65536, 131072};
  // Lengths timed for head_dim 128 only, for the Llama-3.1-8B latency table (8K, 32K, 128K).
  std::vector<std::int64_t> llama_lengths{8192, 32768};
  int rounds = 5;
  std::vector<int> threads{1, 2};
  std::string table;
  std::string command;
  std::string commit;  // of the tree the harness was built from (run.sh passes it)
};

struct DecodeResult {
  std::string impl;  // "ggml", "dgq", "memcpy"
  std::string type;  // "f16", "q8_0", "q4_0", "iq4_nl", "q4_0+rot", "dgq", "dgq2-k4v3", "kivi-4", ...
  int head_dim = 0;
  std::int64_t tokens = 0;
  int threads = 1;
  double seconds = 0;      // median time of one decode step (one layer)
  double cache_bytes = 0;  // K + V bytes of the layer's cache at this length
  double bits = 0;         // stored bits per cached value (cache_bytes x 8 / values)
  std::string peer;        // the ggml type compared as "the same": its own, or the nearest in bits
};

std::vector<DecodeResult> run_decode_side_by_side(const DecodeOptions& o, std::ostream& log);
void print_decode_results(const std::vector<DecodeResult>& results, const DecodeOptions& o, std::ostream& out);
void write_decode_markdown(const std::vector<DecodeResult>& results, const DecodeOptions& o,
                           const std::string& load_before, const std::string& path);

}  // namespace dgq::ggml_bench
