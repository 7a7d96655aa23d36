#pragma once
// CLI11's parse errors in dgq's words. CLI11 reports what it tripped over, which is not always
// what went wrong: a misspelt option (--thread 1) is set aside and its value taken as a
// positional file, so the error named the value; and its messages carry neither the
// "dgq: error:" prefix nor the command. Here the command line is read again to find the cause.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace dgq::cli {

// The message of one error line (what follows "dgq: error: ") for a parse error of `app` on
// `args` (argv without the program name), ending with a hint to run the command's --help.
// Reports, in this order: an unknown command; an option given before the command (a command's
// option misplaced, or none at all); an option unknown to the chosen command (with the closest
// of its options); else CLI11's own message, prefixed with the command.
std::string parse_error_message(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e);

// The first argument that looks like an option but is none of `command`'s (nor help's), as
// typed without any "=value"; "" when there is none. Values of the options it knows are
// skipped, so a value that begins with '-' is not mistaken for an option, as are negative
// numbers and everything after "--".
std::string first_unknown_option(const CLI::App& command, const std::vector<std::string>& args);

}  // namespace dgq::cli
