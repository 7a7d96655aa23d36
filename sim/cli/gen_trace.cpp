// `dgq gen-trace -o FILE ...`: a synthetic attention trace (dgq/sim/synth/synth.hpp).
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "number_options.hpp"
#include "progress_options.hpp"

namespace dgq::cli {

void register_gen_trace(CLI::App& app) {
  auto* cmd = app.add_subcommand("gen-trace", "Generate a synthetic attention trace (HDF5, docs/trace-format.md)");
  auto options = std::make_shared<sim::SynthOptions>();
  auto output = std::make_shared<std::string>();
  auto dtype = std::make_shared<std::string>("f16");
  cmd->add_option("-o,--output", *output, "output trace file (.h5)")->required();
  cmd->add_option("--kind", options->kind, "prompt kind: code, prose, legal, poetry")
      ->check(CLI::IsMember(sim::synth_kinds()))
      ->capture_default_str();
  cmd->add_option("--model", options->model, "model name stored in the trace")->capture_default_str();
  // Each option's own domain here; what depends on another (--q-heads a multiple of --kv-heads,
  // --probes at most --tokens, an even --head-dim) in SynthOptions::validate.
  using Limits = sim::SynthOptions;
  cmd->add_option("--layers", options->layers, "layers")
      ->check(whole_number(1, Limits::kMaxLayers))
      ->capture_default_str();
  cmd->add_option("--q-heads", options->q_heads, "query heads (a multiple of --kv-heads)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_option("--kv-heads", options->kv_heads, "KV heads")
      ->check(whole_number(1, Limits::kMaxKvHeads))
      ->capture_default_str();
  cmd->add_option("--head-dim", options->head_dim, "channels per head (even)")
      ->check(whole_number(2, Limits::kMaxHeadDim))
      ->capture_default_str();
  cmd->add_option("--tokens", options->tokens, "sequence length L")
      ->check(whole_number(1, Limits::kMaxTokens))
      ->capture_default_str();
  cmd->add_option("--probes", options->probes, "query probe positions T (at most --tokens)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "PRNG seed")->check(whole_number_u64())->capture_default_str();
  cmd->add_option("--noise-rate", options->noise_rate, "fraction of tokens replaced by noise tokens, [0, 1)")
      ->capture_default_str();
  cmd->add_option("--rope-theta", options->rope_theta, "RoPE base (500000 llama-3, 10000 llama-2)")
      ->capture_default_str();
  cmd->add_option("--outlier-channels", options->outlier_channels,
                  "key outlier channels per head (at most half of --head-dim)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--dtype", *dtype, "f16 or f32")->check(CLI::IsMember({"f16", "f32"}))->capture_default_str();
  auto progress = std::make_shared<ProgressArgs>();
  add_progress_options(*cmd, *progress);
  cmd->callback([options, output, dtype, progress] {
    options->dtype = parse_dtype(*dtype);
    sim::write_synthetic_trace(*options, *output, progress_mode(*progress));
    std::cout << "wrote " << *output << ": " << options->kind << ", " << options->layers << " layers x "
              << options->kv_heads << " KV heads (" << options->q_heads << " q heads) x " << options->tokens
              << " tokens x " << options->head_dim << " dims, " << options->probes << " probes, "
              << dtype_name(options->dtype) << ", seed " << options->seed << ", noise rate " << options->noise_rate
              << "\n";
  });
}

}  // namespace dgq::cli
