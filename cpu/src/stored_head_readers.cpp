// read_stored_head: a compressed head read by the reader of its family's stored layout (the
// registry trait SchemeFamily::stored_layout), from a table indexed by the layout, so that no
// family is recognised by its name here and a family that declares a layout is read as every
// other family of that layout.
#include <array>
#include <cassert>
#include <stdexcept>
#include <string>

#include "decode_attention_spec.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/stored_layout.hpp"

namespace dgq::cpu {
namespace {

using Reader = StoredHead (*)(const Compressed& c, const ParsedSpec& spec);

// The families that declare a layout, listed in the refusal so that it says what is read.
std::string readable_families() {
  std::string names;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::cpu || f.stored_layout == StoredLayout::unreadable) continue;
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  return names;
}

StoredHead refuse_unreadable(const Compressed& c, const ParsedSpec&) {
  throw std::invalid_argument("decode_attention: the kernel reads the stored heads of " + readable_families() +
                              ", not '" + c.scheme + "'");
}

StoredHead read_ggml_blocks(const Compressed& c, const ParsedSpec& spec) {
  assert(spec.family->stored_format.has_value());  // a ggml_blocks family names its block type
  const StoredFormat format = *spec.family->stored_format;
  refuse_modifiers_but_rotation(spec, c.scheme);
  const Part* blocks = c.find("blocks");
  if (blocks == nullptr) throw InputError(c.scheme + ": part 'blocks' is missing");
  const auto row_bytes =
      static_cast<std::uint64_t>(c.channels / 32) * static_cast<std::uint64_t>(kv_block_bytes(format));
  if (blocks->bytes.size() != static_cast<std::uint64_t>(c.tokens) * row_bytes)
    throw InputError(c.scheme + ": corrupt data: part 'blocks' has the wrong size");
  StoredHead h;
  h.format = format;
  h.codes = blocks->bytes.data();
  h.rotated = spec.modifier("rot") == "hadamard";
  return h;
}

StoredHead read_segment_codes(const Compressed& c, const ParsedSpec&) {
  StoredHead h;
  h.format = StoredFormat::dgq;
  h.ranges = dgq_segment_ranges(c, &h.codes);
  h.rotated = h.ranges.rotated;
  return h;
}

StoredHead read_packed_codes(const Compressed& c, const ParsedSpec&) { return packed_codes_head(c); }

// Indexed by StoredLayout: one reader per layout, the order of its enumerators.
constexpr std::array<Reader, kStoredLayoutCount> kReaders = {
    refuse_unreadable,   // unreadable
    read_ggml_blocks,    // ggml_blocks
    read_segment_codes,  // segment_codes
    read_packed_codes,   // span_codes
    read_packed_codes,   // group_codes
    read_packed_codes,   // codebook_tokens
    read_packed_codes,   // preset_slots
};
static_assert(kReaders.size() == kStoredLayoutCount);

}  // namespace

StoredHead read_stored_head(const Compressed& c) {
  if (c.channels < 32 || c.channels % 32 != 0)
    throw std::invalid_argument("CompressedLayer: head_dim must be a positive multiple of 32, got " +
                                std::to_string(c.channels) + " ('" + c.scheme + "')");
  const ParsedSpec spec = parse_spec(c.scheme);
  const auto layout = static_cast<std::size_t>(spec.family->stored_layout);
  assert(layout < kReaders.size() && kReaders[layout] != nullptr);
  return kReaders[layout](c, spec);
}

}  // namespace dgq::cpu
