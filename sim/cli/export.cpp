// `dgq export RESULTS [--format csv|jsonl|parquet] [-o OUT]`: a results file of any kind as one tidy
// table (docs/results-format.md, "Export"), to stdout or to OUT (written through OUT.partial).
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/export/export.hpp"

namespace dgq::cli {

void register_export(CLI::App& app) {
  struct ExportArgs {
    std::string input;
    std::string format = "csv";
    std::string output = "-";
  };
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a replay, sweep, eval or passkey results file as one table: CSV, JSON Lines or Parquet");
  cmd->add_option("results", args->input, "Results file (dgq-results, dgq-eval or dgq-passkey-results)")->required();
  // A usage error like any other option's ("export: --format: ...; run 'dgq export --help'"),
  // with the library's words.
  const CLI::Validator known_format(
      [](std::string& value) -> std::string {
        try {
          (void)sim::parse_export_format(value);
          return "";
        } catch (const ParameterError& e) {
          return e.what();
        }
      },
      "csv|jsonl|parquet", "export format");
  cmd->add_option("--format", args->format,
                  "csv (default, with a header row), jsonl (one JSON object per line) or parquet (binary: -o FILE or a "
                  "redirected stdout)")
      ->check(known_format);
  cmd->add_option("-o,--output", args->output, "Output file, written through OUTPUT.partial; - (default) for stdout");
  cmd->callback([args] {
    const sim::ExportFormat format = sim::parse_export_format(args->format);
    require_existing_files({args->input});
    if (args->output == "-") {
      // A binary table on a terminal helps no one (and may upset it).
      if (format == sim::ExportFormat::parquet && isatty(STDOUT_FILENO))
        throw ParameterError("--format parquet writes binary: give -o FILE or redirect stdout");
      sim::export_results(args->input, format, std::cout);
      std::cout.flush();
    } else {
      const sim::ExportSummary s = sim::export_results_to_file(args->input, format, args->output);
      std::cout << "wrote " << args->output << ": " << s.rows << " rows x " << s.columns << " columns\n";
    }
  });
}

}  // namespace dgq::cli
