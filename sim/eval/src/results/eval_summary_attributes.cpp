#include "dgq/sim/eval/eval_summary_attributes.hpp"

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"

namespace dgq::sim {

void write_summary_attributes(hid_t g, const EvalSummary& s) {
  h5::write_int_attribute(g, "tokens", s.tokens);
  const std::pair<const char*, double> values[] = {
      {"bits_per_element", s.bits_per_element}, {"bits_averaged", s.bits_averaged}, {"bits_k", s.bits_k}, {"bits_v", s.bits_v}, {"ppl", s.ppl}, {"ppl_stderr", s.ppl_stderr}, {"dppl", s.dppl},
      {"dppl_stderr", s.dppl_stderr}, {"kld_mean", s.kld_mean}, {"kld_stderr", s.kld_stderr},
      {"kld_median", s.kld_median}, {"kld_p90", s.kld_p90}, {"kld_p99", s.kld_p99}, {"kld_max", s.kld_max},
      {"rms_dp", s.rms_dp}, {"same_top1", s.same_top1}, {"attn_kl_mean", s.attn_kl_mean}};
  for (const auto& [name, value] : values) h5::write_double_attribute(g, name, value);
  h5::write_doubles(g, "attn_kl_per_layer", s.attn_kl_per_layer, "attn_kl_per_layer");
}

}  // namespace dgq::sim
