// `<spec>:rot=hadamard`: any scheme behind llama.cpp's Walsh-Hadamard rotation. compress
// rotates each token row (blocks per role: rules::hadamard_block), rounds the rotated values
// to the input dtype (what a cache of that dtype holds, so the inner scheme stores and counts
// exactly the bytes it would for the plain tensor) and hands them to the inner scheme;
// decompress decodes with the inner scheme, rotates back in fp32 and rounds to the output
// dtype. The Compressed carries the inner scheme's parts unchanged under this spec.
#include <string>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

// A per-thread buffer of at least n bytes, kept between calls: the rotated copy of a tensor is
// scratch, and a fresh allocation per call would spend more time zero-filling and page-faulting
// than rotating.
std::vector<std::uint8_t>& scratch_bytes(std::size_t n) {
  thread_local std::vector<std::uint8_t> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer;
}

class HadamardRotatedScheme final : public Scheme {
 public:
  HadamardRotatedScheme(std::unique_ptr<Scheme> inner, const kernels::CpuKernels& k) : inner_(std::move(inner)), k_(k) {
    spec_ = spec_with_key(inner_->spec(), "rot", "hadamard");
  }

  std::string spec() const override { return spec_; }
  std::string family() const override { return inner_->family(); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    // The per-thread scratch, grown by rotate_into once x's shape and dtype are checked.
    Compressed c = inner_->compress(rotate_into(x, role, scratch_bytes(0)), role);
    c.scheme = spec_;
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec_);
    const int block = block_for(c.channels, c.role);
    Compressed inner_c = c;
    inner_c.scheme = inner_->spec();
    std::vector<std::uint8_t>& decoded =
        scratch_bytes(static_cast<std::size_t>(c.tokens * c.channels) * dtype_size(c.dtype));
    inner_->decompress(inner_c, MutTensor{decoded.data(), c.dtype, c.tokens, c.channels});
    thread_local std::vector<float> values;
    to_float(ConstTensor{decoded.data(), c.dtype, c.tokens, c.channels}, values);
    for (std::int64_t t = 0; t < c.tokens; ++t)
      hadamard_rotate_row(k_, values.data() + t * c.channels, c.channels, block);
    narrow_into(k_, values.data(), out);
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    return inner_->planned_bytes(tokens, channels, dtype, role);
  }

  // Rule C1 (docs/spec.md, "Causal caches"): the inner scheme's schedule of the tensor it is
  // given, the rows rotated and rounded as compress rotates them (row by row, so a prefix's
  // rotation is the rotation's prefix), and the modifier around the inner's causal form.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    std::vector<std::uint8_t> rotated;
    return inner_->causal_schedule(rotate_into(x, role, rotated), role);
  }

  std::unique_ptr<Scheme> causal_form() const override {
    std::unique_ptr<Scheme> inner = inner_->causal_form();
    if (inner == nullptr) return nullptr;
    return std::make_unique<HadamardRotatedScheme>(std::move(inner), k_);
  }

  bool keeps_raw_rows(TensorRole role) const override { return inner_->keeps_raw_rows(role); }

 private:
  // x's rows widened, rotated and rounded to x's dtype into rotated (grown to x's size when
  // smaller): the tensor the inner scheme is given.
  ConstTensor rotate_into(ConstTensor x, TensorRole role, std::vector<std::uint8_t>& rotated) const {
    const int block = block_for(x.channels, role);
    check_input_dtype(x, spec_);
    const auto bytes = static_cast<std::size_t>(x.tokens * x.channels) * dtype_size(x.dtype);
    if (rotated.size() < bytes) rotated.resize(bytes);
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      widen_row_checked(k_, x, t, row.data(), spec_);
      hadamard_rotate_row(k_, row.data(), x.channels, block);
      narrow_into(k_, row.data(),
                  MutTensor{rotated.data() + t * x.channels * dtype_size(x.dtype), x.dtype, 1, x.channels});
    }
    return ConstTensor{rotated.data(), x.dtype, x.tokens, x.channels};
  }

  int block_for(std::int64_t channels, TensorRole role) const {
    const int block = rules::hadamard_block(channels, role == TensorRole::key);
    if (block == 0) {
      throw InputError(spec_ + ": the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got " +
                       std::to_string(channels));
    }
    return block;
  }

  std::unique_ptr<Scheme> inner_;
  std::string spec_;
  const kernels::CpuKernels& k_;
};

void check_rotation(std::string_view v) {
  if (v != "none" && v != "hadamard") {
    throw ParameterError("parameter 'rot' = '" + std::string(v) + "' is not one of none, hadamard");
  }
}

// `rot` is a modifier of every family (dgq/registry.hpp): make_scheme hands the family's scheme
// to wrap when rot is not "none".
[[maybe_unused]] const bool registered_rotation = register_scheme_modifier({
    .key = "rot",
    .default_value = "none",
    .values = "none or hadamard",
    .help = "llama.cpp's block-diagonal Walsh-Hadamard rotation around the scheme (docs/spec.md)",
    .check = check_rotation,
    .wrap = [](std::unique_ptr<Scheme> inner, const std::string&, Device device) -> std::unique_ptr<Scheme> {
      return std::make_unique<HadamardRotatedScheme>(std::move(inner), kernels::kernels_for(device));
    },
    .order = 10,  // innermost: sink=N (20) keeps its tokens unrotated
});

}  // namespace

}  // namespace dgq::schemes
