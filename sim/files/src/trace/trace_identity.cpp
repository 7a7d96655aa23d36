// trace_identity_text(): a trace as it enters a run's configuration hash. Metadata only, so
// that a resume check costs no pass over the K/V data; the long vectors enter as hashes so the
// text stays short enough to read in a debugger.
#include <sstream>

#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/trace.hpp"

namespace dgq::sim {

namespace {

template <typename T>
std::string hash_of_values(const std::vector<T>& values) {
  std::string joined;
  for (const T v : values) joined += std::to_string(static_cast<long long>(v)) + ",";
  return std::to_string(values.size()) + ":" + config_hash(joined);
}

}  // namespace

std::string trace_identity_text(const TraceMeta& m) {
  std::ostringstream s;
  s << "trace.model=" << m.model << "\n"
    << "trace.source=" << m.source << "\n"
    << "trace.prompt_kind=" << m.prompt_kind << "\n"
    << "trace.seed=" << (m.seed ? std::to_string(*m.seed) : "none") << "\n"
    << "trace.shape=" << m.num_layers << "," << m.num_q_heads << "," << m.num_kv_heads << "," << m.head_dim << "\n"
    << "trace.rope_applied=" << (m.rope_applied ? 1 : 0) << "\n"
    << "trace.tokens=" << m.tokens << "\n"
    << "trace.kv_dtype=" << dtype_name(m.kv_dtype) << "\n"
    << "trace.q_pos=" << hash_of_values(m.q_pos) << "\n"
    << "trace.token_ids=" << hash_of_values(m.token_ids) << "\n"
    << "trace.noise_mask=" << hash_of_values(m.noise_mask) << "\n"
    << "trace.layer_ids=" << hash_of_values(m.layer_ids) << "\n"
    << "trace.text=" << m.text.size() << ":" << config_hash(m.text) << "\n"
    << "trace.generator_version=" << (m.generator_version ? std::to_string(*m.generator_version) : "none") << "\n"
    << "trace.generator_options=" << m.generator_options << "\n";
  return s.str();
}

}  // namespace dgq::sim
