#pragma once
// The stages of DGQ v1 (docs/spec.md), one function per rule, shared by encode and analyze.
#include <cstdint>
#include <vector>

#include "dgq/dgq.hpp"
#include "dgq/kernels/dgq_pass_one.hpp"
#include "row_kernels.hpp"

namespace dgq::detail {

// Pass 1 and rules 2-3 are public (dgq/kernels/dgq_pass_one.hpp): dgq2 segments with them.
using kernels::block_means;
using kernels::block_ratios;
using kernels::PassOne;
using kernels::scan_tensor;
using kernels::select_edges;

// Rules 2-5 on pass 1's result.
DgqAnalysis analyze_pass(const PassOne& pass, std::int64_t tokens, const DgqV1Params& p);

// Rule 1's v_t from a row's sums; throws InputError if the variance is not finite.
float token_variance(const kernels::RowStats& st, std::int64_t channels, float min_var, std::int64_t token);

// Segment edges [0, e1, ..., L] from the interior edges.
std::vector<std::uint32_t> with_ends(const std::vector<std::uint32_t>& interior, std::int64_t tokens);

// Rule 6: lo/hi per segment (x C), from the block extremes; throws InputError on overflow.
void segment_ranges(const PassOne& pass, const std::vector<std::uint32_t>& edges, int win, DgqV1Encoded& enc);

// Rule 7: codes of every segment (second pass over the tensor) into codes[tokens*channels].
void quantize_segments(const kernels::CpuKernels& k, ConstTensor x, const std::vector<std::uint32_t>& edges,
                       const DgqV1Encoded& enc, std::int8_t* codes);

// Rule 8: stores the segment edges in the marker mode's form (in-band: into `codes`).
void store_markers(const std::vector<std::uint32_t>& edges, DgqV1Encoded& enc, std::int8_t* codes);

// Rules 0-8 into `enc` (its buffers reused), with the codes written to codes[tokens*channels]
// rather than enc.codes, which is left untouched (the Scheme stores them in its own part
// without a copy). Returns the segment edges [0, ..., tokens].
std::vector<std::uint32_t> encode_parts(const kernels::CpuKernels& k, ConstTensor x, const DgqV1Params& p,
                                        DgqV1Encoded& enc, std::int8_t* codes);

// Per-channel views of segment s's range (C entries broadcast to `channels`).
void segment_row_params(const DgqV1Encoded& enc, int s, std::vector<float>& lo, std::vector<float>& step, bool inverse);

}  // namespace dgq::detail
