// format_passkey_table(): the console table of `dgq eval --task passkey` (dgq/sim/eval/passkey.hpp):
// one row per scheme, the accuracy per prompt length (over every depth and key), overall, and
// the mean log-probability of the true key.
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "dgq/sim/eval/passkey.hpp"

namespace dgq::sim {

std::string format_passkey_table(const PasskeyResult& r) {
  std::ostringstream s;
  s << r.model << ": passkey, " << r.prompts << " prompts, " << cache_mode_name(r.cache) << " cache"
    << (r.keys == KeyPosition::pre_rope ? ", keys stored before RoPE" : "") << ", raw rows in "
    << dtype_name(r.raw_dtype) << "\n";
  s << std::left << std::setw(34) << "scheme" << std::right << std::setw(5) << "raw" << std::setw(7) << "bits";
  if (!r.schemes.empty())
    for (const PasskeyLengthSummary& l : r.schemes[0].by_length)
      s << std::setw(10) << ("acc@" + std::to_string(l.length));
  s << std::setw(8) << "acc%" << std::setw(13) << "logprob"
    << "\n";
  for (const PasskeySchemeResult& scheme : r.schemes) {
    char cell[64];
    s << std::left << std::setw(34) << scheme.spec.substr(0, 34) << std::right << std::setw(5)
      << (scheme.raw_dtype == "none" ? "-" : scheme.raw_dtype);
    std::snprintf(cell, sizeof cell, " %6.2f", scheme.bits_per_element);
    s << cell;
    for (const PasskeyLengthSummary& l : scheme.by_length) {
      std::snprintf(cell, sizeof cell, " %9.1f", 100.0 * l.accuracy);
      s << cell;
    }
    std::snprintf(cell, sizeof cell, " %7.1f %12.4f\n", 100.0 * scheme.accuracy, scheme.logprob_mean);
    s << cell;
  }
  s << "forward pass: " << std::fixed << std::setprecision(1) << r.tokens_per_second << " tokens/s\n";
  return s.str();
}

}  // namespace dgq::sim
