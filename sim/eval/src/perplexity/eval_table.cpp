// format_eval_table(): the console table `dgq eval` prints (dgq/sim/eval/eval.hpp).
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "dgq/sim/eval/eval.hpp"

namespace dgq::sim {

std::string format_eval_table(const EvalResult& r) {
  std::ostringstream s;
  const bool causal = r.cache == CacheMode::causal;
  s << r.model << ": " << r.chunks << " chunks x " << r.scored_per_chunk << " scored tokens, "
    << cache_mode_name(r.cache) << " cache" << (r.keys == KeyPosition::pre_rope ? ", keys stored before RoPE" : "")
    << ", raw rows in " << dtype_name(r.raw_dtype) << "\n";
  s << std::left << std::setw(34) << "scheme" << std::right << std::setw(5) << "raw" << std::setw(7) << "bits";
  if (causal) s << std::setw(7) << "avg";
  s << std::setw(18) << "PPL" << std::setw(20) << "dPPL" << std::setw(22) << "KLD mean" << std::setw(11) << "KLD p99"
    << std::setw(11) << "KLD max" << std::setw(9) << "RMS dp" << std::setw(8) << "top1%" << std::setw(12) << "attn KL"
    << "\n";
  for (const auto& scheme : r.schemes) {
    const EvalSummary& x = scheme.summary;
    char line[320];
    s << std::left << std::setw(34) << scheme.spec.substr(0, 34) << std::right << std::setw(5)
      << (scheme.raw_dtype == "none" ? "-" : scheme.raw_dtype);
    std::snprintf(line, sizeof line, " %6.2f", x.bits_per_element);
    s << line;
    if (causal) {
      std::snprintf(line, sizeof line, " %6.2f", x.bits_averaged);
      s << line;
    }
    std::snprintf(line, sizeof line, " %8.4f+-%-7.4f %9.5f+-%-8.5f %10.3e+-%-9.2e %10.3e %10.3e %8.4f %7.2f %11.3e\n",
                  x.ppl, x.ppl_stderr, x.dppl, x.dppl_stderr, x.kld_mean, x.kld_stderr, x.kld_p99, x.kld_max, x.rms_dp,
                  100.0 * x.same_top1, x.attn_kl_mean);
    s << line;
  }
  s << "forward pass: " << std::fixed << std::setprecision(1) << r.tokens_per_second << " tokens/s\n";
  return s.str();
}

}  // namespace dgq::sim
