#pragma once
// --quiet and --progress of the commands that run for minutes (eval, sweep, replay, compress):
// progress is on by default (a bar on a terminal, a line per finished unit elsewhere);
// --quiet turns it off; --progress, once needed to get lines in a log, is kept so old command
// lines still run.
#include <CLI/CLI.hpp>

#include "dgq/sim/files/output/progress.hpp"

namespace dgq::cli {

struct ProgressArgs {
  bool progress = false;
  bool quiet = false;
};

void add_progress_options(CLI::App& cmd, ProgressArgs& args);
sim::ProgressMode progress_mode(const ProgressArgs& args);

}  // namespace dgq::cli
