// resolve_slurm_options(): the submission's paths made absolute (the jobs run elsewhere, from
// another working directory) and its defaults filled in.
#include <cctype>
#include <filesystem>

#include "dgq/errors.hpp"
#include "dgq/sim/sweep/slurm_submission.hpp"

namespace dgq::sim {

namespace {

namespace fs = std::filesystem;

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

}  // namespace

SlurmOptions resolve_slurm_options(const SlurmRequest& r) {
  SlurmOptions o = r.slurm;
  o.config = absolute(r.config);
  o.output = absolute(r.output);
  o.dir = absolute(r.dir.empty() ? r.output + ".slurm" : r.dir);
  o.dgq = r.dgq.empty() ? fs::read_symlink("/proc/self/exe").string() : absolute(r.dgq);
  o.job_name = r.job_name.empty() ? default_job_name(r.config) : r.job_name;
  check_sbatch_safe("--dir", o.dir);
  check_sbatch_safe("--job-name", o.job_name);
  return o;
}

}  // namespace dgq::sim
