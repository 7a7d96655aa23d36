// `dgq export RESULTS [--format csv|jsonl] [-o OUT]`: a results file of any kind as one tidy
// table (docs/results-format.md, "Export"), to stdout or to OUT (written through OUT.partial).
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/export.hpp"

namespace dgq::cli {

void register_export(CLI::App& app) {
  struct ExportArgs {
    std::string input;
    std::string format = "csv";
    std::string output = "-";
  };
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a replay, sweep, eval or passkey results file as one table: CSV or JSON Lines");
  cmd->add_option("results", args->input, "Results file (dgq-results, dgq-eval or dgq-passkey-results)")->required();
  // A usage error like any other option's ("export: --format: ...; run 'dgq export --help'"),
  // with the library's words: parquet gets the way to convert the CSV.
  const CLI::Validator known_format(
      [](std::string& value) -> std::string {
        try {
          (void)sim::parse_export_format(value);
          return "";
        } catch (const ParameterError& e) {
          return e.what();
        }
      },
      "csv|jsonl", "export format");
  cmd->add_option("--format", args->format, "csv (default, with a header row) or jsonl (one JSON object per line)")
      ->check(known_format);
  cmd->add_option("-o,--output", args->output, "Output file, written through OUTPUT.partial; - (default) for stdout");
  cmd->callback([args] {
    const sim::ExportFormat format = sim::parse_export_format(args->format);
    require_existing_files({args->input});
    if (args->output == "-") {
      sim::export_results(args->input, format, std::cout);
      std::cout.flush();
    } else {
      const sim::ExportSummary s = sim::export_results_to_file(args->input, format, args->output);
      std::cout << "wrote " << args->output << ": " << s.rows << " rows x " << s.columns << " columns\n";
    }
  });
}

}  // namespace dgq::cli
