// The "dgq" family on the CUDA device (registered as ("dgq", cuda), dgq/registry.hpp), with
// compress/decompress on the GPU. Its parameters, spec text, planned bytes and parts are the
// core's declarations for every backend (dgq/dgq_parts.hpp), so it accepts, prints and stores
// what the CPU scheme does without containing it; the differential tests (tests/gpu) compare the
// two schemes' Compressed byte for byte.
#include <string>
#include <utility>

#include "dgq/causal.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/dgq_parts.hpp"
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/tensor.hpp"

namespace dgq::cuda {
namespace {

class CudaDgqScheme final : public Scheme {
 public:
  explicit CudaDgqScheme(const DgqV1Params& p) : params_(p) {}

  std::string spec() const override { return dgq_spec_of(params_); }
  std::string family() const override { return "dgq"; }
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return dgq_planned_bytes(tokens, channels, params_);
  }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    DgqV1Encoded enc;
    try {
      enc = encode_batch({x}, params_).front();
    } catch (const InputError&) {
      // The batch API names a NaN/Inf by unit; a scheme names it in the schemes' uniform words,
      // as the CPU dgq scheme does (the first non-finite element, whatever fault came first).
      if (x.data != nullptr && x.channels >= 1) check_finite(x, "dgq");
      throw;
    }
    Compressed c = start_compressed(spec(), x, role);
    append_dgq_parts(enc, c);
    c.diagnostics.segments = SegmentDiagnostics{dgq_segment_edges(enc)};  // diagnostics, as the CPU scheme reports them
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    if (c.scheme != spec()) throw InputError("compressed with '" + c.scheme + "', not '" + spec() + "'");
    decode_batch({dgq_encoded_from_parts(c, params_)}, {out});  // checks the shape and markers against out
  }

  // The causal cache's form is boundaries=online, which runs on the CPU only (check_cuda_params):
  // refused here rather than answered with Scheme's per-token default, which would be wrong.
  CausalSchedule causal_schedule(ConstTensor, TensorRole) const override { refuse_causal(); }
  std::unique_ptr<Scheme> causal_form() const override { refuse_causal(); }

 private:
  [[noreturn]] static void refuse_causal() {
    throw ParameterError(
        "dgq: the causal cache (its causal form is boundaries=online, docs/spec.md rule C3) has no CUDA "
        "implementation; run it on the CPU (Device::cpu)");
  }

  DgqV1Params params_;
};

[[maybe_unused]] const bool registered = register_scheme_family({
    .name = "dgq",
    .device = Device::cuda,
    .order = 10,
    .summary = "DGQ v1 on the GPU: the same bytes as the CPU reference (docs/cuda.md)",
    .params = dgq_scheme_params(),
    .make = [](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
      const DgqV1Params p = dgq_v1_params_from_args(args);
      check_cuda_params(p);  // boundaries=online is refused when the spec is read
      return std::make_unique<CudaDgqScheme>(p);
    },
    .stored_size = SchemeFamily::StoredSize::at_most,
    .stored_layout = StoredLayout::segment_codes,
});

}  // namespace

std::unique_ptr<Scheme> make_cuda_scheme(std::string_view spec) { return make_scheme(spec, Device::cuda); }

}  // namespace dgq::cuda
