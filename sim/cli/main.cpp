// dgq: the command-line front end. Errors reach the user as one line, "dgq: error: ...",
// naming what and where, with exit code 2 (the README's promise), usage errors included;
// --help and --version print through CLI11 and exit 0.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/files/provenance/build_info.hpp"
#include "parse_errors.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dgq: Dynamic Group Quantization of the KV cache (reference, simulator, tools)"};
  app.require_subcommand(1);
  // The last word is the build's version string, as results files record it (dgq_version).
  app.set_version_flag("--version", "dgq 0.1.0 " + dgq::sim::build_info().version_string());
  dgq::cli::register_compress(app);
  dgq::cli::register_decompress(app);
  dgq::cli::register_inspect(app);
  dgq::cli::register_memory(app);
  dgq::cli::register_gen_trace(app);
  dgq::cli::register_replay(app);
  dgq::cli::register_sweep(app);
  dgq::cli::register_merge(app);
  dgq::cli::register_slurm(app);
  dgq::cli::register_schemes(app);
  dgq::cli::register_metrics(app);
  dgq::cli::register_eval(app);
  dgq::cli::register_export(app);
  dgq::cli::register_tokenize(app);
  const std::vector<std::string> args = dgq::cli::with_llama_cpp_spellings(argc, argv);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes a vector last word first
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "dgq: error: " << dgq::one_line(dgq::cli::parse_error_message(app, args, e)) << "\n";
    return 2;
  } catch (const dgq::Error& e) {
    std::cerr << "dgq: error: " << dgq::one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dgq: error: " << dgq::one_line(e.what()) << "\n";
    return 2;
  }
  return 0;
}
