// CPU-vs-GPU conformance generated from the registry (dgq/registry.hpp), as llama.cpp's
// test-backend-ops runs every backend against the CPU from one table: every family registered
// for Device::cuda is compared with its CPU registration, at its default spec and with each
// integer parameter at the ends of its declared range, over edge shapes, dtypes and roles. A
// family that gains a CUDA registration gets these tests without a new test file.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "gpu_inputs.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

namespace {

// The default spec, then one spec per integer parameter at each end of its range, capped so
// that the shapes below stay cheap (the segment budget of dgq's win=65536 is 1 segment).
std::vector<std::string> specs_of(const SchemeFamily& f) {
  std::vector<std::string> specs{std::string(f.name)};
  for (const SchemeParam& p : f.params) {
    if (p.kind != SchemeParam::Kind::integer) continue;
    for (const int v : {p.min, p.max})
      specs.push_back(std::string(f.name) + ":" + std::string(p.key) + "=" + std::to_string(v));
  }
  return specs;
}

std::string input_error_of(const Scheme& s, ConstTensor x) {
  try {
    (void)s.compress(x, TensorRole::key);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("gpu: every CUDA family stores its CPU family's bytes (registry-driven)", "[gpu][scheme][conformance]") {
  std::size_t families = 0;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::cuda) continue;
    ++families;
    REQUIRE(find_scheme_family(f.name, Device::cpu) != nullptr);
    for (const std::string& spec : specs_of(f)) {
      const auto cpu = make_scheme(spec, Device::cpu);
      const auto gpu = make_scheme(spec, Device::cuda);
      REQUIRE(gpu->spec() == cpu->spec());
      for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
        for (const auto& [tokens, channels] :
             std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {1, 1}, {17, 3}, {257, 65}, {1000, 128}}) {
          CAPTURE(spec, dtype_name(dtype), tokens, channels);
          REQUIRE(gpu->planned_bytes(tokens, channels, dtype, TensorRole::key) ==
                  cpu->planned_bytes(tokens, channels, dtype, TensorRole::key));
          const HostUnit x = make_unit(dtype, tokens, channels, variance_steps(test::seed() + 7, 100));
          for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
            const Compressed a = cpu->compress(x.view(), role);
            const Compressed b = gpu->compress(x.view(), role);
            REQUIRE(a.scheme == b.scheme);
            REQUIRE(a.parts == b.parts);
            REQUIRE(a.segment_edges() == b.segment_edges());
            HostUnit from_cpu = x, from_gpu = x;
            cpu->decompress(b, from_cpu.view());
            gpu->decompress(a, from_gpu.view());
            REQUIRE(from_cpu.bytes == from_gpu.bytes);
          }
        }
      }
    }
  }
  REQUIRE(families >= 1);  // dgq at least: a dropped registration must not pass silently
}

TEST_CASE("gpu: every CUDA family reports a NaN as its CPU family does", "[gpu][scheme][conformance][errors]") {
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::cuda) continue;
    CAPTURE(f.name);
    HostUnit x = make_unit(DType::f32, 300, 40, variance_steps(test::seed() + 9, 50));
    store_element(x.view(), 123 * 40 + 7, std::numeric_limits<float>::quiet_NaN());
    const std::string cpu = input_error_of(*make_scheme(f.name, Device::cpu), x.view());
    REQUIRE_FALSE(cpu.empty());
    CHECK(input_error_of(*make_scheme(f.name, Device::cuda), x.view()) == cpu);
  }
}
