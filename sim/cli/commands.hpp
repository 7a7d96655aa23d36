#pragma once
// Each subcommand of `dgq` lives in its own file and registers itself here.
#include <CLI/CLI.hpp>

#include <string>

namespace dgq::cli {

void register_compress(CLI::App& app);    // compress.cpp
void register_decompress(CLI::App& app);  // decompress.cpp
void register_inspect(CLI::App& app);     // inspect.cpp
void register_memory(CLI::App& app);      // memory.cpp
void register_gen_trace(CLI::App& app);   // gen_trace.cpp
void register_replay(CLI::App& app);      // replay.cpp
void register_sweep(CLI::App& app);       // sweep.cpp
void register_merge(CLI::App& app);       // merge.cpp
void register_slurm(CLI::App& app);       // slurm.cpp
void register_schemes(CLI::App& app);     // schemes.cpp
void register_metrics(CLI::App& app);     // metrics.cpp
void register_eval(CLI::App& app);        // eval.cpp
void register_export(CLI::App& app);      // export.cpp
void register_tokenize(CLI::App& app);    // tokenize.cpp

// "Scheme spec[, repeatable]: FAMILY[:key=value,...]; families: dgq, fp16, ..." from the
// registry (cli_common.cpp); `dgq schemes` lists their parameters.
std::string scheme_option_help(const char* what);

}  // namespace dgq::cli
