// CompressedLayer: a user's compressed heads turned into decode attention's cache. For every
// family the kernel reads (ggml blocks, rotated or not; DGQ v1; dgq2; KIVI with its raw rows;
// TurboQuant; vLLM's presets in their slots) the step equals attention on Scheme::decompress's
// cache within rounding, computed here in double from the decompressed values; heads that
// disagree and families the kernel cannot read are refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dgq/cpu/compressed_layer.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"

namespace {

struct Layer {
  std::vector<dgq::Compressed> k, v;
  std::vector<std::vector<float>> k_values, v_values;  // decompressed, fp32
};

Layer compress_layer(const std::string& spec, int kv_heads, std::int64_t tokens, int head_dim, dgq::DType dtype) {
  const auto scheme = dgq::make_scheme(spec);
  Layer layer;
  for (int h = 0; h < kv_heads; ++h) {
    for (const auto role : {dgq::TensorRole::key, dgq::TensorRole::value}) {
      dgq::test::OwnedTensor x(dtype, tokens, head_dim);
      dgq::test::SplitMix64 rng(1000u * static_cast<std::uint64_t>(h) + (role == dgq::TensorRole::key ? 1u : 2u));
      for (std::int64_t t = 0; t < tokens; ++t)
        for (int d = 0; d < head_dim; ++d) x.set(t, d, rng.symmetric(0.5f + static_cast<float>(t % 5)));
      const bool key = role == dgq::TensorRole::key;
      (key ? layer.k : layer.v).push_back(scheme->compress(x.view(), role));
      dgq::test::OwnedTensor y(dtype, tokens, head_dim);
      scheme->decompress((key ? layer.k : layer.v).back(), y.mut());
      (key ? layer.k_values : layer.v_values).push_back(dgq::to_float(y.view()));
    }
  }
  return layer;
}

// Softmax attention in double over the decompressed values: query head h reads KV head h / group.
std::vector<double> plain_attention(const Layer& layer, const std::vector<float>& q, int group, int head_dim,
                                    float scale) {
  const auto kv_heads = static_cast<int>(layer.k.size());
  const std::int64_t tokens = layer.k[0].tokens;
  std::vector<double> out(q.size());
  for (int qh = 0; qh < kv_heads * group; ++qh) {
    const std::vector<float>& k = layer.k_values[static_cast<std::size_t>(qh / group)];
    const std::vector<float>& v = layer.v_values[static_cast<std::size_t>(qh / group)];
    std::vector<double> s(static_cast<std::size_t>(tokens));
    double m = -1e300, l = 0;
    for (std::int64_t t = 0; t < tokens; ++t) {
      double dot = 0;
      for (int d = 0; d < head_dim; ++d) dot += double(q[qh * head_dim + d]) * k[t * head_dim + d];
      s[t] = dot * scale;
      m = std::max(m, s[t]);
    }
    for (auto& e : s) l += (e = std::exp(e - m));
    for (int d = 0; d < head_dim; ++d) {
      double o = 0;
      for (std::int64_t t = 0; t < tokens; ++t) o += s[t] * v[t * head_dim + d];
      out[static_cast<std::size_t>(qh * head_dim + d)] = o / l;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("CompressedLayer reads every family the kernel has a format for, as attention on the decompressed cache",
          "[decode_attention][compressed_layer]") {
  const int kv_heads = 2, group = 3, head_dim = 128;
  const std::int64_t tokens = 300;  // two chunks, a partial one
  for (const char* spec : {"q8_0", "q4_0:rot=hadamard", "iq4_nl", "dgq", "dgq:granularity=segment-channel,rot=hadamard",
                           "dgq2:kbits=4,vbits=3,residual=16", "kivi-4", "kivi-2:group=64,residual=0,rot=hadamard",
                           "turboquant:bits=3", "turboquant_k3v4_nc"}) {
    for (const auto dtype : {dgq::DType::f16, dgq::DType::f32}) {
      CAPTURE(spec, dgq::dtype_name(dtype));
      const Layer layer = compress_layer(spec, kv_heads, tokens, head_dim, dtype);
      const dgq::cpu::CompressedLayer stored(layer.k, layer.v);
      REQUIRE(stored.shape(group).tokens == tokens);
      std::vector<float> q(static_cast<std::size_t>(kv_heads * group * head_dim));
      dgq::test::SplitMix64 rng(7);
      for (auto& x : q) x = rng.symmetric(1.0f);
      const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      std::vector<float> out(q.size());
      stored.attend(q.data(), group, scale, out.data(), 2);
      const std::vector<double> want = plain_attention(layer, q, group, head_dim, scale);
      double worst = 0, largest = 0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        worst = std::max(worst, std::abs(out[i] - want[i]));
        largest = std::max(largest, std::abs(want[i]));
      }
      // fp32 input: the kernel's fp32 sums against double ones, a rotation's rounding (seen:
      // under 1e-6). fp16 input: the decompressed cache also rounds every value to fp16 where
      // the kernel keeps a ggml block's exact product, half an fp16 ulp each (seen: under 7e-4).
      const double bound = dtype == dgq::DType::f16 ? 2e-3 : 1e-5;
      CHECK(worst <= bound * std::max(largest, 1.0));
    }
  }
}

TEST_CASE("CompressedLayer refuses families it cannot read and heads that disagree",
          "[decode_attention][compressed_layer]") {
  const Layer q8 = compress_layer("q8_0", 2, 40, 64, dgq::DType::f16);
  const Layer q4 = compress_layer("q4_0", 2, 40, 64, dgq::DType::f16);
  const Layer fp8 = compress_layer("fp8-e4m3", 1, 40, 64, dgq::DType::f16);
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(fp8.k, fp8.v), Catch::Contains("not 'fp8-e4m3"));
  std::vector<dgq::Compressed> mixed{q8.k[0], q4.k[1]};
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(mixed, q8.v),
                      Catch::Contains("K head 1 ('q4_0', 40 x 64) differs from head 0"));
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(q8.v, q8.k), Catch::Contains("compressed as keys"));
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(std::vector<dgq::Compressed>{q8.k[0]}, q8.v),
                      Catch::Contains("1 K heads and 2 V heads"));
  const Layer q8_f32 = compress_layer("q8_0", 2, 40, 64, dgq::DType::f32);
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(q8.k, q8_f32.v), Catch::Contains("K holds 40 x 64 f16, V 40 x 64 f32"));
  // K and V of different ggml types: the kernel's own refusal.
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(q8.k, q4.v), Catch::Contains("K and V may differ in format only"));
  REQUIRE_THROWS_WITH(dgq::cpu::CompressedLayer(compress_layer("q8_0:sink=4", 1, 40, 64, dgq::DType::f16).k,
                                                compress_layer("q8_0:sink=4", 1, 40, 64, dgq::DType::f16).v),
                      Catch::Contains("modifier sink="));
}
