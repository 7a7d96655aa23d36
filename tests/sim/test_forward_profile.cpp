// The forward pass's profile (dgq/sim/model/forward_profile.hpp): the operations it counts per
// part, that the timed operations add them, and its table. The seconds are not checked beyond
// their sign: a timed test would decide CI by the machine's load.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/model/forward_profile.hpp"
#include "forward/forward_ops.hpp"

namespace fwd = dgq::sim::forward;
using dgq::sim::attention_flops;
using dgq::sim::ForwardPart;

TEST_CASE("attention flops count 4 d per attended key per query head", "[sim][profile]") {
  SECTION("no query, no operation") { CHECK(attention_flops(0, 0, 10, 0, 4, 64) == 0.0); }
  SECTION("the first token attends to itself alone") { CHECK(attention_flops(1, 0, 1, 0, 4, 64) == 4.0 * 64 * 4); }
  SECTION("causal: the query at position p attends to p + 1 keys") {
    CHECK(attention_flops(4, 0, 4, 0, 1, 1) == 4.0 * (1 + 2 + 3 + 4));
  }
  SECTION("a decoder's queries start at first_position and see every earlier key") {
    CHECK(attention_flops(2, 8, 10, 0, 1, 1) == 4.0 * (9 + 10));
  }
  SECTION("a sliding window keeps the last `window` positions") {
    CHECK(attention_flops(4, 0, 4, 2, 1, 1) == 4.0 * (1 + 2 + 2 + 2));
  }
  SECTION("no key beyond those stored") { CHECK(attention_flops(1, 5, 3, 0, 1, 1) == 4.0 * 3); }
}

TEST_CASE("the profile adds each timed operation's count to its part", "[sim][profile]") {
  dgq::sim::reset_forward_profile();
  const dgq::sim::Weight w{3, 5, std::vector<float>(15, 0.5f)};
  const fwd::RowMat x = fwd::RowMat::Constant(2, 5, 1.0f);
  const fwd::RowMat y = fwd::project(x, w, dgq::sim::Arithmetic::blocked);
  CHECK(y(1, 2) == 2.5f);
  fwd::project(x, w, dgq::sim::Arithmetic::row_exact);

  dgq::sim::ModelConfig c;
  c.num_q_heads = 2;
  c.num_kv_heads = 1;
  c.head_dim = 32;
  const std::int64_t tokens = 3;
  const std::vector<float> q(static_cast<std::size_t>(c.num_q_heads * tokens * c.head_dim), 0.1f);
  const std::vector<float> kv(static_cast<std::size_t>(c.num_kv_heads * tokens * c.head_dim), 0.2f);
  const fwd::AttentionKeys keys{kv.data(), kv.data(), tokens, nullptr};
  fwd::attention(q, tokens, 0, keys, c, 0, dgq::sim::Arithmetic::blocked);

  const dgq::sim::ForwardProfile& p = dgq::sim::forward_profile();
  CHECK(p[ForwardPart::weight_gemms].flops == 2 * (2.0 * 2 * 3 * 5));
  CHECK(p[ForwardPart::attention].flops == attention_flops(tokens, 0, tokens, 0, 2, 32));
  CHECK(p[ForwardPart::logits].flops == 0.0);
  CHECK(p[ForwardPart::weight_gemms].seconds >= 0.0);
  CHECK(p.other_seconds() == 0.0);  // no pass timed: the parts' time is not "other"

  dgq::sim::reset_forward_profile();
  CHECK(dgq::sim::forward_profile()[ForwardPart::weight_gemms].flops == 0.0);
}

TEST_CASE("the profile table names every part and the measured GEMM rate", "[sim][profile]") {
  dgq::sim::reset_forward_profile();
  const std::string table = dgq::sim::format_forward_profile(dgq::sim::forward_profile(), 123.4, "onednn", 2, 5.0);
  for (const char* part :
       {"weight GEMMs", "attention", "logits", "cache (store, read)", "other (norms, RoPE)", "all passes",
        "123.4 GFLOP/s, onednn", "2 threads", "scoring (", "5.000 s of the run's 5.000 s"})
    CHECK(table.find(part) != std::string::npos);
}
