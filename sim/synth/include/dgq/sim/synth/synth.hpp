#pragma once
// Synthetic attention traces that look like real KV caches (docs/trace-format.md,
// `dgq gen-trace`). Deterministic from the seed: the generator uses its own PRNG
// (splitmix64 + xoshiro256**, Box-Muller normals), never std:: distributions, whose output
// differs between standard libraries.
//
// What is modelled (each from published KV-cache analyses):
// - keys: a few channels (outlier_channels per head) with 10-20x the typical magnitude,
//   persisting over all tokens; values have no channel outliers;
// - RoPE (rotate-half convention, theta = rope_theta) applied to the keys; queries are built
//   in the same post-RoPE frame;
// - an attention-sink first token that every query attends to;
// - queries peaky on a few keys (3 targets per probe plus the sink, logits solved exactly);
// - regimes of different variance along the sequence, per kind (code: instruction header /
//   parameters / code body; prose: smooth drift; poetry: short regular verses; legal: long
//   uniform paragraphs), so that segmentation has something real to find;
// - optional noise tokens marked in /noise_mask, as a random character behaves in a real model:
//   key of ordinary norm with the usual outlier channels but a random direction elsewhere,
//   value of ordinary scale and random direction; queries never aim at them, so they get
//   little attention (as in the real SmolLM2 noisy traces).
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/files/output/progress.hpp"
#include "dgq/sim/files/trace.hpp"
#include "dgq/sim/model/model_shapes.hpp"
#include "dgq/tensor.hpp"

namespace dgq::sim {

struct SynthOptions {
  std::string kind = "code";  // code | prose | legal | poetry
  std::string model = "synthetic-llama-3-8b-like";
  int layers = 4;
  int q_heads = model_shape("llama-3-8b").q_heads;  // the heads of the model it is like
  int kv_heads = model_shape("llama-3-8b").kv_heads;
  int head_dim = model_shape("llama-3-8b").head_dim;
  std::int64_t tokens = 2048;  // L
  int probes = 32;             // T query positions, spread over the sequence, the last at L-1
  std::uint64_t seed = 1;
  double noise_rate = 0.0;       // fraction of tokens (excluding token 0) replaced by noise
  DType dtype = DType::f16;      // f16 or f32 for k, v and q
  double rope_theta = 500000.0;  // llama-3; 10000 for llama-2-like shapes
  int outlier_channels = 4;      // per KV head
  double outlier_scale = 15.0;   // outlier magnitude relative to a typical channel (10-20x)

  // The domains validate() enforces (gen-trace's options check the same at parse time).
  static constexpr int kMaxLayers = 4096, kMaxKvHeads = 1024, kMaxHeadDim = 4096;
  static constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;

  void validate() const;  // throws ParameterError naming the option
};

std::vector<std::string> synth_kinds();  // {"code", "prose", "legal", "poetry"}

// The generator's version, recorded in every generated trace (root attribute
// `generator_version`) and part of the sweep's trace cache path (OUTPUT.cache/gen-v<N>/).
// Bump it in any change that makes the generator write other bytes for the same options, so
// that no cached trace of the old generator is reused. It is deliberately not the dgq commit:
// the generator changes rarely, and a new commit must not regenerate every cached trace.
inline constexpr std::int64_t kGeneratorVersion = 1;

// The canonical text of the options, recorded as `generator_options`:
// "kind=code,model=...,layers=4,q_heads=32,kv_heads=8,head_dim=128,tokens=2048,probes=32,
// seed=1,noise_rate=0,dtype=f16,rope_theta=500000,outlier_channels=4,outlier_scale=15"
// (numbers in their shortest exact form).
std::string generator_options_text(const SynthOptions& options);

// The trace metadata the options describe (q_pos, noise_mask, /text, generator_version and
// generator_options filled in).
TraceMeta synthetic_meta(const SynthOptions& options);

// One layer, deterministic in (options, layer); noise already injected when noise_rate > 0.
LayerData synthesize_layer(const SynthOptions& options, int layer);

// Writes the whole trace (layer by layer, through TraceWriter: PATH.partial then rename), with
// the provenance attributes of this build and config_hash of "generate\n" + the generator's
// version and options (docs/trace-format.md). `progress`: a unit is a layer.
void write_synthetic_trace(const SynthOptions& options, const std::string& path,
                           ProgressMode progress = ProgressMode::off);

// Noise injection, usable on any trace (e.g. a sweep over noise rates of a recorded trace):
// round(rate * (L-1)) distinct tokens among 1..L-1 (token 0, the sink, is kept), chosen
// with the PRNG seeded by seed. Returns the [L] mask (1 = noise).
std::vector<std::uint8_t> make_noise_mask(std::int64_t tokens, double rate, std::uint64_t seed);
// Replaces the masked tokens' K and V in every KV head with ordinary-looking random vectors
// (deterministic in seed and layer.layer): each gets the per-channel mean of its 64 nearest
// clean tokens (token 0, the sink, excluded), plus on the outlier channels (clean RMS > 4x
// the median channel's) their usual per-channel spread, plus on the other channels a random
// direction scaled to those neighbours' typical deviation norm. Queries are left as they are.
void inject_noise(LayerData& layer, const std::vector<std::uint8_t>& mask, std::uint64_t seed);

}  // namespace dgq::sim
