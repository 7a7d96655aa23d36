// The device-pointer entry points: unaligned buffers (scalar fallback) give the same bytes as
// the reference, and decode_device reproduces the reference decoder.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstring>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/dgq.hpp"
#include "gpu_compare.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

namespace {

void require_cuda(cudaError_t status) { REQUIRE(status == cudaSuccess); }

}  // namespace

TEST_CASE("gpu: encode_device and decode_device on unaligned device pointers match the reference", "[gpu][device]") {
  const std::int64_t L = 1000, D = 37;  // odd D: rows are not 16-byte multiples
  const HostUnit x = make_unit(DType::f16, L, D, variance_steps(test::seed() + 81, 250));
  DgqV1Params p;
  p.markers = Markers::inband;
  const DgqV1Encoded ref = dgq_encode(x.view(), p);
  HostUnit ref_out = x;
  dgq_decode(ref, ref_out.view());

  const std::size_t offset = 2;  // one fp16 element: aligned for the dtype, not for 16-byte vectors
  cuda::DeviceBuffer input, output;
  input.reserve(x.bytes.size() + offset);
  output.reserve(x.bytes.size() + offset);
  require_cuda(cudaMemcpy(input.as<unsigned char>() + offset, x.bytes.data(), x.bytes.size(), cudaMemcpyHostToDevice));
  cuda::DeviceEncoded enc;
  cuda::encode_device(input.as<unsigned char>() + offset, {1, L, D, DType::f16}, p, enc);
  cuda::check_encode_status(enc);

  std::vector<std::int8_t> codes(static_cast<std::size_t>(L * D));
  require_cuda(cudaMemcpy(codes.data(), enc.codes.get(), codes.size(), cudaMemcpyDeviceToHost));
  REQUIRE(codes == ref.codes);

  cuda::decode_device(enc, output.as<unsigned char>() + offset);
  cuda::check_decode_status(enc);
  HostUnit gpu_out = x;
  require_cuda(cudaMemcpy(gpu_out.bytes.data(), output.as<unsigned char>() + offset, gpu_out.bytes.size(),
                          cudaMemcpyDeviceToHost));
  REQUIRE(gpu_out.bytes == ref_out.bytes);
}

TEST_CASE("gpu: the reference's encodings decode identically on the GPU", "[gpu][device]") {
  for (const Markers m : {Markers::table, Markers::bitmap, Markers::inband}) {
    for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
      DgqV1Params p;
      p.markers = m;
      p.granularity = g;
      const HostUnit x = make_unit(DType::bf16, 2500, 50, variance_steps(test::seed() + 91, 333));
      const DgqV1Encoded ref = dgq_encode(x.view(), p);
      HostUnit ref_out = x, gpu_out = x;
      dgq_decode(ref, ref_out.view());
      cuda::decode_batch({ref}, {gpu_out.view()});
      CAPTURE(p.to_string());
      REQUIRE(gpu_out.bytes == ref_out.bytes);
    }
  }
}
