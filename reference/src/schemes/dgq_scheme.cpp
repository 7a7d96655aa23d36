// dgq: DGQ v1 (docs/spec.md) behind the Scheme API. The parts and their checks are declared
// once for every backend in dgq/dgq_parts.hpp; this scheme adds the no-copy paths: the encoder
// writes the codes straight into their part, and the decoder reads them from it.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/dgq.hpp"
#include "dgq/dgq_parts.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/online_segments.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/dgq_v1/decode_view.hpp"
#include "schemes/dgq_v1/pipeline.hpp"
#include "schemes/dgq_v1/shape.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

class DgqScheme final : public Scheme {
 public:
  DgqScheme(const DgqV1Params& p, const kernels::CpuKernels& k) : params_(p), k_(k) {}

  std::string family() const override { return "dgq"; }
  std::string spec() const override { return dgq_spec_of(params_); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    Compressed c;
    compress_into(x, role, c);
    return c;
  }

  // out's "codes" buffer is reused when it holds the size: resize then neither reallocates nor
  // zero-fills, and pass 2 overwrites every code (as dgq_encode_into reuses its codes).
  void compress_into(ConstTensor x, TensorRole role, Compressed& c) const override {
    std::vector<std::uint8_t> codes = take_part_buffer(c, "codes");
    c = start_compressed(spec(), x, role);
    // The encoder writes the codes straight into their part (int8 through the unsigned
    // bytes: same object, signed view).
    DgqV1Encoded enc;
    try {
      detail::check_shape(x);  // before sizing the codes by it
      codes.resize(static_cast<std::size_t>(x.tokens * x.channels));
      auto* code_bytes = reinterpret_cast<std::int8_t*>(codes.data());
      c.diagnostics.segments = SegmentDiagnostics{detail::encode_parts(k_, x, params_, enc, code_bytes)};
    } catch (const InputError&) {
      // dgq_encode rejects NaN/Inf itself, in its own words and possibly after another error
      // (an overflowing row before it); the scheme reports the first non-finite element in
      // the schemes' uniform words instead. Scanning only on failure spares a pass.
      if (x.data != nullptr && x.channels >= 1) check_finite(x, "dgq");
      throw;
    }
    append_dgq_parts(enc, std::move(codes), c);
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const DgqPartsView parts = view_dgq_parts(c, params_);
    // Decoded straight from the "codes" part; the header's codes stay empty.
    detail::dgq_decode_codes(k_, parts.header, parts.codes, out);
  }

  // Data-dependent: the upper bound, every tensor using its full segment budget (rule 4).
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return dgq_planned_bytes(tokens, channels, params_);
  }

  // Rules C3 and C4 (docs/spec.md, "Causal caches"): the segments of boundaries=online, each
  // final once the edge that closes it is decided; the same for adaptive, whose causal form is
  // online.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole) const override {
    const DgqV1Params p = online_params();
    std::vector<std::uint32_t> edges;
    try {
      detail::check_shape(x);
      if (x.tokens > 0) edges = detail::analyze_pass(detail::scan_tensor(k_, x, p), x.tokens, p).edges;
    } catch (const InputError&) {
      if (x.data != nullptr && x.channels >= 1) check_finite(x, "dgq");  // compress's words, as there
      throw;
    }
    DgqV1Encoded prefix;  // rule 9 of the final prefix: its tokens and segments are all that count
    prefix.channels = x.channels;
    prefix.params = p;
    const auto bytes = [&](std::uint32_t c) {
      // x[0:c]'s edges (rule C3) are x's edges below c; c closes the last segment.
      const auto below = std::lower_bound(edges.begin(), edges.end(), c) - edges.begin();
      prefix.tokens = c;
      prefix.segments = c > 0 ? static_cast<int>(below) + 1 : 0;
      return prefix.stored_bytes().total();
    };
    return kernels::delayed_schedule(kernels::online_final_rows(edges, x.tokens, p.win, 0), 0, x.tokens, bytes);
  }

  std::unique_ptr<Scheme> causal_form() const override { return std::make_unique<DgqScheme>(online_params(), k_); }

  // The open segment is raw until its closing edge is decided (rule C4).
  bool keeps_raw_rows(TensorRole) const override { return true; }

 private:
  DgqV1Params online_params() const {
    DgqV1Params p = params_;
    p.boundaries = Boundaries::online;
    return p;
  }

  DgqV1Params params_;
  const kernels::CpuKernels& k_;
};

}  // namespace

std::vector<SchemeFamily> dgq_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "dgq",
          .device = device,
          .order = 10,
          .summary =
              "DGQ v1: 1..8 variance-driven segments per head, int8 codes with one range per segment (docs/spec.md)",
          .params = dgq_scheme_params(),
          .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
            return std::make_unique<DgqScheme>(dgq_v1_params_from_args(args), *kt);
          },
          .accepts_channels = [](std::int64_t channels) { return channels >= 1; },
          .stored_size = SchemeFamily::StoredSize::at_most,  // one range per segment, 1..max_groups of them
          .stored_layout = StoredLayout::segment_codes,
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_dgq =
    register_scheme_families(dgq_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes
