// `dgq sweep CONFIG.toml -o RESULTS.h5 [--shard i/n] [--threads N] [--device cpu|reference|cuda] [--quiet]`:
// every grid point x trace of the config as one run (docs/replay.md, "Sweeps"); resumable.
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/sim/device/scheme_factory.hpp"
#include "dgq/sim/sweep/sweep.hpp"
#include "progress_options.hpp"

namespace dgq::cli {

namespace {

struct SweepArgs {
  std::string config;
  std::string output;
  std::string shard = "0/1";
  int threads = 0;
  std::string device = "cpu";
  bool list = false;
  ProgressArgs progress;
  bool allow_mixed_versions = false;
};

void run_sweep_command(const SweepArgs& a) {
  const sim::SweepConfig config = sim::parse_sweep_config(a.config);
  sim::SweepOptions options;
  options.output = a.output;
  options.shard = sim::parse_shard(a.shard);
  options.threads = a.threads;
  options.device = sim::parse_device(a.device);
  options.progress = progress_mode(a.progress);
  options.allow_mixed_versions = a.allow_mixed_versions;
  if (a.list) {
    for (const sim::SweepRun& r : sim::select_shard(sim::expand_runs(config), options.shard)) {
      std::cout << r.index << "\t" << r.name << "\n";
    }
    return;
  }
  const sim::SweepReport report = sim::run_sweep(config, options);
  std::cout << "sweep " << a.config << " -> " << a.output << ": " << report.total << " run(s) in the sweep, "
            << report.in_shard << " in shard " << a.shard << ", " << report.skipped_complete << " already complete, "
            << report.ran << " run now\n";
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a parameter sweep (TOML config) of replays, or of model evals ([eval]), into one results file");
  cmd->add_option("config", args->config, "Sweep config (TOML, docs/replay.md)")->required();
  cmd->add_option("-o,--output", args->output, "Results file (HDF5); complete runs in it are skipped")->required();
  cmd->add_option("--shard", args->shard, "Run only every n-th point, starting at i (i/n, 0 <= i < n)");
  add_threads_option(*cmd, args->threads);
  add_device_option(*cmd, args->device);
  add_progress_options(*cmd, args->progress);
  cmd->add_flag("--list", args->list, "Print the shard's run list (index, name) and exit");
  cmd->add_flag("--allow-mixed-versions", args->allow_mixed_versions,
                "Keep complete runs written by another dgq build or configuration (each keeps its own dgq_version "
                "and config_hash) instead of refusing to resume");
  cmd->callback([args] {
    require_existing_files({args->config});
    run_sweep_command(*args);
  });
}

}  // namespace dgq::cli
