#include "cli_common.hpp"

#include <cstdio>

#include "commands.hpp"
#include "dgq/scheme.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/replay.hpp"

namespace dgq::cli {

namespace {
constexpr long long kMaxThreads = 1024;
}  // namespace

void add_device_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device, "cpu (the reference), or cuda (dgq schemes on the GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
}

void add_threads_option(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "OpenMP threads (0 = default); the output does not depend on it")
      ->check(CLI::NonNegativeNumber)
      ->each([](const std::string& value) {  // libgomp crashes creating 100000 threads
        if (std::stoll(value) > kMaxThreads)
          throw ParameterError("--threads " + value + " is outside [0, " + std::to_string(kMaxThreads) + "]");
      })
      ->capture_default_str();
}

std::unique_ptr<Scheme> make_scheme_on(const std::string& spec, const std::string& device) {
  return sim::make_replay_scheme(spec, sim::parse_replay_device(device));
}

std::string scheme_option_help(const char* what) {
  std::string families;
  for (const std::string& f : scheme_families()) families += (families.empty() ? "" : ", ") + f;
  return std::string(what) + ": FAMILY[:key=value,...]; families " + families +
         " (`dgq schemes` lists their parameters)";
}

std::string format_bytes(std::uint64_t bytes) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%llu B = %.2f GiB = %.2f GB", static_cast<unsigned long long>(bytes),
                static_cast<double>(bytes) / 1073741824.0, static_cast<double>(bytes) / 1e9);
  return buffer;
}

}  // namespace dgq::cli
