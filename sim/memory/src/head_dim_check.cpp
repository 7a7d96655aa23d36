// Whether a scheme can size a cache of a given head_dim (`dgq memory`), asked of the scheme
// itself rather than of a copy of its rules.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/memory/memory_inputs.hpp"

namespace dgq::sim {

namespace {

// compress of a head with no tokens runs every channel rule a family has (accepts_channels,
// dgq3's block, the rotation's multiple of 64, each side of a K/V pair in its role) before it
// reads a row; test_scheme_conformance.cpp holds every family to that.
std::string scheme_refusal(const Scheme& scheme, int head_dim) {
  static const std::uint16_t no_rows = 0;
  const ConstTensor empty{&no_rows, DType::f16, 0, head_dim};
  for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
    try {
      (void)scheme.compress(empty, role);
    } catch (const InputError& e) {
      return e.what();
    }
  }
  return "";
}

std::string deployment_refusal(const std::string& spec, int head_dim) {
  const std::optional<KvPairSpec> pair = split_kv_pair_spec(spec);
  const std::vector<std::string> sides =
      pair ? std::vector<std::string>{pair->k, pair->v} : std::vector<std::string>{spec};
  for (const std::string& side : sides) {
    const SchemeFamily& family = *parse_spec(side).family;
    if (family.deployed_block > 0 && head_dim % family.deployed_block != 0) {
      return std::string(family.name) + ": llama.cpp stores it in blocks of " + std::to_string(family.deployed_block) +
             " channels and refuses a head_dim they do not divide, got " + std::to_string(head_dim) +
             " (dgq's replay pads the last block, a cache no deployment holds)";
    }
  }
  return "";
}

}  // namespace

std::string head_dim_refusal(const std::string& spec, int head_dim) {
  const std::string refused = scheme_refusal(*make_scheme(spec), head_dim);
  return refused.empty() ? deployment_refusal(spec, head_dim) : refused;
}

}  // namespace dgq::sim
