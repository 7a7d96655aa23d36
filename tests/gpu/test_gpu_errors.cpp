// Bad input on the GPU path: the same exception type as the reference, naming the same place.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"
#include "gpu_inputs.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

namespace {

std::string cuda_error(const std::vector<HostUnit>& units, const DgqV1Params& p = {}) {
  std::vector<ConstTensor> views;
  for (const auto& u : units) views.push_back(u.view());
  try {
    cuda::encode_batch(views, p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// dgq_encode_batch's message for the same batch: the words the CUDA path must reproduce.
std::string reference_error(const std::vector<HostUnit>& units, const DgqV1Params& p = {}) {
  std::vector<ConstTensor> views;
  for (const auto& u : units) views.push_back(u.view());
  try {
    dgq_encode_batch(views, p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

HostUnit with_value(HostUnit u, std::int64_t t, std::int64_t d, float v) {
  store_element(u.view(), t * u.channels + d, v);
  return u;
}

}  // namespace

TEST_CASE("gpu: NaN and Inf are rejected naming the first bad unit, token and channel", "[gpu][errors]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
    const HostUnit clean = make_unit(dtype, 300, 70, normal_pattern(test::seed() + 61));
    // Two bad elements: the one earlier in flat order must be named, whichever thread sees it first.
    const HostUnit bad = with_value(with_value(clean, 200, 3, inf), 17, 65, nan);
    CAPTURE(dtype_name(dtype));
    REQUIRE_THROWS_AS(dgq_encode(bad.view(), DgqV1Params{}), InputError);
    const std::string msg = cuda_error({clean, bad});
    CHECK(msg.find("unit 1: non-finite value nan at token 17, channel 65") != std::string::npos);
    CHECK(msg == reference_error({clean, bad}));
  }
}

TEST_CASE("gpu: the lowest failing unit is named, whatever its fault and launch group", "[gpu][errors]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Same shape, one launch: unit 0's range overflows (a fault found late on the device),
  // unit 1 holds a NaN (found early); the reference names unit 0.
  const HostUnit range_bad = with_value(make_unit(DType::f32, 40, 1, all_equal(3.0e38f)), 30, 0, -3.0e38f);
  const HostUnit nan_bad = with_value(make_unit(DType::f32, 40, 1, all_equal(1.0f)), 3, 0, nan);
  const std::string same_group = cuda_error({range_bad, nan_bad});
  CHECK(same_group.rfind("unit 0: value range of segment 0", 0) == 0);
  CHECK(same_group == reference_error({range_bad, nan_bad}));
  // Different shapes, so different launch groups: group {0, 2} runs first and fails at unit 2,
  // group {1} fails at unit 1, which is the one to name.
  const HostUnit clean = make_unit(DType::f16, 50, 8, normal_pattern(test::seed() + 62));
  const HostUnit late = with_value(clean, 10, 2, nan);
  const std::string across = cuda_error({clean, nan_bad, late});
  CHECK(across.rfind("unit 1: non-finite value nan at token 3, channel 0", 0) == 0);
  CHECK(across == reference_error({clean, nan_bad, late}));
}

TEST_CASE("gpu: an fp32 variance overflow is rejected like the reference", "[gpu][errors]") {
  const HostUnit huge = make_unit(DType::f32, 40, 64, all_equal(3.0e38f));
  const HostUnit bad = with_value(huge, 5, 0, -3.0e38f);
  REQUIRE_THROWS_AS(dgq_encode(bad.view(), DgqV1Params{}), InputError);
  const std::string msg = cuda_error({bad});
  // 64 x 3e38 overflows every row's sum, so token 0 is the first.
  CHECK(msg == "unit 0: variance of token 0 overflows fp32 (values too large)");
  CHECK(msg == reference_error({bad}));
}

TEST_CASE("gpu: a segment range that overflows fp32 is rejected like the reference", "[gpu][errors]") {
  // D = 1 keeps every variance 0 (finite); the range hi - lo = 6e38 overflows.
  const HostUnit bad = with_value(make_unit(DType::f32, 40, 1, all_equal(3.0e38f)), 30, 0, -3.0e38f);
  REQUIRE_THROWS_AS(dgq_encode(bad.view(), DgqV1Params{}), InputError);
  for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
    DgqV1Params p;
    p.granularity = g;
    const std::string msg = cuda_error({bad}, p);
    CAPTURE(granularity_name(g));
    // Segment, token range (and channel), and the two endpoints, as the reference words it.
    CHECK(msg.find("value range of segment 0 (tokens 0..39") != std::string::npos);
    CHECK(msg == reference_error({bad}, p));
  }
}

TEST_CASE("gpu: shapes outside the CUDA path's range are rejected before any launch", "[gpu][errors]") {
  const HostUnit wide = make_unit(DType::f16, 4, 257, all_equal(1.0f));
  CHECK(cuda_error({wide}).find("channels=257") != std::string::npos);
  DgqV1Params bad_params;
  bad_params.group_ratio = 0.0f;
  REQUIRE_THROWS_AS(cuda::encode_batch({make_unit(DType::f16, 4, 4, all_equal(1.0f)).view()}, bad_params),
                    ParameterError);
}

namespace {

// "unit 0: " + dgq_decode's message: the CUDA batch decoder's words for a one-unit batch.
std::string reference_decode_error(const DgqV1Encoded& enc, HostUnit out) {
  try {
    dgq_decode(enc, out.view());
  } catch (const InputError& e) {
    return std::string("unit 0: ") + e.what();
  }
  return "no error";
}

std::string cuda_decode_error(const DgqV1Encoded& enc, HostUnit out) {
  try {
    cuda::decode_batch({enc}, {out.view()});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("gpu: corrupt markers are rejected by both decoders in the same words", "[gpu][errors]") {
  const HostUnit x = make_unit(DType::f16, 3000, 16, variance_steps(test::seed() + 71, 100));  // budget 3
  for (const Markers m : {Markers::table, Markers::bitmap, Markers::inband}) {
    DgqV1Params p;
    p.markers = m;
    const DgqV1Encoded clean = dgq_encode(x.view(), p);
    REQUIRE(clean.segments > 2);
    CAPTURE(p.to_string());

    DgqV1Encoded extra_segment = clean;  // the header disagrees with the markers
    extra_segment.segments += 1;
    extra_segment.lo.push_back(0.0f);
    extra_segment.hi.push_back(1.0f);
    const std::string count_error = cuda_decode_error(extra_segment, x);
    CHECK(count_error.find("the stored markers give") != std::string::npos);
    CHECK(count_error == reference_decode_error(extra_segment, x));

    DgqV1Encoded bad_marker = clean;
    if (m == Markers::table) bad_marker.boundaries[1] = bad_marker.boundaries[0];  // not increasing
    if (m == Markers::bitmap) bad_marker.bitmap[0] ^= 1u;                          // token 0 in parity 1
    if (m == Markers::inband) bad_marker.codes[0] = 127;                           // a marker at token 0
    const std::string marker_error = cuda_decode_error(bad_marker, x);
    CHECK(marker_error.rfind("unit 0: corrupt DGQ data: ", 0) == 0);
    CHECK(marker_error == reference_decode_error(bad_marker, x));
  }
}
