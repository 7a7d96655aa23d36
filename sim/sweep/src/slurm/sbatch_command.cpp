// Submitting with sbatch: the command line and its answer.
#include <cctype>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/slurm.hpp"

namespace dgq::sim {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string sbatch_command(const std::string& sbatch, const std::string& script, const std::string& after_job) {
  std::string cmd = shell_quote(sbatch) + " --parsable";
  if (!after_job.empty()) cmd += " --dependency=afterany:" + after_job;
  return cmd + " " + shell_quote(script);
}

std::string parse_sbatch_job_id(const std::string& output) {
  // --parsable prints "jobid" or "jobid;cluster" on its last line (warnings may come first).
  std::string line = output;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  line = line.substr(line.find_last_of('\n') + 1);
  line = line.substr(0, line.find(';'));
  if (line.empty() || line.find_first_not_of("0123456789") != std::string::npos) {
    throw Error("sbatch did not answer with a job id (--parsable), it printed: '" + output + "'");
  }
  return line;
}

}  // namespace dgq::sim
