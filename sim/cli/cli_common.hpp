#pragma once
// Helpers shared by the dgq subcommands: --device / --threads / scheme list options and scheme
// creation, number formatting for the summaries.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgq/scheme.hpp"

namespace dgq::cli {

// Adds --device cpu|reference|cuda (default cpu) bound to `device`.
void add_device_option(CLI::App& cmd, std::string& device);
// Adds --threads N (0 = OpenMP's default) bound to `threads`.
void add_threads_option(CLI::App& cmd, int& threads);

// Throws InputError "PATH: no such file" (or "is a directory") for the first of paths that is
// not a file. Commands call it first in their callback rather than giving CLI11 a validator:
// CLI11 validates positionals before it looks for unknown options, so a misspelt option's
// value (--thread 1) was reported as a missing file named "1".
void require_existing_files(const std::vector<std::string>& paths);

// The scheme for a spec on the device --device names: sim::make_device_scheme (the CPU, the
// literal reference or CUDA; its errors: "this dgq was built without CUDA", "no usable CUDA
// device (...)").
std::unique_ptr<Scheme> make_scheme_on(const std::string& spec, const std::string& device);

// ---- Scheme lists ---------------------------------------------------------------------------
// Every command that takes several schemes (replay, eval, memory) takes them one way:
// --scheme SPEC, repeated. That spelling is canonical because a spec may hold commas
// (dgq2:kbits=4,vbits=4, turboquant:bits=3,variant=prod): one spec per occurrence needs no
// splitting rule. --schemes LIST (comma-separated, split by split_scheme_list) is accepted for
// one release and deprecated; nothing is printed about it (stdout is compared byte for byte and
// the error tests expect one stderr line).
// K and V apart (llama.cpp's -ctk/-ctv, --cache-type-k/-v): --cache-k SPEC --cache-v SPEC add
// the K/V pair "K/V" (dgq/kv_pair.hpp) after the --scheme specs. Repeated, the i-th --cache-k
// goes with the i-th --cache-v; one given once goes with every one of the other; one not given
// is fp16, llama.cpp's default cache type.
struct SchemeListArgs {
  std::vector<std::string> specs;             // --scheme, in order
  std::vector<std::string> lists;             // --schemes (deprecated), in order
  std::vector<std::string> cache_k, cache_v;  // --cache-k, --cache-v
};
// Adds the four options to cmd; `help` describes one spec.
void add_scheme_list_options(CLI::App& cmd, SchemeListArgs& args, const std::string& help);
// The specs given, in command-line order, then the K/V pairs of --cache-k/--cache-v. ParameterError when both spellings
// are used (their relative order is lost, and the order of schemes decides a run's identity). When none is given: an
// empty list, or, with required_name, CLI11's "<required_name> is required" (the name the command has always reported).
std::vector<std::string> scheme_list(const SchemeListArgs& args, const char* required_name = nullptr);
// "a,b:k=1,j=2,c" -> a | b:k=1,j=2 | c: a piece with '=' but no ':' continues the previous
// spec's parameter list, so specs keep their own commas.
std::vector<std::string> split_scheme_list(const std::string& list);

// argv without the program name, llama.cpp's spellings -ctk/-ctv turned into --cache-k/--cache-v
// (CLI11 takes one letter after a single dash).
std::vector<std::string> with_llama_cpp_spellings(int argc, const char* const* argv);

// "17179869184 B = 16.00 GiB = 17.18 GB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace dgq::cli
