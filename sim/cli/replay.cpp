// `dgq replay TRACE... --scheme SPEC ... -o RESULTS.h5`: every layer of each trace through
// every scheme; results into an HDF5 file (docs/results-format.md), a JSON summary and a
// console table (docs/replay.md).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/device/scheme_factory.hpp"
#include "dgq/sim/files/output/text_output.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/files/results/run_summary.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "number_options.hpp"
#include "progress_options.hpp"

namespace dgq::cli {

namespace {

struct ReplayArgs {
  std::vector<std::string> traces;
  SchemeListArgs scheme_args;        // --scheme SPEC ... (or the deprecated --schemes LIST)
  std::vector<std::string> schemes;  // resolved from scheme_args before the run
  std::vector<std::string> names;
  std::string output;
  std::string json;
  std::string device = "cpu";
  std::vector<int> layers;
  int threads = 0;
  bool force = false;
  bool keep_decompressed = false;
  ProgressArgs progress;
};

std::vector<std::string> run_names_for(const ReplayArgs& a, const std::string& trace) {
  if (!a.names.empty()) {
    if (a.traces.size() != 1 || a.names.size() != a.schemes.size()) {
      throw ParameterError("--name: give one name per --scheme, and only with a single trace");
    }
    std::vector<std::string> names;
    for (const auto& n : a.names) {
      if (sim::sanitize_run_name(n) != n)
        throw ParameterError("--name '" + n + "': use only A-Z a-z 0-9 . _ = , @ + -");
      names.push_back(n);
    }
    return names;
  }
  std::vector<std::string> names;
  for (const auto& spec : a.schemes) names.push_back(sim::default_run_name(make_scheme(spec)->spec(), trace));
  return names;
}

void run_replay(const ReplayArgs& a) {
  const Device device = sim::parse_device(a.device);
  std::vector<std::unique_ptr<Scheme>> owned;
  std::vector<const Scheme*> schemes;
  for (const auto& spec : a.schemes) {
    owned.push_back(make_scheme_on(spec, a.device));
    schemes.push_back(owned.back().get());
  }
  const sim::OutputLock lock(a.output);  // fails now, not after a whole pass, if the output is busy or unwritable
  if (!a.json.empty()) sim::check_text_output(a.json);  // and a --json that would replace runs
  std::vector<sim::RunResult> all;
  for (const std::string& trace : a.traces) {
    const std::vector<std::string> names = run_names_for(a, trace);
    const sim::RunListing existing = sim::list_runs(a.output);
    for (const auto& n : names) {  // fail before the work, not after it
      if (existing.is_complete(n) && !a.force) {
        throw ParameterError(a.output + ": run '" + n + "' already exists (use --force to replace it)");
      }
    }
    const sim::TraceReader reader(trace);
    sim::ReplayOptions options;
    options.threads = a.threads;
    options.layers = a.layers;
    options.keep_decompressed = a.keep_decompressed;
    options.serialize_schemes = device == Device::cuda;
    options.device = device;
    const std::size_t layers = a.layers.empty() ? static_cast<std::size_t>(reader.meta().num_layers) : a.layers.size();
    sim::Progress progress(progress_mode(a.progress), "replay " + trace, static_cast<std::int64_t>(layers));
    options.on_layer_done = [&progress](int, int) { progress.finished("layer(s)"); };
    const auto start = std::chrono::steady_clock::now();
    std::vector<sim::RunResult> runs = sim::replay_trace(reader, schemes, names, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& m = reader.meta();
    const double token_heads = static_cast<double>(m.tokens) * m.num_kv_heads * runs.front().layers.size();
    // Throughput of the trace: L x KV heads x layers replayed (through every scheme) per second;
    // like the progress, on stderr and not with --quiet.
    if (!a.progress.quiet) {
      std::fprintf(
          stderr, "%s: %zu layer(s) x %d KV heads x %lld tokens through %zu scheme(s) in %.3f s: %.4g tokens*heads/s\n",
          trace.c_str(), runs.front().layers.size(), m.num_kv_heads, static_cast<long long>(m.tokens), runs.size(),
          seconds, token_heads / seconds);
    }
    sim::add_runs(a.output, runs, a.force);
    for (auto& r : runs) {
      r.decompressed.clear();  // written; the summary does not need them
      all.push_back(std::move(r));
    }
  }
  std::cout << sim::format_run_table(all);
  if (!a.json.empty()) sim::write_json_summary(a.json, all);
}

}  // namespace

void register_replay(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd =
      app.add_subcommand("replay", "Replay attention traces through compression schemes and measure the error");
  cmd->add_option("traces", args->traces, "Trace files (HDF5, docs/trace-format.md)")->required();
  add_scheme_list_options(*cmd, args->scheme_args,
                          scheme_option_help("Scheme spec, repeatable (e.g. dgq:group_ratio=0.5)"));
  cmd->add_option("-o,--output", args->output, "Results file (HDF5); runs are added to it")->required();
  cmd->add_option("--json", args->json, "Also write a JSON summary here");
  cmd->add_option("--name", args->names, "Run name, one per --scheme (single trace only); default SPEC@TRACE_STEM");
  add_threads_option(*cmd, args->threads);
  add_device_option(*cmd, args->device);
  add_progress_options(*cmd, args->progress);
  cmd->add_option("--layers", args->layers, "Replay only these layers (e.g. 0,3,5)")
      ->delimiter(',')
      ->check(whole_number(0));  // the trace decides the upper bound
  cmd->add_flag("--force", args->force, "Replace runs of the same name");
  cmd->add_flag(
      "--save-decompressed", args->keep_decompressed,
      "Store the decompressed K and V of every replayed layer in the run (for cross-checks; use with --layers)");
  cmd->callback([args] {
    require_existing_files(args->traces);
    args->schemes = scheme_list(args->scheme_args, "--scheme");
    run_replay(*args);
  });
}

}  // namespace dgq::cli
