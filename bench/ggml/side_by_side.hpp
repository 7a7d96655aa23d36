#pragma once
// dgq's schemes and ggml's runtime quantizers timed in one process on the same buffers
// (docs/benchmarks.md, "dgq next to ggml"). Rounds are interleaved: round r runs every entry once, so a slow spell of
// the shared machine hits all entries alike; each figure is the median over the rounds.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace dgq::ggml_bench {

struct Options {
  std::int64_t tokens = 32768;  // 8 x 32768 x 128 fp16 = 64 MiB
  int heads = 8;
  int head_dim = 128;
  int rounds = 7;
  std::vector<int> threads{1, 2};
  std::string table;    // markdown file to write ("" = none)
  std::string command;  // the command line, recorded in the table
  std::string commit;   // of the tree the harness was built from (run.sh passes it)
  // Only these schemes (ggml types and dgq specs; empty = all). memcpy and ggml's q8_0 always
  // run: every ratio needs them.
  std::vector<std::string> only;
};

struct Result {
  std::string impl;    // "ggml", "dgq", "memcpy"
  std::string scheme;  // "q8_0", "dgq", "dgq (reused out)", ...
  std::string op;      // "compress", "decompress", "copy"
  std::string dtype;   // compress: the input dtype; decompress: the output dtype
  int threads = 1;
  double seconds = 0;  // median wall time over the rounds
  double elements = 0;
  double moved_bytes = 0;  // input read + output written, the least the operation must touch
};

std::vector<Result> run_side_by_side(const Options& o, std::ostream& log);

// The ggml types timed beside dgq's byte-identical families of the same name. Every other
// family runs alone (and is compared with ggml's q8_0): the list of those is the registry's.
bool is_ggml_type(std::string_view family);
std::vector<std::string> ggml_type_names();

// Console table and the markdown file (machine, load, command, date, targets).
void print_results(const std::vector<Result>& results, std::ostream& out);
void write_markdown(const std::vector<Result>& results, const Options& o, const std::string& load_before,
                    const std::string& path);

}  // namespace dgq::ggml_bench
