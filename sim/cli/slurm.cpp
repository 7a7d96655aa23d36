// `dgq slurm CONFIG.toml -o RESULTS.h5 --tasks N [...]`: runs a sweep on a Slurm cluster as a
// job array of N shards plus a merge job (docs/cluster.md). Only shards not yet complete are
// submitted, so running the same command again finishes a submission without redoing work;
// while jobs of the submission are still queued or running, it refuses (they would race).
// `--merge` is what the merge job runs: check every shard, name the incomplete ones, merge.
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/text_output.hpp"
#include "dgq/sim/results.hpp"
#include "dgq/sim/slurm.hpp"

namespace dgq::cli {

namespace {

namespace fs = std::filesystem;

struct SlurmArgs {
  std::string config, output, dir, job_name, dgq;
  sim::SlurmOptions slurm;
  bool dry_run = false, merge = false;
};

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

// Slurm reads #SBATCH values up to whitespace and expands % patterns in --output: the
// submission folder must not hold such characters.
void check_sbatch_safe(const std::string& what, const std::string& path) {
  const auto bad = path.find_first_of(" \t\n'\"\\%");
  if (bad != std::string::npos) {
    throw ParameterError(what + " '" + path + "' contains '" + path.substr(bad, 1) +
                         "', which #SBATCH lines cannot hold; choose a path without whitespace, quotes or %");
  }
}

std::string default_job_name(const std::string& config) {
  std::string name = "dgq-" + fs::path(config).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return name;
}

sim::SlurmOptions resolve(const SlurmArgs& a) {
  sim::SlurmOptions o = a.slurm;
  o.config = absolute(a.config);
  o.output = absolute(a.output);
  o.dir = absolute(a.dir.empty() ? a.output + ".slurm" : a.dir);
  o.dgq = a.dgq.empty() ? fs::read_symlink("/proc/self/exe").string() : absolute(a.dgq);
  o.job_name = a.job_name.empty() ? default_job_name(a.config) : a.job_name;
  check_sbatch_safe("--dir", o.dir);
  check_sbatch_safe("--job-name", o.job_name);
  return o;
}

void write_text(const std::string& path, const std::string& text) { dgq::sim::write_text_file(path, text, true); }

// Runs a shell command line and returns what it printed (stdout and stderr).
std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  if (!pipe) throw Error("cannot run: " + command);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  const int status = pclose(pipe.release());
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw Error("'" + command + "' failed (exit code " + std::to_string(code) + "): " + out);
  }
  return out;
}

// Runs an sbatch command line and returns the job id it printed.
std::string submit(const std::string& command) { return sim::parse_sbatch_job_id(run_command(command)); }

// The jobs still queued or running one of `scripts` (array jobs once, by their array id).
std::vector<std::string> jobs_in_flight(const std::string& squeue, const std::vector<std::string>& scripts) {
  // Every state of a job not yet ended, a requeued one included (squeue's default omits some).
  const char* states = "PENDING,RUNNING,COMPLETING,CONFIGURING,SUSPENDED,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,"
                       "RESIZING,SPECIAL_EXIT,STAGE_OUT,STOPPED,SIGNALING";
  return sim::jobs_running_scripts(
      run_command(sim::shell_quote(squeue) + " -h -t " + states + " -o '%A|%o'"), scripts);
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Refuses to submit while jobs of the same submission are queued or running: two arrays
// writing the same shard files would race.
void check_not_in_flight(const std::string& squeue, const std::vector<std::string>& scripts) {
  const std::vector<std::string> ids = jobs_in_flight(squeue, scripts);
  if (ids.empty()) return;
  const std::string list = joined(ids, ", ");
  throw Error("job(s) " + list + " of this submission (" + scripts.front().substr(0, scripts.front().rfind('/')) +
              ") are still queued or running; wait for them (squeue -j " + ids.front() +
              ") or scancel them, then submit again");
}

std::size_t total_runs(const std::vector<sim::SlurmShardState>& shards, bool pending_only) {
  std::size_t n = 0;
  for (const auto& s : shards) n += pending_only ? s.missing.size() : s.expected;
  return n;
}

// Inside the merge job: when shards are incomplete while array tasks are still queued or
// running (should a requeue or a hand-edited dependency let it start early), submit the
// merge again after them instead of failing.
// Where squeue cannot run (by hand, no Slurm), there is nothing to wait for.
bool resubmitted_after_array(const sim::SlurmOptions& o, const std::string& shards) {
  if (std::getenv("SLURM_JOB_ID") == nullptr) return false;
  std::vector<std::string> array_jobs;
  try {
    array_jobs = jobs_in_flight(o.squeue, {sim::slurm_array_script_path(o)});
  } catch (const Error&) {
    return false;
  }
  if (array_jobs.empty()) return false;
  const std::string after = joined(array_jobs, ":");
  const std::string job = submit(sim::sbatch_command(o.sbatch, sim::slurm_merge_script_path(o), after));
  std::cout << "shard(s) " << shards << " incomplete while array job(s) " << joined(array_jobs, ", ")
            << " are still queued or running (requeued?): merge submitted again as job " << job
            << ", after them\n";
  return true;
}

// --merge: the merge job's work, also useful by hand.
void check_and_merge(const sim::SweepConfig& config, const sim::SlurmOptions& o) {
  const std::vector<sim::SlurmShardState> shards = sim::slurm_shard_states(config, o);
  std::vector<std::string> inputs, incomplete;
  for (const auto& s : shards) {
    std::cout << sim::describe_shard(s, o.tasks) << "\n";
    if (!s.complete()) incomplete.push_back(std::to_string(s.index));
    if (s.file_exists) inputs.push_back(s.path);
  }
  std::cout << std::flush;
  if (!incomplete.empty()) {
    const std::string list = joined(incomplete, ", ");
    if (resubmitted_after_array(o, list)) return;
    throw InputError("not merging into " + o.output + ": shard(s) " + list + " of " + std::to_string(o.tasks) +
                     " incomplete (" + std::to_string(total_runs(shards, true)) +
                     " run(s) missing; task logs in " + o.dir + "/logs); rerun the same dgq slurm command to "
                     "finish them, or dgq merge the complete shards by hand");
  }
  const sim::MergeReport r = sim::merge_results(o.output, inputs);
  std::cout << "merged " << inputs.size() << " shard(s) into " << o.output << ": " << r.copied << " run(s)\n";
}

void run_slurm_command(const SlurmArgs& a) {
  const sim::SlurmOptions o = resolve(a);
  const sim::SweepConfig config = sim::parse_sweep_config(o.config);
  if (a.merge) return check_and_merge(config, o);

  sim::check_slurm_inputs(config);
  const std::vector<sim::SlurmShardState> shards = sim::slurm_shard_states(config, o);
  std::vector<std::size_t> pending;
  for (const auto& s : shards) {
    if (!s.complete()) pending.push_back(s.index);
  }
  const std::string array_script = sim::slurm_array_script_path(o);
  const std::string merge_script = sim::slurm_merge_script_path(o);
  if (!a.dry_run) check_not_in_flight(o.squeue, {array_script, merge_script});
  fs::create_directories(o.dir + "/shards");
  fs::create_directories(o.dir + "/logs");
  fs::create_directories(fs::path(o.output).parent_path());
  if (!pending.empty()) write_text(array_script, sim::slurm_array_script(o, pending));
  write_text(merge_script, sim::slurm_merge_script(o));

  std::cout << "sweep " << o.config << ": " << total_runs(shards, false) << " run(s) in " << o.tasks << " shard(s); "
            << (shards.size() - pending.size()) << " shard(s) already complete";
  if (!pending.empty()) {
    std::cout << ", " << pending.size() << " to run (array " << sim::slurm_array_ranges(pending) << ", "
              << total_runs(shards, true) << " run(s) missing)\nwrote " << array_script;
  }
  std::cout << "\nwrote " << merge_script << "\n";

  const std::string array_command = sim::sbatch_command(o.sbatch, array_script, "");
  if (a.dry_run) {
    if (!pending.empty()) std::cout << "would run: " << array_command << "\n";
    std::cout << "would run: " << sim::sbatch_command(o.sbatch, merge_script, pending.empty() ? "" : "ARRAY_JOB_ID")
              << "\n";
    return;
  }
  std::string array_job;
  if (!pending.empty()) {
    array_job = submit(array_command);
    std::cout << "submitted array job " << array_job << " (" << pending.size() << " task(s)), logs "
              << o.dir << "/logs/" << fs::path(array_script).stem().string() << "-" << array_job << "_<task>.out\n";
  }
  const std::string merge_job = submit(sim::sbatch_command(o.sbatch, merge_script, array_job));
  std::cout << "submitted merge job " << merge_job
            << (array_job.empty() ? "" : " (after every task has ended: afterany:" + array_job + ")")
            << " -> " << o.output << ", log " << o.dir << "/logs/merge-" << merge_job << ".out\n";
}

}  // namespace

void register_slurm(CLI::App& app) {
  auto a = std::make_shared<SlurmArgs>();
  CLI::App* cmd = app.add_subcommand(
      "slurm", "Run a sweep on a Slurm cluster: a job array of shards plus a merge job (docs/cluster.md)");
  cmd->add_option("config", a->config, "Sweep config (TOML, docs/replay.md)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", a->output, "Merged results file, written by the merge job")->required();
  cmd->add_option("--tasks", a->slurm.tasks, "Array size N: task i runs --shard i/N")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dir", a->dir, "Submission folder: scripts, shards/, logs/ (default OUTPUT.slurm)");
  cmd->add_option("--partition", a->slurm.partition, "#SBATCH --partition");
  cmd->add_option("--time", a->slurm.time, "#SBATCH --time, per task and for the merge (e.g. 2:00:00)");
  cmd->add_option("--cpus-per-task", a->slurm.cpus_per_task, "#SBATCH --cpus-per-task; tasks set OMP_NUM_THREADS "
                                                            "from SLURM_CPUS_PER_TASK")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--mem", a->slurm.mem, "#SBATCH --mem (e.g. 16G)");
  cmd->add_option("--gpus-per-task", a->slurm.gpus_per_task, "#SBATCH --gpus-per-task (with --device cuda)")
      ->check(CLI::PositiveNumber);
  add_device_option(*cmd, a->slurm.device);
  cmd->add_option("--max-running", a->slurm.max_running, "At most K tasks at once (--array=...%K)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--sbatch-line", a->slurm.extra_lines,
                  "Extra #SBATCH line for both jobs, e.g. --sbatch-line=--qos=long (repeatable)")
      ->allow_extra_args(false);  // one line per occurrence, so a positional after it stays one
  cmd->add_option("--job-name", a->job_name, "Array job name (default dgq-<config stem>); merge: NAME-merge");
  cmd->add_option("--dgq", a->dgq, "dgq binary the jobs run (default: this one)");
  cmd->add_option("--sbatch", a->slurm.sbatch, "sbatch program")->capture_default_str();
  cmd->add_option("--squeue", a->slurm.squeue, "squeue program (finds jobs of this submission still queued)")
      ->capture_default_str();
  cmd->add_flag("--dry-run", a->dry_run, "Write the scripts and print the sbatch commands, submit nothing");
  cmd->add_flag("--merge", a->merge,
                "Submit nothing: check every shard file, name incomplete ones, merge when all are complete "
                "(what the merge job runs)");
  cmd->callback([a] { run_slurm_command(*a); });
}

}  // namespace dgq::cli
