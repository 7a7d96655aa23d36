// generator_options_text(): the options of a synthetic trace as one canonical line, recorded in
// the trace so that a cached trace is reused only for exactly the options it was made with.
#include <charconv>

#include "dgq/sim/synth/synth.hpp"

namespace dgq::sim {

namespace {
// The shortest text that reads back as the same double: 0.1 (not 0.10000000000000001), 500000
// (not 5e+05); scientific only where plain digits would not fit 64 characters.
std::string exact(double v) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed);
  if (error != std::errc()) end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}
}  // namespace

std::string generator_options_text(const SynthOptions& o) {
  return "kind=" + o.kind + ",model=" + o.model + ",layers=" + std::to_string(o.layers) +
         ",q_heads=" + std::to_string(o.q_heads) + ",kv_heads=" + std::to_string(o.kv_heads) +
         ",head_dim=" + std::to_string(o.head_dim) + ",tokens=" + std::to_string(o.tokens) +
         ",probes=" + std::to_string(o.probes) + ",seed=" + std::to_string(o.seed) +
         ",noise_rate=" + exact(o.noise_rate) + ",dtype=" + std::string(dtype_name(o.dtype)) +
         ",rope_theta=" + exact(o.rope_theta) + ",outlier_channels=" + std::to_string(o.outlier_channels) +
         ",outlier_scale=" + exact(o.outlier_scale);
}

}  // namespace dgq::sim
