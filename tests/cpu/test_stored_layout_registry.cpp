// The stored-layout trait against the readers, family by family from the registry (no hand
// list): a family that declares a layout (SchemeFamily::stored_layout) has its default spec's
// heads read by read_stored_head, each role read or refused for a limit the reader states by
// name ("which the kernel does not read": turboquant_k8v4's FP8 keys, dgq2's in-band markers),
// and at least one role read; a family that declares none is refused with its scheme named.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "dgq/cpu/stored_head.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"

namespace {

// A head_dim the family takes and the kernel reads (a multiple of 32).
std::int64_t head_dim_for_layout_check(const dgq::SchemeFamily& f) {
  for (const std::int64_t d : {128, 64, 256, 32})
    if (f.accepts_channels == nullptr || f.accepts_channels(d)) return d;
  return 0;
}

dgq::Compressed compressed_for_layout_check(const dgq::Scheme& scheme, std::int64_t head_dim, dgq::TensorRole role) {
  const std::int64_t tokens = 40;
  dgq::test::OwnedTensor x(dgq::DType::f16, tokens, head_dim);
  dgq::test::SplitMix64 rng(role == dgq::TensorRole::key ? 21u : 22u);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t d = 0; d < head_dim; ++d) x.set(t, d, rng.symmetric(0.5f + static_cast<float>(t % 3)));
  return scheme.compress(x.view(), role);
}

// Whether the head was read: true, false for a limit the reader states; anything else throws.
bool read_or_refused_for_stated_limit(const dgq::Compressed& c) {
  try {
    (void)dgq::cpu::read_stored_head(c);
    return true;
  } catch (const std::invalid_argument& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("which the kernel does not read") != std::string::npos);
    return false;
  }
}

}  // namespace

TEST_CASE("every family that declares a stored layout is read by the decode kernel, the others are refused by name",
          "[decode_attention][registry]") {
  int readable = 0;
  for (const dgq::SchemeFamily& f : dgq::scheme_family_list()) {
    if (f.device != dgq::Device::cpu) continue;
    CAPTURE(f.name);
    const std::int64_t head_dim = head_dim_for_layout_check(f);
    REQUIRE(head_dim > 0);
    const auto scheme = dgq::make_scheme(std::string(f.name));
    const dgq::Compressed k = compressed_for_layout_check(*scheme, head_dim, dgq::TensorRole::key);
    const dgq::Compressed v = compressed_for_layout_check(*scheme, head_dim, dgq::TensorRole::value);
    if (f.stored_layout == dgq::StoredLayout::unreadable) {
      REQUIRE_THROWS_WITH(dgq::cpu::read_stored_head(k), Catch::Contains("not '" + k.scheme + "'"));
      continue;
    }
    ++readable;
    const bool key_read = read_or_refused_for_stated_limit(k), value_read = read_or_refused_for_stated_limit(v);
    CHECK((key_read || value_read));
  }
  CHECK(readable >= 10);  // q8_0, q4_0, iq4_nl, dgq, dgq2, kivi-2/4, turboquant and the presets
}
