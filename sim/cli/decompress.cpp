// `dgq decompress IN -o OUT`: a compressed file back to a trace v1.
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "progress_options.hpp"

namespace dgq::cli {

void register_decompress(CLI::App& app) {
  auto* cmd = app.add_subcommand("decompress", "Decompress a dgq compress output into a trace (docs/trace-format.md)");
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  cmd->add_option("input", *input, "compressed file")->required();
  cmd->add_option("-o,--output", *output, "output trace file")->required();
  add_threads_option(*cmd, *threads);
  auto progress = std::make_shared<ProgressArgs>();
  add_progress_options(*cmd, *progress);
  cmd->callback([input, output, threads, progress] {
    sim::decompress_to_trace(*input, *output, *threads, progress_mode(*progress));
    std::cout << "wrote " << *output << "\n";
  });
}

}  // namespace dgq::cli
