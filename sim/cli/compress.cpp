// `dgq compress TRACE -o OUT --scheme SPEC`: a trace v1 to a compressed file
// (docs/compressed-format.md), with a summary of what is stored.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "progress_options.hpp"

namespace dgq::cli {

namespace {
struct CompressArgs {
  std::string input, output, scheme = "dgq", device = "cpu";
  int threads = 0;
  ProgressArgs progress;
};

void print_summary(const sim::CompressionSummary& s, const std::string& output) {
  std::printf("wrote %s\n", output.c_str());
  std::printf("scheme        %s\n", s.scheme.c_str());
  std::printf("layers        %d\n", s.layers);
  std::printf("kv heads      %d  (x2 tensors, %lld tokens x %d dims, %s)\n", s.kv_heads,
              static_cast<long long>(s.tokens), s.head_dim, std::string(dtype_name(s.dtype)).c_str());
  std::printf("input bytes   %llu\n", static_cast<unsigned long long>(s.input_bytes));
  for (const auto& [name, bytes] : s.part_bytes)
    std::printf("  %-11s %llu\n", name.c_str(), static_cast<unsigned long long>(bytes));
  std::printf("stored bytes  %llu\n", static_cast<unsigned long long>(s.stored_bytes));
  std::printf("ratio         %.4f\n", s.ratio());
  if (s.mean_segments > 0.0) std::printf("mean segments %.3f per head and tensor\n", s.mean_segments);
}
}  // namespace

void register_compress(CLI::App& app) {
  auto* cmd = app.add_subcommand("compress", "Compress a trace's K and V with a scheme (HDF5 in, HDF5 out)");
  auto args = std::make_shared<CompressArgs>();
  cmd->add_option("trace", args->input, "input trace (docs/trace-format.md)")->required();
  cmd->add_option("-o,--output", args->output, "output file, e.g. OUT.dgqz.h5")->required();
  cmd->add_option("--scheme", args->scheme, scheme_option_help("scheme spec, e.g. dgq:group_ratio=0.75"))
      ->capture_default_str();
  add_device_option(*cmd, args->device);
  add_threads_option(*cmd, args->threads);
  add_progress_options(*cmd, args->progress);
  cmd->callback([args] {
    const auto scheme = make_scheme_on(args->scheme, args->device);
    print_summary(sim::compress_trace(args->input, args->output, *scheme, args->threads, progress_mode(args->progress)),
                  args->output);
  });
}

}  // namespace dgq::cli
