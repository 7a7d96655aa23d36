// `dgq slurm CONFIG.toml -o RESULTS.h5 --tasks N [...]`: runs a sweep on a Slurm cluster as a
// job array of N shards plus a merge job (docs/cluster.md). Only shards not yet complete are
// submitted, so running the same command again finishes a submission without redoing work;
// while jobs of the submission are still queued or running, it refuses (they would race).
// `--merge` is what the merge job runs: check every shard, name the incomplete ones, merge.
// This file parses and prints; the steps are in sim/sweep/src/slurm/ (dgq/sim/sweep/slurm_submission.hpp).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/sweep/slurm.hpp"
#include "dgq/sim/sweep/slurm_submission.hpp"
#include "number_options.hpp"

namespace dgq::cli {

namespace {

namespace fs = std::filesystem;

struct SlurmArgs {
  sim::SlurmRequest request;
  bool dry_run = false, merge = false;
};

// --merge: the merge job's work, also useful by hand.
void check_and_merge(const sim::SweepConfig& config, const sim::SlurmOptions& o) {
  const sim::SlurmMergeCheck check = sim::check_slurm_shards(config, o);
  for (const auto& s : check.shards) std::cout << sim::describe_shard(s, o.tasks) << "\n";
  std::cout << std::flush;
  if (!check.incomplete.empty()) {
    if (const auto resubmitted = sim::resubmit_merge_after_array(o, check)) {
      std::cout << *resubmitted << "\n";
      return;
    }
    throw InputError(sim::incomplete_shards_message(o, check));
  }
  // The output is the sweep's own, made of its shards' runs only: merged again, it loses none.
  const sim::MergeReport r = sim::merge_results(o.output, check.inputs, false, true);
  std::cout << "merged " << check.inputs.size() << " shard(s) into " << o.output << ": " << r.copied << " run(s)\n";
}

void print_submission(const sim::SlurmOptions& o, const sim::SlurmSubmission& s) {
  std::cout << "sweep " << o.config << ": " << sim::expected_runs(s.shards) << " run(s) in " << o.tasks << " shard(s); "
            << (s.shards.size() - s.pending.size()) << " shard(s) already complete";
  if (!s.pending.empty()) {
    std::cout << ", " << s.pending.size() << " to run (array " << sim::slurm_array_ranges(s.pending) << ", "
              << sim::missing_runs(s.shards) << " run(s) missing)\nwrote " << s.array_script;
  }
  std::cout << "\nwrote " << s.merge_script << "\n";
}

void submit(const sim::SlurmOptions& o, const sim::SlurmSubmission& s) {
  std::string array_job;
  if (!s.pending.empty()) {
    array_job = sim::submit_slurm_job(o.sbatch, s.array_script, "");
    std::cout << "submitted array job " << array_job << " (" << s.pending.size() << " task(s)), logs " << o.dir
              << "/logs/" << fs::path(s.array_script).stem().string() << "-" << array_job << "_<task>.out\n";
  }
  const std::string merge_job = sim::submit_slurm_job(o.sbatch, s.merge_script, array_job);
  std::cout << "submitted merge job " << merge_job
            << (array_job.empty() ? "" : " (after every task has ended: afterany:" + array_job + ")") << " -> "
            << o.output << ", log " << o.dir << "/logs/merge-" << merge_job << ".out\n";
}

void run_slurm_command(const SlurmArgs& a) {
  const sim::SlurmOptions o = sim::resolve_slurm_options(a.request);
  const sim::SweepConfig config = sim::parse_sweep_config(o.config);
  if (a.merge) return check_and_merge(config, o);

  const sim::SlurmSubmission s = sim::prepare_slurm_submission(config, o, a.dry_run);
  print_submission(o, s);
  if (!a.dry_run) return submit(o, s);
  if (!s.pending.empty()) std::cout << "would run: " << sim::sbatch_command(o.sbatch, s.array_script, "") << "\n";
  std::cout << "would run: " << sim::sbatch_command(o.sbatch, s.merge_script, s.pending.empty() ? "" : "ARRAY_JOB_ID")
            << "\n";
}

}  // namespace

void register_slurm(CLI::App& app) {
  auto a = std::make_shared<SlurmArgs>();
  sim::SlurmRequest& r = a->request;
  CLI::App* cmd = app.add_subcommand(
      "slurm", "Run a sweep on a Slurm cluster: a job array of shards plus a merge job (docs/cluster.md)");
  cmd->add_option("config", r.config, "Sweep config (TOML, docs/replay.md)")->required();
  cmd->add_option("-o,--output", r.output, "Merged results file, written by the merge job")->required();
  cmd->add_option("--tasks", r.slurm.tasks, "Array size N: task i runs --shard i/N")
      ->required()
      ->check(whole_number(1));
  cmd->add_option("--dir", r.dir, "Submission folder: scripts, shards/, logs/ (default OUTPUT.slurm)");
  cmd->add_option("--partition", r.slurm.partition, "#SBATCH --partition");
  cmd->add_option("--time", r.slurm.time, "#SBATCH --time, per task and for the merge (e.g. 2:00:00)");
  cmd->add_option("--cpus-per-task", r.slurm.cpus_per_task,
                  "#SBATCH --cpus-per-task; tasks set OMP_NUM_THREADS "
                  "from SLURM_CPUS_PER_TASK")
      ->check(whole_number(1));
  cmd->add_option("--mem", r.slurm.mem, "#SBATCH --mem (e.g. 16G)");
  cmd->add_option("--gpus-per-task", r.slurm.gpus_per_task, "#SBATCH --gpus-per-task (with --device cuda)")
      ->check(whole_number(1));
  add_device_option(*cmd, r.slurm.device);
  cmd->add_option("--max-running", r.slurm.max_running, "At most K tasks at once (--array=...%K)")
      ->check(whole_number(1));
  cmd->add_option("--sbatch-line", r.slurm.extra_lines,
                  "Extra #SBATCH line for both jobs, e.g. --sbatch-line=--qos=long (repeatable)")
      ->allow_extra_args(false);  // one line per occurrence, so a positional after it stays one
  cmd->add_option("--job-name", r.job_name, "Array job name (default dgq-<config stem>); merge: NAME-merge");
  cmd->add_option("--dgq", r.dgq, "dgq binary the jobs run (default: this one)");
  cmd->add_option("--sbatch", r.slurm.sbatch, "sbatch program")->capture_default_str();
  cmd->add_option("--squeue", r.slurm.squeue, "squeue program (finds jobs of this submission still queued)")
      ->capture_default_str();
  cmd->add_flag("--dry-run", a->dry_run, "Write the scripts and print the sbatch commands, submit nothing");
  cmd->add_flag("--merge", a->merge,
                "Submit nothing: check every shard file, name incomplete ones, merge when all are complete "
                "(what the merge job runs)");
  cmd->callback([a] {
    require_existing_files({a->request.config});
    run_slurm_command(*a);
  });
}

}  // namespace dgq::cli
