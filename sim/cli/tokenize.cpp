// `dgq tokenize --model MODEL.gguf --text-file TEXT.txt [-o TOKENS.h5]`: a text as the GGUF's own
// tokenizer splits it (sim/model/src/tokenizer; llama-tokenize's role), written as a token file for
// `dgq eval --text` and sweeps, or printed as ids.
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/sim/model/tokens.hpp"

namespace dgq::cli {

void register_tokenize(CLI::App& app) {
  struct TokenizeArgs {
    std::string model, text_file, output;
  };
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Tokenize a text with a GGUF's tokenizer: a token file, or the ids");
  cmd->add_option("--model", args->model, "The GGUF whose tokenizer splits the text")->required();
  cmd->add_option("--text-file", args->text_file, "Plain UTF-8 text")->required();
  cmd->add_option("-o,--output", args->output,
                  "Token file to write (dgq-tokens, docs/eval.md); without it the ids are printed on one line");
  cmd->callback([args] {
    require_existing_files({args->model, args->text_file});
    const std::string text = sim::read_text_file(args->text_file);
    const sim::TokenText tokens = sim::tokenize_with_gguf(args->model, text);
    if (args->output.empty()) {
      for (std::size_t i = 0; i < tokens.tokens.size(); ++i) std::cout << (i ? " " : "") << tokens.tokens[i];
      std::cout << "\n";
      return;
    }
    sim::write_token_file(args->output, tokens, text);
    std::cout << "wrote " << args->output << ": " << tokens.tokens.size() << " tokens (" << tokens.model << ", "
              << tokens.tokenizer_id << ")\n";
  });
}

}  // namespace dgq::cli
