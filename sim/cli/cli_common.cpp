#include "cli_common.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/device/scheme_factory.hpp"
#include "number_options.hpp"

namespace dgq::cli {

namespace {
constexpr std::int64_t kMaxThreads = 1024;
}  // namespace

void add_device_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 "cpu (a family's fast CPU path where it has one, else its reference), reference (the literal "
                 "rules of docs/spec.md, slow: the oracle; same bytes), or cuda (dgq schemes on the GPU)")
      ->check(CLI::IsMember({"cpu", "reference", "cuda"}))
      ->capture_default_str();
}

void add_threads_option(CLI::App& cmd, int& threads) {
  // The upper bound: libgomp crashes creating 100000 threads.
  cmd.add_option("--threads", threads, "OpenMP threads (0 = default); the output does not depend on it")
      ->check(whole_number(0, kMaxThreads, "0 = OpenMP's default"))
      ->capture_default_str();
}

void require_existing_files(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
    if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a file");
  }
}

std::unique_ptr<Scheme> make_scheme_on(const std::string& spec, const std::string& device) {
  return sim::make_device_scheme(spec, sim::parse_device(device));
}

std::string scheme_option_help(const char* what) {
  std::string families;
  for (const std::string& f : scheme_families()) families += (families.empty() ? "" : ", ") + f;
  return std::string(what) + ": FAMILY[:key=value,...]; families " + families +
         " (`dgq schemes` lists their parameters)";
}

void add_scheme_list_options(CLI::App& cmd, SchemeListArgs& args, const std::string& help) {
  // One value per occurrence: CLI11 otherwise lets a vector option take the words after it, so
  // "--scheme q8_0 TRACE" swallowed the trace as a second spec.
  cmd.add_option("--scheme", args.specs, help)->allow_extra_args(false);
  cmd.add_option("--schemes", args.lists,
                 "Deprecated (accepted for one release; use --scheme SPEC, repeated): comma-separated scheme specs")
      ->allow_extra_args(false);
  cmd.add_option("--cache-k,--cache-type-k", args.cache_k,
                 "K cache scheme, with --cache-v: the K/V pair K/V (llama.cpp's -ctk; repeatable, the i-th with the "
                 "i-th --cache-v; default of a side not given: fp16)")
      ->allow_extra_args(false);
  cmd.add_option("--cache-v,--cache-type-v", args.cache_v, "V cache scheme (llama.cpp's -ctv); see --cache-k")
      ->allow_extra_args(false);
}

std::vector<std::string> scheme_list(const SchemeListArgs& args, const char* required_name) {
  if (!args.specs.empty() && !args.lists.empty())
    throw ParameterError("give schemes either as --scheme SPEC (repeated) or as --schemes LIST (deprecated), not both");
  const std::vector<std::string> pairs = kv_pair_specs(args.cache_k, args.cache_v);
  if (args.specs.empty() && args.lists.empty() && pairs.empty() && required_name)
    throw CLI::RequiredError(required_name);
  std::vector<std::string> specs = args.specs;
  for (const auto& list : args.lists)
    for (auto& spec : split_scheme_list(list)) specs.push_back(spec);
  specs.insert(specs.end(), pairs.begin(), pairs.end());
  return specs;
}

std::vector<std::string> split_scheme_list(const std::string& list) {
  std::vector<std::string> specs;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string piece = list.substr(start, end - start);
    if (piece.empty()) throw ParameterError("--schemes '" + list + "': empty scheme name");
    const bool continues = piece.find('=') != std::string::npos && piece.find(':') == std::string::npos;
    if (continues && !specs.empty()) {
      specs.back() += "," + piece;
    } else {
      specs.push_back(piece);
    }
    start = end + 1;
  }
  return specs;
}

std::vector<std::string> with_llama_cpp_spellings(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {  // what follows is not an option
      args.insert(args.end(), argv + i, argv + argc);
      break;
    }
    args.push_back(a == "-ctk" ? "--cache-k" : a == "-ctv" ? "--cache-v" : a);
  }
  return args;
}

std::string format_bytes(std::uint64_t bytes) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%llu B = %.2f GiB = %.2f GB", static_cast<unsigned long long>(bytes),
                static_cast<double>(bytes) / 1073741824.0, static_cast<double>(bytes) / 1e9);
  return buffer;
}

}  // namespace dgq::cli
