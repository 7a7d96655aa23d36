// The decode attention tests' oracles (decode_attention_cases.hpp): the scalar twin of the
// documented order on decoded floats, plain attention in double on the decompressed cache with
// its bound, and check_case, which holds the kernel to both.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode_attention_cases.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/rotation.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace decode_test {

// The scalar twin: the documented order, written out on decoded floats.
float twin_dot(const float* q, const float* k, int n) {
  float acc[2][8] = {};
  for (int d = 0; d < n; ++d) {
    float& a = acc[(d / 8) % 2][d % 8];
    a = std::fma(q[d], k[d], a);
  }
  float lanes[8];
  for (int j = 0; j < 8; ++j) lanes[j] = acc[0][j] + acc[1][j];
  return ar::lane_tree_sum8(lanes);
}

struct Partial {
  float m = 0, l = 0;
  std::vector<float> acc;
};

Partial twin_chunk(const float* q, const float* k, const float* v, std::int64_t first, std::int64_t count, int D,
                   float scale) {
  std::vector<float> s(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) s[t] = twin_dot(q, k + (first + t) * D, D) * scale;
  Partial part;
  part.m = *std::max_element(s.begin(), s.end());
  float lanes[8] = {};
  part.acc.assign(static_cast<std::size_t>(D), 0.0f);
  for (std::int64_t t = 0; t < count; ++t) {
    const float w = ar::softmax_exp(s[t] - part.m);
    lanes[t % 8] += w;
    for (int d = 0; d < D; ++d) part.acc[d] = std::fma(w, v[(first + t) * D + d], part.acc[d]);
  }
  part.l = ar::lane_tree_sum8(lanes);
  return part;
}

std::vector<float> twin_attention(const Problem& p) {
  const auto& s = p.c.shape;
  const int D = s.head_dim;
  std::vector<float> out(p.q.size());
  for (int qh = 0; qh < s.query_heads(); ++qh) {
    const int kvh = qh / s.group;
    std::vector<float> q(p.q.begin() + qh * D, p.q.begin() + (qh + 1) * D);
    if (p.stored.k_rotated) dgq::hadamard_rotate_row(q.data(), D, dgq::rules::hadamard_block(D, true));
    if (p.k.twin_rotation) p.k.twin_rotation(q.data());
    Partial run;
    for (std::int64_t first = 0; first < s.tokens; first += ar::kChunkTokens) {
      const auto count = std::min(ar::kChunkTokens, s.tokens - first);
      Partial c = twin_chunk(q.data(), p.k.decoded[kvh].data(), p.v.decoded[kvh].data(), first, count, D, p.scale);
      if (first == 0) {
        run = c;
        continue;
      }
      const float m_new = std::max(run.m, c.m);
      const float a = ar::softmax_exp(run.m - m_new), b = ar::softmax_exp(c.m - m_new);
      run.l = std::fma(c.l, b, run.l * a);
      for (int d = 0; d < D; ++d) run.acc[d] = std::fma(c.acc[d], b, run.acc[d] * a);
      run.m = m_new;
    }
    for (int d = 0; d < D; ++d) out[qh * D + d] = run.acc[d] / run.l;
    if (p.stored.v_rotated) dgq::hadamard_rotate_row(out.data() + qh * D, D, dgq::rules::hadamard_block(D, false));
    if (p.v.twin_rotation) p.v.twin_rotation(out.data() + qh * D);
  }
  return out;
}

// The kernel's error against exact attention on the same decompressed values, per element,
// with u = 2^-24 and S = max over tokens of scale * sum_d |q_d k_d| (how ill-conditioned a
// score is):
//  - a score is a dot of D terms (error <= D u S); rot=hadamard adds the rotation's rounding of
//    q and of the stored k against the decompressed one (log2(256) = 8 butterfly stages, each
//    within u of the row's norm: <= 2 D u S more, generously);
//  - exp(s - m) then has a relative error of at most twice that (s and m) plus the exp's own
//    few ulps (Cephes' polynomial: < 4u);
//  - the sums over tokens (l and acc, fp32, <= kChunkTokens terms in a chunk, then one merge
//    per chunk, each term >= 0 for l) add (kChunkTokens + chunks) u relative to sum |p v|;
//  - out = acc / l is a convex combination of the V rows, so relative weight errors of delta
//    move it by at most 2 delta max|V|; the inverse rotation of the output adds 8u max|V| D.
// A kernel that reads a wrong nibble or drops a chunk is off by a fraction of max|V|, far above.
Reference plain_attention(const Problem& p) {
  const auto& s = p.c.shape;
  const int D = s.head_dim;
  const double u = 0x1p-24;
  Reference r;
  r.out.assign(p.q.size(), 0.0);
  for (int qh = 0; qh < s.query_heads(); ++qh) {
    const auto& k = p.k.decompressed[qh / s.group];
    const auto& v = p.v.decompressed[qh / s.group];
    std::vector<double> score(static_cast<std::size_t>(s.tokens));
    double conditioning = 0, vmax = 0;
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      double dot = 0, magnitude = 0;
      for (int d = 0; d < D; ++d) {
        dot += static_cast<double>(p.q[qh * D + d]) * k[t * D + d];
        magnitude += std::fabs(static_cast<double>(p.q[qh * D + d]) * k[t * D + d]);
      }
      score[t] = dot * p.scale;
      conditioning = std::max(conditioning, magnitude * p.scale);
      for (int d = 0; d < D; ++d) vmax = std::max(vmax, std::fabs(static_cast<double>(v[t * D + d])));
    }
    const double m = *std::max_element(score.begin(), score.end());
    double l = 0;
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      const double w = std::exp(score[t] - m);
      l += w;
      for (int d = 0; d < D; ++d) r.out[qh * D + d] += w * v[t * D + d];
    }
    for (int d = 0; d < D; ++d) r.out[qh * D + d] /= l;
    // TurboQuant's Pi is two Walsh-Hadamard transforms: twice the Hadamard block's terms.
    const double k_rotation_terms = p.stored.k_rotated ? 2.0 : p.k.rotation ? 4.0 : 0.0;
    const double score_error = ((1.0 + k_rotation_terms) * D * u + p.k.output_rounding) * conditioning;
    const double chunks = static_cast<double>((s.tokens + ar::kChunkTokens - 1) / ar::kChunkTokens);
    const double delta = 2 * score_error + 4 * u + (static_cast<double>(ar::kChunkTokens) + chunks) * u;
    const double rotation = p.stored.v_rotated ? 8 * u * D : p.v.rotation ? 16 * u * D : 0;
    r.bound = std::max(r.bound, (2 * delta + rotation + p.v.output_rounding) * vmax);
  }
  return r;
}

std::string describe(const DecodeCase& c, std::uint64_t seed) {
  const auto& s = c.shape;
  return spec_of(c) + " kv_heads=" + std::to_string(s.kv_heads) + " group=" + std::to_string(s.group) +
         " head_dim=" + std::to_string(s.head_dim) + " tokens=" + std::to_string(s.tokens) +
         " values=" + std::to_string(static_cast<int>(c.values)) + " seed=" + std::to_string(seed);
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Every check of one case: twin bits, plain bound, thread counts, the two paths.
void check_case(const DecodeCase& c, std::uint64_t seed) {
  INFO(describe(c, seed));
  const Problem p = make_problem(c, seed);
  const auto got = run_kernel(p, 1);
  REQUIRE(same_bytes(got, twin_attention(p)));
  const auto ref = plain_attention(p);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - ref.out[i]));
  INFO("worst |kernel - plain| " << worst << ", bound " << ref.bound);
  REQUIRE(worst <= ref.bound);
  REQUIRE(same_bytes(got, run_kernel(p, 2)));
  REQUIRE(same_bytes(got, run_kernel(p, 3)));
  REQUIRE(same_bytes(got, run_kernel(p, 1, DecodePath::scalar)));
}

}  // namespace decode_test
