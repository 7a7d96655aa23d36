#include "progress_options.hpp"

namespace dgq::cli {

void add_progress_options(CLI::App& cmd, ProgressArgs& args) {
  CLI::Option* quiet = cmd.add_flag(
      "-q,--quiet", args.quiet,
      "No progress on stderr (by default a bar with rate and ETA on a terminal, elsewhere a line per finished unit)");
  cmd.add_flag("--progress", args.progress, "Progress on stderr: the default; kept for old command lines")
      ->excludes(quiet);
}

sim::ProgressMode progress_mode(const ProgressArgs& args) { return sim::progress_mode_for_stderr(args.quiet); }

}  // namespace dgq::cli
