// make_cuda_scheme: the "dgq" Scheme with compress/decompress on the GPU. Its parts, their
// size checks and the spec parsing are the CPU dgq scheme's own (dgq/dgq_parts.hpp, one
// declaration for both backends), and spec() and planned_bytes() come from the CPU scheme, so
// both accept, print and store the same; the differential tests compare the two schemes'
// Compressed byte for byte.
#include <string>
#include <utility>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/dgq_parts.hpp"
#include "dgq/errors.hpp"

namespace dgq::cuda {
namespace {

class CudaDgqScheme final : public Scheme {
 public:
  CudaDgqScheme(std::unique_ptr<Scheme> cpu, const DgqParams& p) : cpu_(std::move(cpu)), params_(p) {}

  std::string spec() const override { return cpu_->spec(); }
  std::string family() const override { return cpu_->family(); }
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    return cpu_->planned_bytes(tokens, channels, dtype, role);
  }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    const DgqEncoded enc = encode_batch({x}, params_).front();
    Compressed c = start_compressed(spec(), x, role);
    append_dgq_parts(enc, c);
    c.segment_edges = dgq_segment_edges(enc);  // diagnostics, as the CPU scheme reports them
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    if (c.scheme != spec()) throw InputError("compressed with '" + c.scheme + "', not '" + spec() + "'");
    decode_batch({dgq_encoded_from_parts(c, params_)}, {out});  // checks the shape and markers against out
  }

 private:
  std::unique_ptr<Scheme> cpu_;
  DgqParams params_;
};

}  // namespace

std::unique_ptr<Scheme> make_cuda_scheme(std::string_view spec) {
  std::unique_ptr<Scheme> cpu = make_scheme(spec);  // parses and validates like the CPU path
  if (cpu->family() != "dgq")
    throw ParameterError("scheme '" + std::string(spec) + "' has no CUDA implementation: only dgq specs run on the GPU");
  const DgqParams p = dgq_params_from_spec(spec);  // the same parse, so it cannot fail here
  return std::make_unique<CudaDgqScheme>(std::move(cpu), p);
}

}  // namespace dgq::cuda
