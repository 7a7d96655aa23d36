// The kernels' fp16 loads and stores use the hardware's conversions (device_common.cuh): they
// must give rule 0's bits (dgq/element_rules.hpp) for every input that can reach them. Widening:
// all 65536 halves. Narrowing: every half's value, the midpoint between neighbouring halves (the
// ties), the fp32 neighbours of both, the overflow edge, fp32 subnormals, and a stride over all
// fp32 bit patterns.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conversion_kernels.hpp"
#include "dgq/element_rules.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

namespace {

std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
float float_of(std::uint32_t u) { return std::bit_cast<float>(u); }

std::vector<float> narrowing_inputs() {
  std::vector<float> in;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float v = rules::half_to_float(static_cast<std::uint16_t>(h));
    in.push_back(v);
    in.push_back(std::nextafter(v, 0.0f));
    in.push_back(std::nextafter(v, v < 0 ? -INFINITY : INFINITY));
    const std::uint16_t next = static_cast<std::uint16_t>(h + 1);
    if ((h & 0x7fffu) < 0x7c00u && (next & 0x7fffu) <= 0x7c00u && (h & 0x8000u) == (next & 0x8000u)) {
      const float mid = static_cast<float>((static_cast<double>(v) + rules::half_to_float(next)) / 2.0);
      in.push_back(mid);  // the tie, exact in fp32
      in.push_back(std::nextafter(mid, 0.0f));
      in.push_back(std::nextafter(mid, mid < 0 ? -INFINITY : INFINITY));
    }
  }
  for (const float edge :
       {65504.0f, 65519.99f, 65520.0f, 65536.0f, 3.0e38f, 1e-45f, 1e-40f, 2.9802322e-8f, 2.9802326e-8f, 5.9604645e-8f})
    for (const float s : {1.0f, -1.0f}) in.push_back(s * edge);
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += 4099) in.push_back(float_of(static_cast<std::uint32_t>(u)));
  return in;
}

}  // namespace

TEST_CASE("gpu: the kernels' fp16 loads widen every half to rule 0's bits", "[gpu][conversions]") {
  std::vector<std::uint16_t> halves(0x10000);
  for (std::uint32_t h = 0; h < 0x10000u; ++h) halves[h] = static_cast<std::uint16_t>(h);
  const std::vector<float> widened = widen_halves_on_device(halves);
  std::int64_t mismatches = 0;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    if (bits_of(widened[h]) != bits_of(rules::half_to_float(halves[h]))) {
      if (++mismatches <= 5) FAIL_CHECK("half 0x" << std::hex << h << ": device 0x" << bits_of(widened[h]));
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("gpu: the kernels' fp16 stores round every tie, neighbour and fp32 pattern as rule 0", "[gpu][conversions]") {
  const std::vector<float> in = narrowing_inputs();
  REQUIRE(in.size() > 1000000);
  const std::vector<std::uint16_t> narrowed = narrow_floats_on_device(in);
  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (narrowed[i] != rules::float_to_half(in[i])) {
      if (++mismatches <= 5) {
        FAIL_CHECK("fp32 0x" << std::hex << bits_of(in[i]) << ": device 0x" << narrowed[i] << ", rule 0x"
                             << rules::float_to_half(in[i]));
      }
    }
  }
  CHECK(mismatches == 0);
}
