#include "parse_errors.hpp"

#include <cstdlib>

#include "dgq/spelling_suggestion.hpp"

namespace dgq::cli {

namespace {

// Every spelling of every named option: "--threads", "-o", "--output", "--help", "-h".
std::vector<std::string> option_spellings(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : command.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

const CLI::Option* option_named(const CLI::App& command, const std::string& spelling) {
  for (const CLI::Option* opt : command.get_options()) {
    if (opt->nonpositional() && opt->check_name(spelling)) return opt;
  }
  return nullptr;
}

bool is_number(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// The first word that is not an option: with no command on the line, the command mistyped.
std::string first_word(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") break;
    if (!a.empty() && a.front() != '-') return a;
  }
  return "";
}

std::vector<const CLI::App*> all_commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& candidates) {
  const std::string guess = closest_spelling(typed, candidates);
  return guess.empty() ? "" : " (did you mean '" + guess + "'?)";
}

}  // namespace

std::string first_unknown_option(const CLI::App& command, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 2 || a.front() != '-' || is_number(a)) continue;
    const std::size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const CLI::Option* opt = option_named(command, name);
    // "-ofile": a short option with its value attached.
    if (opt == nullptr && a[1] != '-') opt = option_named(command, a.substr(0, 2));
    if (opt == nullptr) return name;
    const bool value_attached = eq != std::string::npos || (a[1] != '-' && a.size() > 2);
    const bool takes_value = opt->get_expected_max() > 0 && opt->get_type_size_max() > 0;
    if (takes_value && !value_attached) ++i;
  }
  return "";
}

namespace {

std::string message_without_command(const CLI::App& app, const std::vector<std::string>& args) {
  if (const std::string word = first_word(args); !word.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : all_commands(app)) names.push_back(sub->get_name());
    return "unknown command '" + word + "'" + did_you_mean(word, names) + "; run 'dgq --help'";
  }
  if (const std::string option = first_unknown_option(app, args); !option.empty())
    return "unknown option '" + option + "'; run 'dgq --help'";
  return "no command given; run 'dgq --help' for the list";
}

// What an option's type takes, for a value CLI11 could not convert to it.
std::string what_type_takes(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  // Integer options carry number_options.hpp's checks, which refuse first; this is the rest.
  if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) return "a whole number";
  if (type.rfind("FLOAT", 0) == 0) return "a number";
  return "a value of type " + type;
}

// CLI11's message, or for a value it could not convert ("Could not convert: --noise-rate = x",
// its words for every option without a dgq check) the option, the text and what it takes.
std::string in_dgq_words(const CLI::App& command, const CLI::ParseError& e) {
  const std::string text = e.what();
  const std::string prefix = "Could not convert: ";
  const std::size_t equals = text.find(" = ");
  if (dynamic_cast<const CLI::ConversionError*>(&e) == nullptr || text.rfind(prefix, 0) != 0 ||
      equals == std::string::npos)
    return text;
  const std::string name = text.substr(prefix.size(), equals - prefix.size());
  const CLI::Option* opt = option_named(command, name);
  if (opt == nullptr) return text;
  return name + ": must be " + what_type_takes(*opt) + ", got '" + text.substr(equals + 3) + "'";
}

std::string message_for_command(const CLI::App& app, const CLI::App& command, const std::vector<std::string>& args,
                                std::size_t at, const CLI::ParseError& e) {
  const std::string hint = "; run 'dgq " + command.get_name() + " --help'";
  const std::vector<std::string> before(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(at));
  if (const std::string early = first_unknown_option(app, before); !early.empty()) {
    if (option_named(command, early) != nullptr)
      return "'" + early + "' is an option of 'dgq " + command.get_name() + "': give it after the command" + hint;
    return "unknown option '" + early + "' before the command" + hint;
  }
  const std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.end());
  if (const std::string option = first_unknown_option(command, rest); !option.empty()) {
    return command.get_name() + ": unknown option '" + option + "'" + did_you_mean(option, option_spellings(command)) +
           hint;
  }
  return command.get_name() + ": " + in_dgq_words(command, e) + hint;
}

}  // namespace

std::string parse_error_message(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e) {
  // The first command name on the line is the command: words before it are values of options
  // misplaced before it (dgq --threads 2 replay ...).
  for (std::size_t at = 0; at < args.size() && args[at] != "--"; ++at) {
    for (const CLI::App* sub : all_commands(app)) {
      if (sub->check_name(args[at])) return message_for_command(app, *sub, args, at, e);
    }
  }
  return message_without_command(app, args);
}

}  // namespace dgq::cli
