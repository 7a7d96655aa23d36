// `dgq merge OUT.h5 IN1.h5 IN2.h5 ...`: join results files (sweep shards, eval or passkey results).
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/sim/files/results/merge.hpp"

namespace dgq::cli {

void register_merge(CLI::App& app) {
  struct MergeArgs {
    std::string output;
    std::vector<std::string> inputs;
    bool allow_mixed_versions = false;
    bool force = false;
  };
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Join results files of one kind (replay/sweep, eval or passkey): complete runs are copied; a run in several "
      "inputs must be identical");
  cmd->add_option("output", args->output,
                  "Merged results file (written through OUTPUT.partial): a new file, or one of the inputs")
      ->required();
  cmd->add_option("inputs", args->inputs, "Results files to join")->required();
  cmd->add_flag("--force", args->force, "Replace an existing OUTPUT that is not among the inputs (refused otherwise)");
  cmd->add_flag("--allow-mixed-versions", args->allow_mixed_versions,
                "Merge runs written by different dgq builds (each keeps its own dgq_version) instead of refusing");
  cmd->callback([args] {
    require_existing_files(args->inputs);
    const sim::MergeReport r = sim::merge_results(args->output, args->inputs, args->allow_mixed_versions, args->force);
    std::cout << "merged " << args->inputs.size() << " file(s) into " << args->output << ": " << r.copied << " run(s), "
              << r.identical_duplicates << " identical duplicate(s), " << r.skipped_incomplete
              << " incomplete run(s) skipped\n";
  });
}

}  // namespace dgq::cli
