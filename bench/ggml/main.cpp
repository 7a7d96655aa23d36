// dgq-ggml-bench: dgq next to ggml in one process (bench/ggml/run.sh builds and runs it).
// Options: --tokens N --heads N --head-dim N --rounds N --threads 1,2 --table FILE --command STR
//          --only q8_0,dgq,... (a subset of the schemes; memcpy and ggml q8_0 always run)
// --decode: the decode attention side-by-side instead (decode_side_by_side.hpp), with
//          --lengths 4096,16384,... --head-dims 64,128,256 --kv-heads N --group N
//          --llama-lengths 8192,32768 (head_dim 128 only; "" for none) --rounds N --threads 1,2
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "decode_side_by_side.hpp"
#include "side_by_side.hpp"

namespace {

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoi(item));
  return v;
}

std::vector<std::int64_t> parse_lengths(const std::string& s) {
  std::vector<std::int64_t> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoll(item));
  return v;
}

// dgq-ggml-bench --decode ...: argv[first..) are the decode options.
int run_decode(int argc, char** argv, int first) {
  dgq::ggml_bench::DecodeOptions o;
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--lengths")
      o.lengths = parse_lengths(value());
    else if (a == "--llama-lengths")
      o.llama_lengths = parse_lengths(value());
    else if (a == "--head-dims")
      o.head_dims = parse_list(value());
    else if (a == "--kv-heads")
      o.kv_heads = std::stoi(value());
    else if (a == "--group")
      o.group = std::stoi(value());
    else if (a == "--rounds")
      o.rounds = std::stoi(value());
    else if (a == "--threads")
      o.threads = parse_list(value());
    else if (a == "--table")
      o.table = value();
    else if (a == "--command")
      o.command = value();
    else if (a == "--commit")
      o.commit = value();
    else
      throw std::invalid_argument("unknown decode option " + a);
  }
  if (o.lengths.empty() || o.head_dims.empty() || o.kv_heads < 1 || o.group < 1 || o.rounds < 1 || o.threads.empty())
    throw std::invalid_argument("need lengths, head dims, kv heads, group, rounds and threads");
  for (int d : o.head_dims)
    if (d < 32 || d % 32 != 0) throw std::invalid_argument("head dims must be multiples of 32 (ggml's blocks)");
  const std::string load_before = load_average();
  const auto results = dgq::ggml_bench::run_decode_side_by_side(o, std::cerr);
  dgq::ggml_bench::print_decode_results(results, o, std::cout);
  if (!o.table.empty()) {
    dgq::ggml_bench::write_decode_markdown(results, o, load_before, o.table);
    std::cerr << "dgq-ggml-bench: wrote " << o.table << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dgq::ggml_bench::Options o;
  try {
    if (argc > 1 && std::string(argv[1]) == "--decode") return run_decode(argc, argv, 2);
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--tokens")
        o.tokens = std::stoll(value());
      else if (a == "--heads")
        o.heads = std::stoi(value());
      else if (a == "--head-dim")
        o.head_dim = std::stoi(value());
      else if (a == "--rounds")
        o.rounds = std::stoi(value());
      else if (a == "--threads")
        o.threads = parse_list(value());
      else if (a == "--table")
        o.table = value();
      else if (a == "--command")
        o.command = value();
      else if (a == "--commit")
        o.commit = value();
      else if (a == "--only") {
        std::stringstream in(value());
        for (std::string item; std::getline(in, item, ',');) o.only.push_back(item);
      } else
        throw std::invalid_argument("unknown option " + a);
    }
    if (o.tokens < 1 || o.heads < 1 || o.head_dim < 32 || o.head_dim % 32 != 0 || o.rounds < 1 || o.threads.empty())
      throw std::invalid_argument("need tokens, heads, rounds >= 1 and head_dim a multiple of 32 (ggml's blocks)");
    const std::string load_before = load_average();
    const auto results = dgq::ggml_bench::run_side_by_side(o, std::cerr);
    dgq::ggml_bench::print_results(results, std::cout);
    if (!o.table.empty()) {
      dgq::ggml_bench::write_markdown(results, o, load_before, o.table);
      std::cerr << "dgq-ggml-bench: wrote " << o.table << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dgq-ggml-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
