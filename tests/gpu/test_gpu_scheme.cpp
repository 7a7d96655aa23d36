// make_cuda_scheme: the same Compressed (parts, bytes, segment edges) as the CPU dgq scheme,
// and each decompresses the other's output to the same bits.
#include <catch2/catch.hpp>

#include "dgq/causal.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"
#include "gpu_inputs.hpp"
#include "test_seed.hpp"

using namespace dgq;
using namespace dgq::gpu_test;

TEST_CASE("gpu: only dgq specs have a CUDA scheme", "[gpu][scheme]") {
  REQUIRE_THROWS_AS(cuda::make_cuda_scheme("q8_0"), ParameterError);
  REQUIRE_THROWS_AS(cuda::make_cuda_scheme("dgq:max_groups=9"), ParameterError);
  REQUIRE(cuda::make_cuda_scheme("dgq")->spec() == make_scheme("dgq")->spec());
}

TEST_CASE("gpu: boundaries=online and the causal cache are refused by name, never computed otherwise",
          "[gpu][scheme][errors]") {
  const std::string online =
      "dgq: boundaries=online (docs/spec.md rule C3) has no CUDA implementation; run it on the CPU (Device::cpu)";
  REQUIRE_THROWS_WITH(cuda::make_cuda_scheme("dgq:boundaries=online"), online);
  DgqV1Params p;
  p.boundaries = Boundaries::online;
  const HostUnit x = make_unit(DType::f16, 40, 8, variance_steps(test::seed() + 102, 16));
  REQUIRE_THROWS_WITH(cuda::encode_batch({x.view()}, p), online);
  // The adaptive scheme's causal form is online: its schedule and form are refused too, rather
  // than answered with Scheme's per-token default.
  const auto gpu = cuda::make_cuda_scheme("dgq");
  REQUIRE_THROWS_AS(gpu->causal_schedule(x.view(), TensorRole::key), ParameterError);
  REQUIRE_THROWS_AS(gpu->causal_form(), ParameterError);
}

TEST_CASE("gpu: the CUDA dgq scheme stores the CPU scheme's parts byte for byte", "[gpu][scheme]") {
  const HostUnit x = make_unit(DType::f16, 3000, 64, variance_steps(test::seed() + 101, 400));
  for (const char* spec : {"dgq", "dgq:markers=bitmap", "dgq:markers=inband,granularity=segment-channel",
                           "dgq:max_groups=3,group_ratio=1"}) {
    CAPTURE(spec);
    const auto cpu = make_scheme(spec);
    const auto gpu = cuda::make_cuda_scheme(spec);
    const Compressed a = cpu->compress(x.view(), TensorRole::key);
    const Compressed b = gpu->compress(x.view(), TensorRole::key);
    REQUIRE(a.scheme == b.scheme);
    REQUIRE(a.parts.size() == b.parts.size());
    for (std::size_t i = 0; i < a.parts.size(); ++i) {
      CAPTURE(a.parts[i].name);
      REQUIRE(a.parts[i] == b.parts[i]);
    }
    REQUIRE(a.segment_edges() == b.segment_edges());
    HostUnit from_cpu = x, from_gpu = x;
    cpu->decompress(b, from_cpu.view());
    gpu->decompress(a, from_gpu.view());
    REQUIRE(from_cpu.bytes == from_gpu.bytes);
  }
}
