// The refusal every resume makes when a run, chunk or file of another dgq build or another
// configuration would be mixed with this one's (docs/results-format.md, "Provenance").
#include "dgq/errors.hpp"
#include "dgq/sim/files/provenance/build_info.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"

namespace dgq::sim {

Provenance this_build(std::string config_hash) { return {build_info().version_string(), std::move(config_hash)}; }

std::string mixed_provenance_message(const std::string& file, const std::string& what, const Provenance& recorded,
                                     const Provenance& expected) {
  return file + ": " + what + " was written by dgq " + recorded.version + " (config " + recorded.config_hash +
         "), this is dgq " + expected.version + " (config " + expected.config_hash +
         "); rerun into a new output or pass " + kAllowMixedFlag;
}

void require_provenance(const std::string& file, const std::string& what, const Provenance& recorded,
                        const Provenance& expected, bool allow_mixed) {
  if (allow_mixed || recorded == expected) return;
  throw InputError(mixed_provenance_message(file, what, recorded, expected));
}

}  // namespace dgq::sim
