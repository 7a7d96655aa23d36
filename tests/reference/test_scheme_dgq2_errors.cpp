// dgq2 (DGQ v2, docs/spec.md "DGQ v2"): in-band markers exactly where the rules put them, and
// the errors: corrupt markers, parameters, NaN/Inf in the residual tokens and with rotation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "dgq/errors.hpp"
#include "dgq/rotation.hpp"
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
  std::swap_ranges(swapped.parts[2].bytes.begin(), swapped.parts[2].bytes.begin() + 4, swapped.parts[2].bytes.begin() + 4);
  CHECK(error_message_of([&] { table->decompress(swapped, out.mut()); }).find(": corrupt dgq2 data: boundary ") !=
        std::string::npos);
  Compressed ragged = c;
  ragged.parts[2].bytes.pop_back();
  CHECK(error_message_of([&] { table->decompress(ragged, out.mut()); }).find(" bytes, not a boundary table (4 per boundary)") !=
        std::string::npos);
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
  CHECK(error_message_of([&] { fp32->decompress(wide, out.mut()); }).find("corrupt dgq2 data: range 5 is wider than fp32") !=
        std::string::npos);
  // Token granularity stores no markers.
  Compressed v = table->compress(x.view(), TensorRole::value);
  CHECK(v.part_bytes("markers") == 0);
  v.parts[2].bytes.push_back(0);
  CHECK(error_message_of([&] { table->decompress(v, out.mut()); }).find("corrupt dgq2 data: markers for a role without segments") !=
        std::string::npos);
}

TEST_CASE("dgq2 parameter errors name the key and the accepted values", "[scheme][dgq2][errors]") {
  CHECK(error_message_of([] { (void)make_scheme("dgq2:bits=5"); }) == "dgq2: parameter 'bits' = '5' is not one of 2, 3, 4, 8");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:kgran=channel"); }) ==
        "dgq2: parameter 'kgran' = 'channel' is not one of segment, segment-channel, token, segment-channel-group");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:vgran=x"); }).find("'vgran' = 'x'") != std::string::npos);
  CHECK(error_message_of([] { (void)make_scheme("dgq2:range_dtype=bf16"); }) ==
        "dgq2: parameter 'range_dtype' = 'bf16' is not one of fp16, fp32");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:boundaries=equal"); }) ==
        "dgq2: parameter 'boundaries' = 'equal' is not one of adaptive, fixed, online");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:seg_on=k"); }) == "dgq2: parameter 'seg_on' = 'k' is not one of rotated, input");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:rot=walsh"); }) == "dgq2: parameter 'rot' = 'walsh' is not one of none, hadamard");
  CHECK(error_message_of([] { (void)make_scheme("dgq2:group_ratio=1.5"); }).find("dgq2: parameter group_ratio=1.5") == 0);
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
