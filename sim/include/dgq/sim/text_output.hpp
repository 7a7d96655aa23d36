#pragma once
// Text outputs (JSON summaries, Slurm scripts) written as every dgq output is: to PATH.partial,
// renamed to PATH once complete (sim/src/output/partial_file.hpp holds the rule).
#include <string>

namespace dgq::sim {

// Writes `text` to PATH through PATH.partial; `executable` adds the owner's and group's execute
// bits (Slurm scripts). Throws Error("cannot write 'PATH.partial'") when the write fails; no
// PATH.partial is left behind.
void write_text_file(const std::string& path, const std::string& text, bool executable = false);

}  // namespace dgq::sim
