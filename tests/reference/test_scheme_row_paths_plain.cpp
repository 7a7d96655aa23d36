// The row-at-a-time compress paths of kivi-2/4, int8/int4-group64, fp8-e4m3 and int8-token (no
// whole-tensor fp32 copy; codes written straight into the stream; kernel-table runs) against
// the rules written out plainly on an fp32 copy of the tensor, element by element: MinMax::add
// in order, uniform_code / rule7_code / float_to_e4m3 per element, BitPacker::put per element.
// Both registrations (Device::reference and Device::cpu) must store exactly these bytes, for
// every dtype, shapes around every group edge (odd channel counts put 4-bit runs off a byte),
// both roles, random, constant and signed-zero inputs.
#include "test_scheme_support.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "../../reference/src/schemes/bit_packing.hpp"
#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/kernels/uniform_codes.hpp"

namespace dgq::test::row_paths_plain {
using namespace dgq::schemes;

namespace {

using Parts = std::map<std::string, std::vector<std::uint8_t>>;

std::vector<float> widened(const OwnedTensor& x) {
  std::vector<float> v(static_cast<std::size_t>(x.size()));
  for (std::int64_t i = 0; i < x.size(); ++i) v[i] = x.at(i);
  return v;
}

void put_float(std::vector<std::uint8_t>& out, float f) {
  const std::uint32_t b = rules::float_bits(f);
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(b >> (8 * k)));
}

Parts plain_kivi(const OwnedTensor& x, TensorRole role, int bits, std::int64_t group, std::int64_t residual) {
  const std::vector<float> v = widened(x);
  const std::int64_t d = x.channels, old = std::max<std::int64_t>(x.tokens - residual, 0);
  const std::int64_t q = role == TensorRole::key ? old / group * group : old;
  const int levels = (1 << bits) - 1;
  Parts p;
  BitPacker packer(p["codes"], static_cast<std::uint64_t>(q * d), bits);
  std::vector<std::uint8_t>& ranges = p["ranges"];
  if (role == TensorRole::key) {
    for (std::int64_t first = 0; first < q; first += group) {
      std::vector<MinMax> m(static_cast<std::size_t>(d));
      for (std::int64_t t = first; t < first + group; ++t)
        for (std::int64_t c = 0; c < d; ++c) m[c].add(v[t * d + c]);
      std::vector<float> lo(m.size()), inv(m.size());
      for (std::int64_t c = 0; c < d; ++c) {
        lo[c] = m[c].stored_lo();
        put_float(ranges, lo[c]);
        put_float(ranges, m[c].stored_hi());
        inv[c] = uniform_inverse(lo[c], m[c].stored_hi(), levels);
      }
      for (std::int64_t t = first; t < first + group; ++t)
        for (std::int64_t c = 0; c < d; ++c)
          packer.put(static_cast<std::uint64_t>(t * d + c), uniform_code(v[t * d + c], lo[c], inv[c], levels));
    }
  } else {
    for (std::int64_t t = 0; t < q && d > 0; ++t) {
      MinMax m;
      for (std::int64_t c = 0; c < d; ++c) m.add(v[t * d + c]);
      const float lo = m.stored_lo(), hi = m.stored_hi(), inv = uniform_inverse(lo, hi, levels);
      put_float(ranges, lo);
      put_float(ranges, hi);
      for (std::int64_t c = 0; c < d; ++c)
        packer.put(static_cast<std::uint64_t>(t * d + c), uniform_code(v[t * d + c], lo, inv, levels));
    }
  }
  const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
  p["residual"].assign(x.bytes.begin() + static_cast<std::ptrdiff_t>(q * row_bytes), x.bytes.end());
  return p;
}

Parts plain_group64(const OwnedTensor& x, int bits) {
  const std::vector<float> v = widened(x);
  const std::int64_t d = x.channels;
  Parts p;
  BitPacker packer(p["codes"], static_cast<std::uint64_t>(x.size()), bits);
  std::vector<std::uint8_t>& ranges = p["ranges"];
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    for (std::int64_t g = 0; g * 64 < d; ++g) {
      const std::int64_t first = t * d + g * 64, count = std::min<std::int64_t>(64, d - g * 64);
      MinMax m;
      for (std::int64_t j = 0; j < count; ++j) m.add(v[first + j]);
      const float lo = m.stored_lo(), hi = m.stored_hi();
      put_float(ranges, lo);
      put_float(ranges, hi);
      for (std::int64_t j = 0; j < count; ++j) {
        const std::uint8_t code =
            bits == 8 ? static_cast<std::uint8_t>(rule7_code(v[first + j], lo, rules::code_inverse_step(lo, hi)))
                      : uniform_code(v[first + j], lo, uniform_inverse(lo, hi, 15), 15);
        packer.put(static_cast<std::uint64_t>(first + j), code);
      }
    }
  }
  return p;
}

Parts plain_int8_token(const OwnedTensor& x) {
  const std::vector<float> v = widened(x);
  const std::int64_t d = x.channels;
  Parts p;
  std::vector<std::uint8_t>& codes = p["codes"];
  for (std::int64_t t = 0; t < x.tokens && d > 0; ++t) {
    MinMax m;
    for (std::int64_t c = 0; c < d; ++c) m.add(v[t * d + c]);
    const float lo = m.stored_lo(), hi = m.stored_hi();
    put_float(p["ranges"], lo);
    put_float(p["ranges"], hi);
    for (std::int64_t c = 0; c < d; ++c)
      codes.push_back(static_cast<std::uint8_t>(rule7_code(v[t * d + c], lo, rules::code_inverse_step(lo, hi))));
  }
  p["ranges"];
  return p;
}

// scale: 0 tensor, 1 token, 2 prefix (of `prefix` tokens).
Parts plain_fp8(const OwnedTensor& x, int scale_kind, std::int64_t prefix) {
  const std::vector<float> v = widened(x);
  const std::int64_t d = x.channels;
  Parts p;
  p["codes"].assign(static_cast<std::size_t>(x.size()), 0);
  p["scale"];
  if (x.size() == 0) return p;
  auto encode = [&](std::int64_t t, float scale) {
    if (scale == 0.0f) return;
    for (std::int64_t c = 0; c < d; ++c) p["codes"][t * d + c] = fp8::float_to_e4m3(v[t * d + c] / scale);
  };
  if (scale_kind == 1) {
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      float amax = 0.0f;
      for (std::int64_t c = 0; c < d; ++c) amax = std::fabs(v[t * d + c]) > amax ? std::fabs(v[t * d + c]) : amax;
      put_float(p["scale"], amax / fp8::kE4M3Max);
      encode(t, amax / fp8::kE4M3Max);
    }
    return p;
  }
  const std::int64_t rows = scale_kind == 2 ? std::min(prefix, x.tokens) : x.tokens;
  float amax = 0.0f;
  for (std::int64_t i = 0; i < rows * d; ++i) amax = std::fabs(v[i]) > amax ? std::fabs(v[i]) : amax;
  put_float(p["scale"], amax / fp8::kE4M3Max);
  for (std::int64_t t = 0; t < x.tokens; ++t) encode(t, amax / fp8::kE4M3Max);
  return p;
}

Parts parts_of(const Compressed& c) {
  Parts p;
  for (const Part& part : c.parts) p[part.name] = part.bytes;
  return p;
}

std::vector<std::pair<std::string, OwnedTensor>> inputs(std::int64_t l, std::int64_t d, DType dt) {
  std::vector<std::pair<std::string, OwnedTensor>> out;
  out.emplace_back("random", random_tensor(l, d, 4242 + static_cast<std::uint64_t>(l * 131 + d), dt));
  out.emplace_back("constant", tensor_from(std::vector<float>(static_cast<std::size_t>(l * d), -2.5f), l, d, dt));
  std::vector<float> zeros(static_cast<std::size_t>(l * d), 0.0f);
  for (std::size_t i = 0; i < zeros.size(); i += 2) zeros[i] = -0.0f;
  out.emplace_back("signed zeros", tensor_from(zeros, l, d, dt));
  return out;
}

template <class Plain>
void check_family(const std::string& spec, Plain plain) {
  for (const Device device : {Device::reference, Device::cpu}) {
    const auto s = make_scheme(spec, device);
    for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
      for (const std::int64_t l : {0, 1, 31, 32, 33, 65, 100}) {
        for (const std::int64_t d : {1, 2, 3, 31, 32, 33, 64, 65, 128}) {
          for (const auto& [kind, x] : inputs(l, d, dt)) {
            for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
              CAPTURE(spec, device == Device::cpu, dtype_name(dt), l, d, kind, role_name(role));
              REQUIRE(parts_of(s->compress(x.view(), role)) == plain(x, role));
            }
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("kivi's row-at-a-time compress stores the bytes of the plain per-element rules", "[scheme][kivi][fast]") {
  check_family("kivi-4", [](const OwnedTensor& x, TensorRole r) { return plain_kivi(x, r, 4, 32, 32); });
  check_family("kivi-2", [](const OwnedTensor& x, TensorRole r) { return plain_kivi(x, r, 2, 32, 32); });
  check_family("kivi-4:group=3,residual=1",
               [](const OwnedTensor& x, TensorRole r) { return plain_kivi(x, r, 4, 3, 1); });
  check_family("kivi-2:group=5,residual=0",
               [](const OwnedTensor& x, TensorRole r) { return plain_kivi(x, r, 2, 5, 0); });
  // Groups too large to keep widened (group * channels > 8192 at 128 channels): rows widened twice.
  check_family("kivi-4:group=65,residual=0",
               [](const OwnedTensor& x, TensorRole r) { return plain_kivi(x, r, 4, 65, 0); });
}

TEST_CASE("group64's direct code stores give the bytes of the plain per-element rules", "[scheme][group64][fast]") {
  check_family("int8-group64", [](const OwnedTensor& x, TensorRole) { return plain_group64(x, 8); });
  check_family("int4-group64", [](const OwnedTensor& x, TensorRole) { return plain_group64(x, 4); });
}

TEST_CASE("int8-token stores the bytes of the plain per-element rules", "[scheme][int8-token][fast]") {
  check_family("int8-token", [](const OwnedTensor& x, TensorRole) { return plain_int8_token(x); });
}

TEST_CASE("fp8-e4m3's kernel-table runs store the bytes of the plain per-element rules", "[scheme][fp8][fast]") {
  check_family("fp8-e4m3", [](const OwnedTensor& x, TensorRole) { return plain_fp8(x, 0, 0); });
  check_family("fp8-e4m3:scale=token", [](const OwnedTensor& x, TensorRole) { return plain_fp8(x, 1, 0); });
  check_family("fp8-e4m3:scale=prefix,prefix=7", [](const OwnedTensor& x, TensorRole) { return plain_fp8(x, 2, 7); });
}

}  // namespace dgq::test::row_paths_plain
