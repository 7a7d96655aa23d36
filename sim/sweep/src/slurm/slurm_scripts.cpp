// The sbatch scripts of `dgq slurm`: a job array over the shards and a merge job.
#include <sstream>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/slurm.hpp"
#include "slurm/job_kinds.hpp"

namespace dgq::sim {

namespace {

std::string shard_file_name(std::size_t index, std::size_t tasks) {
  return "shard-" + std::to_string(index) + "-of-" + std::to_string(tasks) + ".h5";
}

// An extra line as given ("--qos=long" or "#SBATCH --qos=long") as an #SBATCH line.
std::string sbatch_line(const std::string& extra) {
  return extra.rfind("#SBATCH", 0) == 0 ? extra : "#SBATCH " + extra;
}

// The #SBATCH lines both jobs share (where to run, for how long, extra lines).
void write_placement(std::ostream& s, const SlurmOptions& o, bool with_mem) {
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.time.empty()) s << "#SBATCH --time=" << o.time << "\n";
  if (with_mem && !o.mem.empty()) s << "#SBATCH --mem=" << o.mem << "\n";
  for (const std::string& extra : o.extra_lines) s << sbatch_line(extra) << "\n";
}

}  // namespace

std::string slurm_shard_path(const SlurmOptions& o, std::size_t index) {
  return o.dir + "/shards/" + shard_file_name(index, o.tasks);
}

std::string slurm_array_script_path(const SlurmOptions& o) {
  return o.dir + "/" + slurm_job_kind(o.kind).name + ".sbatch";
}

std::string slurm_merge_script_path(const SlurmOptions& o) { return o.dir + "/merge.sbatch"; }

std::string slurm_array_ranges(const std::vector<std::size_t>& indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) {
      out += '-';  // appended apart: "-" + std::string trips GCC 12's -Wrestrict false positive
      out += std::to_string(indices[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string slurm_array_script(const SlurmOptions& o, const std::vector<std::size_t>& indices) {
  if (indices.empty()) throw ParameterError("slurm: a job array needs at least one task");
  const SlurmJobKindInfo& kind = slurm_job_kind(o.kind);
  const std::string n = std::to_string(o.tasks);
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by `dgq slurm` (docs/cluster.md). Task i of this job array runs shard i/" << n << " of\n"
    << "# " << o.config << "\n"
    << "# into " << o.dir << "/shards/shard-i-of-" << n << ".h5. A requeued or\n"
    << "# resubmitted task resumes from that file: runs already complete in it are skipped.\n"
    << "#SBATCH --job-name=" << o.job_name << "\n"
    << "#SBATCH --array=" << slurm_array_ranges(indices);
  if (o.max_running > 0) s << "%" << o.max_running;
  s << "\n"
    << "#SBATCH --output=" << o.dir << "/logs/" << kind.name << "-%A_%a.out\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --requeue\n";
  if (o.cpus_per_task > 0) s << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n";
  if (o.gpus_per_task > 0) s << "#SBATCH --gpus-per-task=" << o.gpus_per_task << "\n";
  write_placement(s, o, true);
  s << "set -euo pipefail\n"
    << "export OMP_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-1}\"\n"
    << "shard=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}\"\n"
    << "shard_file=" << shell_quote(o.dir + "/shards/shard-") << "\"$shard\"" << shell_quote("-of-" + n + ".h5") << "\n"
    << "echo \"dgq slurm: $(date -u +%FT%TZ) task $shard/" << n
    << " of job ${SLURM_ARRAY_JOB_ID:-?} on $(hostname), restart ${SLURM_RESTART_COUNT:-0}, $OMP_NUM_THREADS "
       "thread(s) -> $shard_file\"\n"
    << "exec " << kind.task_command(o) << "\n";
  return s.str();
}

std::string slurm_merge_script(const SlurmOptions& o) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by `dgq slurm` (docs/cluster.md). The merge job: it runs once every task of the\n"
    << "# array has ended, however it ended (afterany), checks that every shard file holds all\n"
    << "# its runs, names each shard that does not (and fails), and only then merges them into\n"
    << "# " << o.output << "\n"
    << "# If it starts while array tasks are still queued (requeued?), it submits itself again.\n"
    << "#SBATCH --job-name=" << o.job_name << "-merge\n"
    << "#SBATCH --output=" << o.dir << "/logs/merge-%j.out\n";
  write_placement(s, o, true);
  s << "set -euo pipefail\n"
    << "exec " << shell_quote(o.dgq) << " slurm " << shell_quote(o.config) << " -o " << shell_quote(o.output)
    << " --tasks " << o.tasks << " --dir " << shell_quote(o.dir) << " --sbatch " << shell_quote(o.sbatch)
    << " --squeue " << shell_quote(o.squeue) << " --merge\n";
  return s.str();
}

}  // namespace dgq::sim
