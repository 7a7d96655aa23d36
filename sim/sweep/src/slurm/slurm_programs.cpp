// Running Slurm's programs: sbatch to submit, squeue to find this submission's jobs.
#include <sys/wait.h>

#include <cstdio>
#include <memory>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/slurm_submission.hpp"

namespace dgq::sim {

namespace {

// Runs a shell command line and returns what it printed (stdout and stderr: sbatch's and
// squeue's complaints then reach the error message).
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

}  // namespace

std::string submit_slurm_job(const std::string& sbatch, const std::string& script, const std::string& after_job) {
  return parse_sbatch_job_id(run_command(sbatch_command(sbatch, script, after_job)));
}

std::vector<std::string> slurm_jobs_in_flight(const std::string& squeue, const std::vector<std::string>& scripts) {
  // Every state of a job not yet ended, a requeued one included (squeue's default omits some).
  const char* states =
      "PENDING,RUNNING,COMPLETING,CONFIGURING,SUSPENDED,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,"
      "RESIZING,SPECIAL_EXIT,STAGE_OUT,STOPPED,SIGNALING";
  return jobs_running_scripts(run_command(shell_quote(squeue) + " -h -t " + states + " -o '%A|%o'"), scripts);
}

}  // namespace dgq::sim
