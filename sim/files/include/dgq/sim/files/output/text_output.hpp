#pragma once
// Text outputs (JSON summaries, Slurm scripts) written as every dgq output is: to PATH.partial,
// renamed to PATH once complete (sim/files/include/dgq/sim/files/output/partial_file.hpp holds the rule); a device,
// FIFO or socket (/dev/stdout, a named pipe) is written through instead, never renamed over.
#include <string>

namespace dgq::sim {

// Writes `text` to PATH through PATH.partial (a symbolic link's target through TARGET.partial:
// the link stays); `executable` adds the owner's and group's execute bits (Slurm scripts).
// Throws Error("cannot write 'PATH.partial'") when the write fails (no PATH.partial is left
// behind), InputError when PATH holds results runs (output/runs_held.hpp).
void write_text_file(const std::string& path, const std::string& text, bool executable = false);

// Throws now what write_text_file(PATH) would refuse later (PATH is a directory, or a file that
// holds results runs), so that a command with a text output fails before its work.
void check_text_output(const std::string& path);

}  // namespace dgq::sim
