// `dgq eval --task passkey` (eval_passkey.hpp): the CLI's part, thin; the run is sim/eval/src/passkey/.
#include "eval_passkey.hpp"

#include <iostream>

#include "dgq/errors.hpp"

namespace dgq::cli {

void refuse_perplexity_options(const CLI::App& eval) {
  // Refused, not ignored: a command that names them expects them to change the run.
  for (const char* name : {"--ctx", "--base", "--base-logits", "--chunks", "--save-logits", "--allow-mixed-versions"})
    if (eval.count(name) > 0)
      throw ParameterError(std::string(name) +
                           ": not used by --task passkey (prompt lengths come from the task file; "
                           "scores are exact matches, with no base cache or resume)");
}

void run_passkey_command(const sim::PasskeyOptions& options) {
  const sim::PasskeyResult result = sim::run_passkey(options);
  std::cout << sim::format_passkey_table(result);
  std::cout << "eval -> " << options.output_path << (options.json_path.empty() ? "" : " and " + options.json_path)
            << "\n";
}

}  // namespace dgq::cli
