#pragma once
// The ranges that a stored head's codes need beside them (the formats with ranges: dgq, uniform
// b, codebook b): the tokens are cut into spans that share a (lo, scale), and a code decodes with
// its span's. One holder for every layout that has spans, named for what it holds: DGQ v1's
// segments, dgq2's spans (rule V3), KIVI's key groups and value tokens, TurboQuant's tokens.
#include <cstdint>
#include <vector>

namespace dgq::cpu {

// The span edges [0, e1, ..., L] and each span's lo and scale, one per span (channels = 1) or
// one per span and channel (channels = head_dim; lo[s * channels + c]), and whether the values
// decode to fp16 (the input dtype: the decompress rounds to it) or stay fp32. DGQ v1: a value is
// fmaf(code + 127, scale, lo) (docs/spec.md rules 6-8, rules::dequant_scale; in-band markers
// decoded as rule 8's inband_unmark); uniform codes: fmaf(code, scale, lo) with scale = (hi -
// lo) / levels as the scheme's decompress computes it; codebook codes: codebook[code] times the
// span's scale (the token's norm; lo unused). Bit for bit what Scheme::decompress writes before
// any inverse rotation.
struct SpanRanges {
  std::vector<std::uint32_t> edges;
  std::vector<float> lo, scale;
  int channels = 1;
  bool f16 = true;
  std::vector<float> codebook;  // codebook formats: the 2^b levels the codes index
  // dgq_segment_ranges: the head was stored with the modifier rot=hadamard (its values are in
  // the rotated basis: set StoredKv's k_rotated / v_rotated).
  bool rotated = false;
};

}  // namespace dgq::cpu
