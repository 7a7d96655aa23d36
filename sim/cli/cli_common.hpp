#pragma once
// Helpers shared by the dgq subcommands: --device / --threads options and scheme creation,
// number formatting for the summaries.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "dgq/scheme.hpp"

namespace dgq::cli {

// Adds --device cpu|cuda (default cpu) bound to `device`.
void add_device_option(CLI::App& cmd, std::string& device);
// Adds --threads N (0 = OpenMP's default) bound to `threads`.
void add_threads_option(CLI::App& cmd, int& threads);

// The scheme for a spec on a device: the CPU reference, or (for dgq specs with --device
// cuda) the CUDA implementation. Errors: "this dgq was built without CUDA" or "no usable
// CUDA device (...)" (see sim::make_replay_scheme, which this delegates to).
std::unique_ptr<Scheme> make_scheme_on(const std::string& spec, const std::string& device);

// "17179869184 B = 16.00 GiB = 17.18 GB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace dgq::cli
