// Conformance of the fast CPU backend (cpu/) with the reference, generated from the registry
// as the GPU suite (tests/gpu/test_gpu_conformance.cpp) does for cuda/: every family with a
// fast CPU implementation (has_fast_cpu_implementation) must store the reference's bytes and
// decode them to the reference's output, for several shapes, dtypes and kinds of input (edge
// shapes, constant rows, zeros, outliers, values beyond fp16), with and without the
// rot=hadamard modifier, and must refuse bad input with the reference's message.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "test_scheme_support.hpp"

namespace dgq::test {
namespace {

std::vector<std::string> fast_families() {
  std::vector<std::string> out;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device == Device::cpu && has_fast_cpu_implementation(f.name)) out.emplace_back(f.name);
  }
  return out;
}

// Inputs that reach every branch of the fast kernels: random rows with outliers, a constant
// tensor, zeros with signed zeros, a segment change, and (fp32) values beyond fp16's range.
std::vector<std::pair<std::string, OwnedTensor>> inputs(std::int64_t tokens, std::int64_t channels, DType dtype) {
  std::vector<std::pair<std::string, OwnedTensor>> out;
  out.emplace_back("random", random_tensor(tokens, channels, 11, dtype));
  const std::int64_t n = tokens * channels;
  out.emplace_back("constant",
                   tensor_from(std::vector<float>(static_cast<std::size_t>(n), 1.5f), tokens, channels, dtype));
  std::vector<float> zeros(static_cast<std::size_t>(n), 0.0f);
  for (std::int64_t i = 0; i < n; i += 3) zeros[i] = -0.0f;
  out.emplace_back("zeros", tensor_from(zeros, tokens, channels, dtype));
  std::vector<float> steps = gaussian_values(n, 12);
  for (std::int64_t i = n / 2; i < n; ++i) steps[i] *= 40.0f;  // a variance change mid-tensor
  out.emplace_back("variance step", tensor_from(steps, tokens, channels, dtype));
  if (dtype == DType::f32) {
    std::vector<float> big = gaussian_values(n, 13);
    for (float& e : big) e *= 1e5f;
    out.emplace_back("beyond fp16", tensor_from(big, tokens, channels, dtype));
  }
  return out;
}

}  // namespace

TEST_CASE("cpu: every fast CPU family stores and decodes the reference's bytes (registry-driven)",
          "[scheme][conformance][cpu]") {
  const std::vector<std::string> families = fast_families();
  REQUIRE(families.size() >= 9);  // a dropped registration of cpu/ must not pass silently
  for (const std::string& family : families) {
    for (const std::string& spec : {family, spec_with_key(family, "rot", "hadamard")}) {
      const auto fast = make_scheme(spec, Device::cpu);
      const auto ref = make_scheme(spec, Device::reference);
      REQUIRE(fast->spec() == ref->spec());
      for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
        for (const auto& [tokens, wanted] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {0, 64}, {1, 64}, {33, 128}, {100, 64}, {300, 128}, {65, 33}}) {
          const std::int64_t channels = accepted_channels(family, wanted);
          for (const auto& [kind, x] : inputs(tokens, channels, dtype)) {
            for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
              CAPTURE(spec, dtype_name(dtype), tokens, channels, kind, role == TensorRole::key);
              Compressed a, b;
              const std::string ea = typed_error_of([&] { a = ref->compress(x.view(), role); });
              const std::string eb = typed_error_of([&] { b = fast->compress(x.view(), role); });
              REQUIRE(eb == ea);
              if (!ea.empty()) continue;
              REQUIRE(b.parts == a.parts);
              REQUIRE(b.segment_edges() == a.segment_edges());
              OwnedTensor from_ref(dtype, tokens, channels), from_fast(dtype, tokens, channels);
              const std::string da = typed_error_of([&] { ref->decompress(a, from_ref.mut()); });
              REQUIRE(typed_error_of([&] { fast->decompress(a, from_fast.mut()); }) == da);
              REQUIRE(from_fast.bytes == from_ref.bytes);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("cpu: boundaries=online (the causal cache's segments) stores the reference's bytes",
          "[scheme][conformance][cpu]") {
  for (const std::string spec :
       {"dgq:boundaries=online", "dgq:boundaries=online,granularity=segment-channel,markers=inband",
        "dgq2:boundaries=online",
        "dgq2:boundaries=online,kgran=segment-channel-group,kgroup=5,"
        "budget=max_groups,max_groups=8,win=8,markers=bitmap",
        "dgq2:boundaries=online,rot=hadamard,vgran=segment,residual=9"}) {
    const auto fast = make_scheme(spec, Device::cpu);
    const auto ref = make_scheme(spec, Device::reference);
    REQUIRE(fast->spec() == ref->spec());
    for (const DType dtype : {DType::f16, DType::f32}) {
      for (const auto& [tokens, channels] :
           std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 64}, {1, 64}, {33, 128}, {300, 64}}) {
        for (const auto& [kind, x] : inputs(tokens, channels, dtype)) {
          for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
            CAPTURE(spec, dtype_name(dtype), tokens, channels, kind, role == TensorRole::key);
            Compressed a, b;
            const std::string ea = typed_error_of([&] { a = ref->compress(x.view(), role); });
            REQUIRE(typed_error_of([&] { b = fast->compress(x.view(), role); }) == ea);
            if (!ea.empty()) continue;
            REQUIRE(b.parts == a.parts);
            REQUIRE(b.segment_edges() == a.segment_edges());
          }
        }
      }
    }
  }
}

TEST_CASE("cpu: every fast CPU family names the first NaN/Inf as the reference does",
          "[scheme][conformance][cpu][errors]") {
  for (const std::string& family : fast_families()) {
    const std::int64_t channels = accepted_channels(family, 64);
    for (const DType dtype : {DType::f16, DType::f32}) {
      for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
        for (const std::int64_t at : {std::int64_t{0}, 70 * channels + 5, 199 * channels + channels - 1}) {
          CAPTURE(family, dtype_name(dtype), bad, at);
          OwnedTensor x = random_tensor(200, channels, 21, dtype);
          store_element(x.mut(), at, bad);
          const std::string want =
              typed_error_of([&] { make_scheme(family, Device::reference)->compress(x.view(), TensorRole::key); });
          REQUIRE_FALSE(want.empty());
          CHECK(typed_error_of([&] { make_scheme(family, Device::cpu)->compress(x.view(), TensorRole::key); }) == want);
        }
      }
    }
  }
}

TEST_CASE("cpu: Device::cpu runs the reference for a family without a fast path", "[scheme][registry][cpu]") {
  REQUIRE(find_scheme_family("fp16", Device::reference) != nullptr);
  CHECK_FALSE(has_fast_cpu_implementation("fp16"));
  CHECK(has_fast_cpu_implementation("dgq"));
  CHECK(has_fast_cpu_implementation("q8_0"));
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::reference) continue;
    CAPTURE(f.name);
    const SchemeFamily* on_cpu = find_scheme_family(f.name, Device::cpu);
    REQUIRE(on_cpu != nullptr);  // every family runs on the CPU
    CHECK(on_cpu->order == f.order);
    CHECK(on_cpu->summary == f.summary);
    CHECK(on_cpu->params.size() == f.params.size());
  }
}

}  // namespace dgq::test
