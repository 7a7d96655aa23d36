// dgq2 (DGQ v2, docs/spec.md "DGQ v2"): in-band markers exactly where the rules put them, and
// the errors: corrupt markers, parameters, NaN/Inf in the residual tokens and with rotation,
// and rule V0's checks (their order, the rotation's input bound, the decoder's overflow).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "dgq/schemes/dgq2/rotation_input.hpp"
#include "test_scheme_dgq2_support.hpp"
#include "test_scheme_support.hpp"

using namespace dgq;
using namespace dgq::test;
using namespace dgq::test::dgq2_tests;

TEST_CASE("dgq2 in-band markers: extreme codes on channel 0 of each segment start, nowhere else",
          "[scheme][dgq2][markers]") {
  for (const int bits : {2, 3, 4, 8}) {
    CAPTURE(bits);
    const auto s = make_scheme("dgq2:kgran=segment-channel,markers=inband,bits=" + std::to_string(bits));
    const OwnedTensor x = stepped_tensor(300, 16, 8, DType::f16);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    REQUIRE(c.segment_edges().size() >= 3);
    const std::vector<std::uint8_t>& stream = c.find("codes")->bytes;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.size()));
    dgq::schemes::dgq2::unpack_codes(stream.data(), stream.size(), 0, codes.data(), codes.size(), bits);
    const unsigned top = (1u << bits) - 1u;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      for (std::int64_t j = 0; j < x.channels; ++j) {
        const unsigned u = codes[static_cast<std::size_t>(t * x.channels + j)];
        const bool start = j == 0 && starts_segment(c.segment_edges(), t);
        CAPTURE(t, j, u);
        REQUIRE((u == 0 || u == top) == start);
      }
    }
  }
}

TEST_CASE("dgq2 in-band markers reserve no codes in a token role: 2-bit values use all 4 levels",
          "[scheme][dgq2][markers]") {
  const auto inband = make_scheme("dgq2:bits=2,markers=inband,kgran=segment-channel,vgran=token");
  const auto table = make_scheme("dgq2:bits=2,markers=table,kgran=segment-channel,vgran=token");
  for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
    CAPTURE(dtype_name(dtype));
    const OwnedTensor x = stepped_tensor(300, 16, 9, dtype);
    // V (token): the bytes of markers=table, every code 0..3 in use, and the codes decode back.
    const Compressed v = inband->compress(x.view(), TensorRole::value);
    const Compressed v_table = table->compress(x.view(), TensorRole::value);
    REQUIRE(v.parts.size() == v_table.parts.size());
    for (std::size_t i = 0; i < v.parts.size(); ++i) CHECK(v.parts[i].bytes == v_table.parts[i].bytes);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.size()));
    const std::vector<std::uint8_t>& stream = v.find("codes")->bytes;
    dgq::schemes::dgq2::unpack_codes(stream.data(), stream.size(), 0, codes.data(), codes.size(), 2);
    std::vector<int> used(4, 0);
    for (const std::uint8_t u : codes) ++used[u];
    for (int u = 0; u < 4; ++u) CHECK(used[u] > 0);
    CHECK(decompressed(*inband, v).bytes == decompressed(*table, v_table).bytes);
    // K (segment-channel): unchanged, data codes 1..2 and the markers 0 or 3 at segment starts.
    const Compressed k = inband->compress(x.view(), TensorRole::key);
    REQUIRE(k.segment_edges().size() >= 3);
    const std::vector<std::uint8_t>& kstream = k.find("codes")->bytes;
    dgq::schemes::dgq2::unpack_codes(kstream.data(), kstream.size(), 0, codes.data(), codes.size(), 2);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      for (std::int64_t j = 0; j < x.channels; ++j) {
        const unsigned u = codes[static_cast<std::size_t>(t * x.channels + j)];
        CAPTURE(t, j, u);
        REQUIRE((u == 0 || u == 3) == (j == 0 && starts_segment(k.segment_edges(), t)));
      }
    }
  }
}

TEST_CASE("dgq2 rejects corrupt markers, naming what is wrong", "[scheme][dgq2][errors]") {
  const OwnedTensor x = stepped_tensor(2100, 16, 8, DType::f16);  // >= 2048 tokens: a budget of 3 segments
  const auto table = make_scheme("dgq2:markers=table");
  Compressed c = table->compress(x.view(), TensorRole::key);
  REQUIRE(c.part_bytes("markers") >= 8);
  OwnedTensor out(c.dtype, c.tokens, c.channels);
  Compressed swapped = c;
  std::swap_ranges(swapped.parts[2].bytes.begin(), swapped.parts[2].bytes.begin() + 4,
                   swapped.parts[2].bytes.begin() + 4);
  CHECK(error_message_of([&] { table->decompress(swapped, out.mut()); }).find(": corrupt dgq2 data: boundary ") !=
        std::string::npos);
  Compressed ragged = c;
  ragged.parts[2].bytes.pop_back();
  CHECK(error_message_of([&] {
          table->decompress(ragged, out.mut());
        }).find(" bytes, not a boundary table (4 per boundary)") != std::string::npos);
  const auto bitmap = make_scheme("dgq2:markers=bitmap");
  Compressed b = bitmap->compress(x.view(), TensorRole::key);
  b.parts[2].bytes[0] |= 1u;
  CHECK(error_message_of([&] { bitmap->decompress(b, out.mut()); }).find("corrupt dgq2 data: token 0 is marked") !=
        std::string::npos);
  // A stored fp32 range wider than fp32 (compress never writes one) would decode 0 * inf = NaN.
  const auto fp32 = make_scheme("dgq2:range_dtype=fp32");
  Compressed wide = fp32->compress(x.view(), TensorRole::value);
  const float huge[2] = {-3e38f, 3e38f};
  std::memcpy(wide.parts[1].bytes.data() + 8 * 5, huge, 8);
  CHECK(error_message_of([&] {
          fp32->decompress(wide, out.mut());
        }).find("corrupt dgq2 data: range 5 is wider than fp32") != std::string::npos);
  // Token granularity stores no markers.
  Compressed v = table->compress(x.view(), TensorRole::value);
  CHECK(v.part_bytes("markers") == 0);
  v.parts[2].bytes.push_back(0);
  CHECK(error_message_of([&] {
          table->decompress(v, out.mut());
        }).find("corrupt dgq2 data: markers for a role without segments") != std::string::npos);
}

TEST_CASE("dgq2 parameter errors name the key and the accepted values", "[scheme][dgq2][errors]") {
  CHECK(error_message_of([] { (void)make_scheme("dgq2:bits=5"); }) ==
        "dgq2: parameter 'bits' = '5' is not one of 2, 3, 4, 8");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:kgran=channel"); }) ==
        "dgq2: parameter 'kgran' = 'channel' is not one of segment, segment-channel, token, segment-channel-group");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:vgran=x"); }).find("'vgran' = 'x'") != std::string::npos);
  CHECK(error_message_of([] { (void)make_scheme("dgq2:range_dtype=bf16"); }) ==
        "dgq2: parameter 'range_dtype' = 'bf16' is not one of fp16, fp32");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:boundaries=equal"); }) ==
        "dgq2: parameter 'boundaries' = 'equal' is not one of adaptive, fixed, online");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:seg_on=k"); }) ==
        "dgq2: parameter 'seg_on' = 'k' is not one of rotated, input");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:rot=walsh"); }) ==
        "dgq2: parameter 'rot' = 'walsh' is not one of none, hadamard");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:group_ratio=1.5"); }).find("dgq2: parameter group_ratio=1.5") ==
        0);
  // rot is dgq2's own key: the spec names it once, and no modifier is stacked on top.
  CHECK(make_scheme("dgq2:rot=hadamard")->spec().find("rot=hadamard") != std::string::npos);
  const std::string spec = make_scheme("dgq2:rot=hadamard")->spec();
  CHECK(spec.find("rot=") == spec.rfind("rot="));
}

TEST_CASE("dgq2 names the first NaN/Inf also in the residual tokens and with rotation", "[scheme][dgq2][errors]") {
  for (const std::string spec : {"dgq2:residual=8", "dgq2:rot=hadamard,seg_on=input,residual=3"}) {
    OwnedTensor x = random_tensor(20, 64, 4);
    store_element(x.mut(), 17 * 64 + 9, std::numeric_limits<float>::quiet_NaN());
    CAPTURE(spec);
    CHECK(error_message_of([&] { (void)make_scheme(spec)->compress(x.view(), TensorRole::key); }) ==
          "dgq2: non-finite value nan at token 17, channel 9");
  }
}

TEST_CASE("dgq2 rule V0.1: dtype, shape, head_dim (rotated roles, any L), NaN/Inf, rotation bound, in that order",
          "[scheme][dgq2][errors][rotation]") {
  const auto rot = make_scheme("dgq2:rot=hadamard,range_dtype=fp32,kgran=token");
  const std::string head_dim =
      "dgq2: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got 10";
  // dtype before shape: an unknown dtype with no channels names the dtype.
  const ConstTensor odd{nullptr, static_cast<DType>(77), 3, 0};
  CHECK(error_message_of([&] { (void)rot->compress(odd, TensorRole::key); }) == "dgq2: unsupported input dtype");
  // Shape before head_dim: no channels is a shape error, not a rotation error.
  const OwnedTensor none(DType::f32, 3, 0);
  CHECK(error_message_of([&] { (void)rot->compress(none.view(), TensorRole::key); }) ==
        "dgq2: channels must be >= 1, got 0");
  for (const std::int64_t l : {0, 1, 3}) {
    CAPTURE(l);
    // head_dim before NaN, checked with no rows too; only for the roles rotated.
    OwnedTensor x(DType::bf16, l, 10);
    if (l > 2) x.set(2, 4, std::numeric_limits<float>::quiet_NaN());
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      CHECK(error_message_of([&] { (void)rot->compress(x.view(), role); }) == head_dim);
    }
    const auto only_k = make_scheme("dgq2:rot=hadamard,rot_on=k");
    CHECK(error_message_of([&] { (void)only_k->compress(x.view(), TensorRole::key); }) == head_dim);
    if (l <= 2) CHECK_NOTHROW(only_k->compress(x.view(), TensorRole::value));
    if (l > 2) {
      CHECK(error_message_of([&] { (void)only_k->compress(x.view(), TensorRole::value); }) ==
            "dgq2: non-finite value nan at token 2, channel 4");
    }
  }
  // NaN/Inf (anywhere, the residual rows included) before the bound, even when the value beyond
  // the bound comes first.
  for (const std::string spec : {"dgq2:rot=hadamard,range_dtype=fp32,vgran=token",
                                 "dgq2:rot=hadamard,range_dtype=fp32,vgran=token,residual=2"}) {
    CAPTURE(spec);
    OwnedTensor x = tensor_from(gaussian_values(6 * 64, 31), 6, 64, DType::f32);
    x.set(1, 5, std::ldexp(1.0f, 119));
    x.set(5, 1, std::numeric_limits<float>::infinity());
    const auto s = make_scheme(spec);
    CHECK(error_message_of([&] { (void)s->compress(x.view(), TensorRole::value); }) ==
          "dgq2: non-finite value inf at token 5, channel 1");
    CHECK(error_message_of([&] { (void)s->causal_schedule(x.view(), TensorRole::value); }) ==
          "dgq2: non-finite value inf at token 5, channel 1");
  }
}

TEST_CASE("dgq2 rule V0.2: the rotation's input bound |x| < 2^(127 - ceil(1.5 log2 n)), named at the input element",
          "[scheme][dgq2][errors][rotation]") {
  using dgq::schemes::dgq2::rotation_bound_exponent;
  CHECK(rotation_bound_exponent(64) == 118);
  CHECK(rotation_bound_exponent(128) == 116);  // ceil(10.5) = 11
  CHECK(rotation_bound_exponent(256) == 115);
  CHECK(rotation_bound_exponent(512) == 113);
  const float bound64 = std::ldexp(1.0f, 118);
  for (const DType dtype : {DType::f32, DType::bf16}) {
    CAPTURE(dtype_name(dtype));
    // The largest value below the bound in the dtype (bf16 keeps 8 significant bits).
    const float below = dtype == DType::f32 ? std::nextafter(bound64, 0.0f) : std::ldexp(255.0f, 110);
    const auto s = make_scheme("dgq2:rot=hadamard,range_dtype=fp32,vgran=token");
    // Worst cases of the transform: a row of equal values (all of it lands in channel 0) and
    // rows of mixed signs; with them the decode's inverse rotation stays finite too.
    OwnedTensor x(dtype, 4, 64);
    for (std::int64_t j = 0; j < 64; ++j) {
      x.set(0, j, below);
      x.set(1, j, j % 2 == 0 ? below : -below);
      x.set(2, j, (j / 8) % 2 == 0 ? -below : below);
      x.set(3, j, j == 0 ? below : 1.0f);
    }
    const Compressed c = s->compress(x.view(), TensorRole::value);
    const OwnedTensor y = decompressed(*s, c);
    for (std::int64_t i = 0; i < y.size(); ++i) {
      CAPTURE(i, y.at(i));
      REQUIRE(std::isfinite(y.at(i)));
      REQUIRE(std::fabs(y.at(i) - x.at(i)) <= 0.5f * below);  // 4 bits, ranges of up to 2*8*below
    }
    // At the bound: refused, naming the input element (not an element of the rotated data).
    x.set(3, 7, -bound64);
    CHECK(error_message_of([&] { (void)s->compress(x.view(), TensorRole::value); }) ==
          "dgq2: value -3.32307e+35 at token 3, channel 7 exceeds the Hadamard rotation's input bound |x| < 2^118 "
          "(64-channel blocks)");
    CHECK(error_message_of([&] { (void)s->causal_schedule(x.view(), TensorRole::value); }) ==
          "dgq2: value -3.32307e+35 at token 3, channel 7 exceeds the Hadamard rotation's input bound |x| < 2^118 "
          "(64-channel blocks)");
    // Not in the residual rows (stored unrotated) nor in a role that is not rotated.
    const auto residual = make_scheme("dgq2:rot=hadamard,range_dtype=fp32,vgran=token,residual=1");
    CHECK(decompressed(*residual, residual->compress(x.view(), TensorRole::value)).bytes == x.bytes);
    const auto only_k = make_scheme("dgq2:rot=hadamard,rot_on=k,range_dtype=fp32,vgran=token");
    CHECK_NOTHROW(only_k->compress(x.view(), TensorRole::value));
  }
  // K's block is the largest power of two dividing D: 128 channels, 2^116.
  const auto k = make_scheme("dgq2:rot=hadamard,range_dtype=fp32,kgran=token");
  OwnedTensor x = tensor_from(gaussian_values(2 * 128, 32), 2, 128, DType::f32);
  x.set(1, 100, std::nextafter(std::ldexp(1.0f, 116), 0.0f));
  CHECK_NOTHROW(k->compress(x.view(), TensorRole::key));
  x.set(1, 100, std::ldexp(1.0f, 116));
  CHECK(error_message_of([&] { (void)k->compress(x.view(), TensorRole::key); }) ==
        "dgq2: value 8.307675e+34 at token 1, channel 100 exceeds the Hadamard rotation's input bound |x| < 2^116 "
        "(128-channel blocks)");
}

TEST_CASE(
    "dgq2 rule V0.3: decode saturates to the dtype's largest finite value; an inverse rotation past fp32 is corrupt",
    "[scheme][dgq2][errors][rotation]") {
  // fp16: the stored range of token 0 set to [65504, 65504] decodes as 65504 in every rotated
  // channel; rotated back, channel 0 is 8 * 65504, which saturates to 65504 (not inf).
  for (const float v : {65504.0f, -65504.0f}) {
    const auto s = make_scheme("dgq2:rot=hadamard");
    const OwnedTensor x = random_tensor(2, 64, 33);
    Compressed c = s->compress(x.view(), TensorRole::value);
    const std::uint16_t h = rules::float_to_half(v);
    for (int k = 0; k < 2; ++k) std::memcpy(c.parts[1].bytes.data() + 2 * k, &h, 2);
    const OwnedTensor y = decompressed(*s, c);
    CHECK(y.get(0, 0) == v);
    for (std::int64_t j = 1; j < 64; ++j) CHECK(y.get(0, j) == 0.0f);
  }
  // fp32 and bf16: a stored range [3e38, 3e38] is finite and narrow, but rotated back it passes
  // fp32: refused, naming the first element, instead of an inf in the output.
  for (const DType dtype : {DType::f32, DType::bf16}) {
    CAPTURE(dtype_name(dtype));
    const auto s = make_scheme("dgq2:rot=hadamard,range_dtype=fp32");
    const OwnedTensor x = random_tensor(3, 64, 34, dtype);
    Compressed c = s->compress(x.view(), TensorRole::value);
    const float huge[2] = {3e38f, 3e38f};
    std::memcpy(c.parts[1].bytes.data() + 8 * 1, huge, 8);  // token 1's range
    OwnedTensor out(dtype, 3, 64);
    CHECK(error_message_of([&] { s->decompress(c, out.mut()); }) ==
          s->spec() + ": corrupt dgq2 data: the inverse rotation overflows fp32 at token 1, channel 0");
  }
}
