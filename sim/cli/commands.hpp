#pragma once
// Each subcommand of `dgq` lives in its own file and registers itself here.
#include <CLI/CLI.hpp>

namespace dgq::cli {

void register_compress(CLI::App& app);    // compress.cpp
void register_decompress(CLI::App& app);  // decompress.cpp
void register_inspect(CLI::App& app);     // inspect.cpp
void register_memory(CLI::App& app);      // memory.cpp
void register_gen_trace(CLI::App& app);   // gen_trace.cpp
void register_replay(CLI::App& app);      // replay.cpp
void register_sweep(CLI::App& app);       // sweep.cpp
void register_merge(CLI::App& app);       // merge.cpp
void register_eval(CLI::App& app);        // eval.cpp

}  // namespace dgq::cli
