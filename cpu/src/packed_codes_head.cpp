// The stored heads of packed b-bit codes as decode attention reads them (layouts span_codes:
// dgq2, group_codes: KIVI, codebook_tokens: TurboQuant, preset_slots: vLLM's presets; formats
// uniform2 .. uniform8, codebook2 .. codebook4): the codes where they lie and each span's lo and
// scale (TurboQuant: each token's norm, the codebook and the rotation), read from the scheme's
// parts once per head when the cache is set up. The spans and ranges are the decompress's (dgq2
// rules V3-V6 through the reference's dgq2 helpers; KIVI's layout as kivi_scheme.cpp documents
// it; TurboQuant's as docs/spec.md does), so a value the kernel decodes is the one
// Scheme::decompress computes before any inverse rotation.
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "decode_attention_spec.hpp"
#include "decode_attention_vllm.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/kernels.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/kv_block_rules.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/dgq2/layout.hpp"
#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "dgq/schemes/dgq2/params.hpp"
#include "dgq/schemes/dgq2/range_store.hpp"
#include "dgq/schemes/dgq2/segments.hpp"
#include "dgq/stored_layout.hpp"

namespace dgq::cpu {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument("decode_attention: " + what); }

StoredFormat uniform_format(int bits) {
  switch (bits) {
    case 2: return StoredFormat::uniform2;
    case 3: return StoredFormat::uniform3;
    case 4: return StoredFormat::uniform4;
    case 8: return StoredFormat::uniform8;
    default: refuse("no uniform format of " + std::to_string(bits) + " bits");
  }
}

const Part& part_of(const Compressed& c, const char* name) {
  const Part* p = c.find(name);
  if (p == nullptr) throw InputError(c.scheme + ": part '" + name + "' is missing");
  return *p;
}

void check_input_dtype(const Compressed& c) {
  if (c.dtype != DType::f16 && c.dtype != DType::f32)
    refuse("the uniform formats take fp16 or fp32 input, not " + std::string(dtype_name(c.dtype)));
}

// The rows after the quantized tokens (dgq2's and KIVI's part "residual", in the input dtype).
void set_raw_rows(const Compressed& c, std::int64_t quantized, const char* family, StoredHead& head) {
  const Part& raw = part_of(c, "residual");
  head.raw_tokens = c.tokens - quantized;
  if (raw.bytes.size() != static_cast<std::uint64_t>(head.raw_tokens * c.channels) * dtype_size(c.dtype))
    throw InputError(c.scheme + ": corrupt " + family + " data: part 'residual' has the wrong size");
  head.raw = head.raw_tokens > 0 ? raw.bytes.data() : nullptr;
}

StoredHead dgq2_head(const Compressed& c, const ParsedSpec& spec) {
  namespace d2 = schemes::dgq2;
  const d2::Params p = d2::params_from_args(spec.args).for_role(c.role);  // dgq2 reads rot itself
  const d2::RangeGranularity g = p.granularity(c.role);
  const std::int64_t quantized = d2::quantized_tokens(c.tokens, p.residual);
  if (quantized != c.tokens && p.rotate)
    refuse("'" + c.scheme + "' keeps its raw tokens unrotated beside rotated codes, which the kernel does not read");
  if (d2::uses_segments(g) && p.seg.markers == Markers::inband)
    refuse("'" + c.scheme + "' marks segments in-band, which the kernel does not read (use markers=table or bitmap)");
  const Part& codes = part_of(c, "codes");
  if (codes.bytes.size() != d2::packed_code_bytes(static_cast<std::uint64_t>(quantized * c.channels), p.bits))
    throw InputError(c.scheme + ": corrupt dgq2 data: part 'codes' has the wrong size");
  std::vector<std::uint32_t> edges{0};
  if (d2::uses_segments(g)) {
    edges = d2::edges_from_parts(part_of(c, "markers").bytes, codes.bytes.data(), codes.bytes.size(), quantized,
                                 c.channels, p, c.scheme);
  } else if (quantized > 0) {
    edges.push_back(static_cast<std::uint32_t>(quantized));
  }
  const std::vector<d2::TokenSpan> spans = d2::range_spans(g, p.group(c.role), edges, quantized);
  const std::size_t per_span = d2::per_channel(g) ? static_cast<std::size_t>(c.channels) : 1;
  const Part& ranges = part_of(c, "ranges");
  if (ranges.bytes.size() != spans.size() * per_span * d2::range_pair_bytes(p.range_dtype))
    throw InputError(c.scheme + ": corrupt dgq2 data: part 'ranges' has the wrong size");
  StoredHead head;
  head.format = uniform_format(p.bits);
  head.codes = codes.bytes.data();
  head.rotated = p.rotate;
  set_raw_rows(c, quantized, "dgq2", head);
  head.ranges.f16 = c.dtype == DType::f16;
  head.ranges.channels = static_cast<int>(per_span);
  head.ranges.edges.push_back(0);
  std::size_t index = 0;
  for (const d2::TokenSpan& s : spans) {
    head.ranges.edges.push_back(s.end);
    for (std::size_t k = 0; k < per_span; ++k) {
      const d2::StoredRange r = d2::load_range(ranges.bytes, index++, p.range_dtype);
      if (!std::isfinite(r.hi - r.lo)) throw InputError(c.scheme + ": corrupt dgq2 data: a range is wider than fp32");
      head.ranges.lo.push_back(r.lo);
      head.ranges.scale.push_back(schemes::uniform_scale(r.lo, r.hi, p.levels()));
    }
  }
  return head;
}

// KIVI ("kivi-b:group=G,residual=R"; with rot=hadamard its parts hold the rotated tensor's codes).
StoredHead kivi_head(const Compressed& c, const ParsedSpec& spec) {
  assert(spec.family->stored_format.has_value());  // a group_codes family names its code width
  const StoredFormat format = *spec.family->stored_format;
  const int bits = kv_block_rules::uniform_bits(format);
  const int group = spec.args.integer("group"), residual = spec.args.integer("residual");
  const std::int64_t old = c.tokens > residual ? c.tokens - residual : 0;
  const std::int64_t quantized = c.role == TensorRole::key ? old / group * group : old;
  const Part& codes = part_of(c, "codes");
  const bool keys = c.role == TensorRole::key;
  const std::size_t spans = static_cast<std::size_t>(keys ? quantized / group : quantized);
  const std::size_t per_span = keys ? static_cast<std::size_t>(c.channels) : 1;
  const Part& ranges = part_of(c, "ranges");
  if (codes.bytes.size() != (static_cast<std::uint64_t>(quantized * c.channels) * bits + 7) / 8 ||
      ranges.bytes.size() != spans * per_span * 8)
    throw InputError(c.scheme + ": corrupt KIVI data: parts 'codes' or 'ranges' have the wrong size");
  StoredHead head;
  head.format = format;
  head.codes = codes.bytes.data();
  head.rotated = spec.modifier("rot") == "hadamard";  // the raw rows too: the modifier rotates the input
  set_raw_rows(c, quantized, "KIVI", head);
  head.ranges.f16 = c.dtype == DType::f16;
  head.ranges.channels = static_cast<int>(per_span);
  head.ranges.edges.push_back(0);
  const int levels = (1 << bits) - 1;
  for (std::size_t s = 0; s < spans; ++s) {
    head.ranges.edges.push_back(static_cast<std::uint32_t>(keys ? (s + 1) * group : s + 1));
    for (std::size_t k = 0; k < per_span; ++k) {
      const schemes::Range r = schemes::read_range(ranges.bytes, s * per_span + k);
      head.ranges.lo.push_back(r.lo);
      head.ranges.scale.push_back(schemes::uniform_scale(r.lo, r.hi, levels));
    }
  }
  return head;
}

// TurboQuant_mse ("turboquant:bits=b,seed=s"): per token its fp32 norm g and d codes of b bits
// indexing the codebook of (d, b); the values y_j = c[code_j] * g lie in the basis of the role's
// rotation Pi, which the kernel moves to the query (forward, K) and to the output (inverse, V).
StoredHead turboquant_head(const Compressed& c, const ParsedSpec& spec) {
  if (spec.args.word("variant") != "mse")
    refuse("'" + c.scheme + "' adds the QJL residual (variant=prod), which the kernel does not read");
  if (spec.modifier("rot") != "none")
    refuse("'" + c.scheme + "' puts the Hadamard rotation before TurboQuant's own, which the kernel does not read");
  const int bits = spec.args.integer("bits"), seed = spec.args.integer("seed");
  const int d = static_cast<int>(c.channels);
  if (bits < 2 || bits > 4) refuse("'" + c.scheme + "': the codebook formats take 2 to 4 bits");
  const turboquant::CodebookView book = turboquant::codebook(d, bits);
  if (book.centroids == nullptr || (d & (d - 1)) != 0)
    refuse("'" + c.scheme + "' has no codebook for head_dim " + std::to_string(d));
  const Part& codes = part_of(c, "codes");
  const Part& norms = part_of(c, "norms");
  if (codes.bytes.size() != static_cast<std::size_t>(c.tokens) * static_cast<std::size_t>(d * bits / 8) ||
      norms.bytes.size() != static_cast<std::size_t>(c.tokens) * 4)
    throw InputError(c.scheme + ": corrupt TurboQuant data: parts 'codes' or 'norms' have the wrong size");
  StoredHead head;
  head.format = bits == 2 ? StoredFormat::codebook2 : bits == 3 ? StoredFormat::codebook3 : StoredFormat::codebook4;
  head.codes = codes.bytes.data();
  head.ranges.f16 = false;  // y stays fp32: the decode rounds only after rotating back
  head.ranges.codebook.assign(book.centroids, book.centroids + (1 << bits));
  head.ranges.edges.push_back(0);
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    float g;
    std::memcpy(&g, norms.bytes.data() + t * 4, 4);
    head.ranges.edges.push_back(static_cast<std::uint32_t>(t + 1));
    head.ranges.lo.push_back(0.0f);
    head.ranges.scale.push_back(g);
  }
  const bool key = c.role == TensorRole::key;
  auto rotation = std::make_shared<const turboquant::Rotation>(
      d, turboquant::rotation_stream(static_cast<std::uint32_t>(seed), key), fast_kernels());
  if (key) {
    head.rotation = [rotation](float* row) { rotation->forward(row); };
  } else {
    head.rotation = [rotation](float* row) { rotation->inverse(row); };
  }
  return head;
}

// vLLM's presets: the family's preset found in the presets' own table (the registry's entry of
// a preset_slots family is one of them).
StoredHead preset_head(const Compressed& c, const ParsedSpec& spec) {
  const turboquant_vllm::Preset* preset = turboquant_vllm::find_preset(spec.family->name);
  assert(preset != nullptr);
  if (spec.modifier("rot") != "none")
    refuse("'" + c.scheme + "' puts the Hadamard rotation before the preset's own, which the kernel does not read");
  return vllm_turboquant_head(c, *preset, spec);
}

}  // namespace

StoredHead packed_codes_head(const Compressed& c) {
  const ParsedSpec spec = parse_spec(c.scheme);
  const StoredLayout layout = spec.family->stored_layout;
  if (layout != StoredLayout::span_codes && layout != StoredLayout::group_codes &&
      layout != StoredLayout::codebook_tokens && layout != StoredLayout::preset_slots)
    refuse(
        "the uniform and codebook formats read the parts of dgq2, KIVI, TurboQuant or vLLM's TurboQuant presets, not "
        "'" +
        c.scheme + "'");
  check_input_dtype(c);
  if (c.channels % 32 != 0) refuse("head_dim must be a multiple of 32, got " + std::to_string(c.channels));
  refuse_modifiers_but_rotation(spec, c.scheme);
  switch (layout) {
    case StoredLayout::span_codes: return dgq2_head(c, spec);
    case StoredLayout::group_codes: return kivi_head(c, spec);
    case StoredLayout::codebook_tokens: return turboquant_head(c, spec);
    default: return preset_head(c, spec);
  }
}

}  // namespace dgq::cpu
