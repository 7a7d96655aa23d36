#include "dgq/sim/eval/eval_summary_attributes.hpp"

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"

namespace dgq::sim {

void write_summary_attributes(hid_t g, const EvalSummary& s) {
  h5::write_int_attribute(g, "tokens", s.tokens);
  for (const auto& [name, value] : summary_figures(s)) h5::write_double_attribute(g, name, value);
  h5::write_doubles(g, "attn_kl_per_layer", s.attn_kl_per_layer, "attn_kl_per_layer");
}

}  // namespace dgq::sim
