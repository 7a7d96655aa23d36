// `dgq schemes`: the registered scheme families with their parameters (defaults, ranges, help),
// straight from the registry (dgq/registry.hpp). --markdown prints the table that
// docs/schemes.md holds (a ctest keeps the two equal).
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "dgq/registry.hpp"

namespace dgq::cli {

void register_schemes(CLI::App& app) {
  auto* cmd = app.add_subcommand("schemes", "List the scheme families and their parameters (from the registry)");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown, "Print the Markdown table of docs/schemes.md instead");
  cmd->callback([markdown] {
    const std::string text = *markdown ? scheme_table_markdown() : scheme_help(Device::cpu);
    std::fputs(text.c_str(), stdout);
  });
}

}  // namespace dgq::cli
