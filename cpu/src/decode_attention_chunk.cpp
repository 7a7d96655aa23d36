// The chunk of a decode step: the AVX2/FMA path's tiles (scores and V accumulation of up to 4
// query heads per pass, the readers of decode_attention_readers_avx2.hpp dequantizing the blocks
// in registers) and the dispatch by format, or the scalar path of the same order
// (decode_attention_chunk_scalar.cpp). The order of the sums is dgq/attention_rules.hpp's, so
// both paths give the same bits.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "decode_attention_chunk.hpp"
#include "decode_attention_readers_avx2.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/kv_block_rules.hpp"

namespace dgq::cpu::attention {
namespace ar = dgq::attention_rules;
namespace {

#if defined(DGQ_DECODE_ATTENTION_AVX2)
using namespace avx2;  // the format readers the tiles instantiate

// lane_tree_sum8 of a register: the halving reduction the rule is written after.
inline float lane_tree_sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// ar::softmax_exp on 8 lanes, the same operations in the same order.
inline __m256 softmax_exp8(__m256 x) {
  const __m256 in_range = _mm256_cmp_ps(x, _mm256_set1_ps(ar::kExpFloor), _CMP_GE_OQ);
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(ar::kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-ar::kLn2Hi), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-ar::kLn2Lo), r);
  __m256 p = _mm256_set1_ps(ar::exp_poly(0));
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(ar::exp_poly(i)));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(exponent)), in_range);
}

// Scores of query heads h0 .. h0+H-1 (H <= 4) for chunk tokens [first, last), whose K rows of
// format F start at rows (token first's), row_bytes apart: each K block dequantized once for the H heads; its
// register k holds elements 8k.. of accumulator k % 2 = (d / 8) % 2.
template <class F, int H>
void score_heads(const ChunkInput& in, int h0, const std::uint8_t* rows, std::int64_t row_bytes, std::int64_t first,
                 std::int64_t last, float* scores) {
  const int D = in.head_dim, blocks = D / kBlock;
  const std::int64_t v_codes_bytes = static_cast<std::int64_t>(blocks) * kv_block_bytes(in.v_format);  // of a V row
  for (std::int64_t t = first; t < last; ++t) {
    const std::uint8_t* row = rows + (t - first) * row_bytes;
    // V's row t, into L2 while K streams: the V passes walk rows at a stride of row_bytes,
    // which the hardware prefetcher does not follow (a stall on every row, measured with perf
    // at head_dim 256). Data movement only: no bit changes.
    if (h0 == 0 && t < in.codes_end(true))
      for (std::int64_t offset = 0; offset < v_codes_bytes; offset += 64)
        _mm_prefetch(reinterpret_cast<const char*>(in.v + t * in.v_row_bytes + offset), _MM_HINT_T1);
    __m256 acc[H][2];
    for (int h = 0; h < H; ++h) acc[h][0] = acc[h][1] = _mm256_setzero_ps();
    const typename F::Row range = F::row(in, false, t);
    for (int b = 0; b < blocks; ++b) {
      __m256 kv[4];
      F::dequantize(row + b * F::kBytes, range, kv);
      for (int h = 0; h < H; ++h) {
        const float* q = in.q + (h0 + h) * D + b * kBlock;
        for (int k = 0; k < 4; ++k) acc[h][k % 2] = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8 * k), kv[k], acc[h][k % 2]);
      }
    }
    for (int h = 0; h < H; ++h)
      scores[(h0 + h) * ar::kChunkTokens + t] = lane_tree_sum8(_mm256_add_ps(acc[h][0], acc[h][1])) * in.scale;
  }
}

// Turns head h's scores into p_t in place (padded with -inf to a multiple of 8, which gives 0
// weights that leave the lane sums unchanged) and sets its max and sum.
void softmax_head(const ChunkInput& in, int h, const ChunkOutput& out, float* scores) {
  float* s = scores + h * ar::kChunkTokens;
  const std::int64_t padded = (in.tokens + 7) / 8 * 8;
  std::fill(s + in.tokens, s + padded, -INFINITY);
  __m256 running = _mm256_set1_ps(-INFINITY);  // the max is exact in any order
  for (std::int64_t t = 0; t < padded; t += 8) running = _mm256_max_ps(running, _mm256_loadu_ps(s + t));
  alignas(32) float lanes_max[8];
  _mm256_store_ps(lanes_max, running);
  const float m = *std::max_element(lanes_max, lanes_max + 8);
  const __m256 vm = _mm256_set1_ps(m);
  __m256 lanes = _mm256_setzero_ps();
  for (std::int64_t t = 0; t < padded; t += 8) {
    const __m256 p = softmax_exp8(_mm256_sub_ps(_mm256_loadu_ps(s + t), vm));
    _mm256_storeu_ps(s + t, p);
    lanes = _mm256_add_ps(lanes, p);
  }
  out.max[h] = m;
  out.sum[h] = lane_tree_sum8(lanes);
}

// V is walked in tiles of this many tokens, every channel of a tile before the next tile, so
// that a tile's rows stay in L1 while each half-block pass re-reads them (a whole chunk of
// q8_0 rows at head_dim 256 is 70 KB). The accumulators go through out.acc between tiles;
// each still adds its tokens in order, so the tiling changes no bit.
constexpr std::int64_t kValueTileTokens = 64;

// acc of query heads h0 .. h0+H-1 (H <= 4) over channels [16 * half_block, + 16) and tokens
// [first, last), whose V rows of format F start at rows (token rows_first's), row_bytes apart: the 2H
// accumulators in registers, each V half-block dequantized once for the H heads. first == 0
// starts from zero, a later tile from what the previous one stored.
template <class F, int H>
void accumulate_half_block(const ChunkInput& in, int h0, int half_block, const std::uint8_t* rows,
                           std::int64_t row_bytes, std::int64_t rows_first, std::int64_t first, std::int64_t last,
                           const ChunkOutput& out, const float* p) {
  const std::uint8_t* block = rows + (first - rows_first) * row_bytes + (half_block / 2) * F::kBytes;
  const int half = half_block % 2;
  __m256 acc[H][2];
  for (int h = 0; h < H; ++h) {
    const float* o = out.acc + (h0 + h) * in.head_dim + 16 * half_block;
    acc[h][0] = first == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(o);
    acc[h][1] = first == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(o + 8);
  }
  for (std::int64_t t = first; t < last; ++t, block += row_bytes) {
    __m256 vv[2];
    F::dequantize_half(block, half, F::row(in, true, t), vv);
    for (int h = 0; h < H; ++h) {
      const __m256 w = _mm256_broadcast_ss(p + (h0 + h) * ar::kChunkTokens + t);
      acc[h][0] = _mm256_fmadd_ps(w, vv[0], acc[h][0]);
      acc[h][1] = _mm256_fmadd_ps(w, vv[1], acc[h][1]);
    }
  }
  for (int h = 0; h < H; ++h) {
    float* o = out.acc + (h0 + h) * in.head_dim + 16 * half_block;
    _mm256_storeu_ps(o, acc[h][0]);
    _mm256_storeu_ps(o + 8, acc[h][1]);
  }
}

// Query heads in tiles of 4 (then 2, then 1): 8 accumulators + the dequantized registers fit
// AVX2's 16.
template <class F, template <class, int> class Tile, class... Args>
void over_head_tiles(int group, Args&&... args) {
  int h = 0;
  for (; h + 4 <= group; h += 4) Tile<F, 4>::run(h, args...);
  if (h + 2 <= group) {
    Tile<F, 2>::run(h, args...);
    h += 2;
  }
  if (h < group) Tile<F, 1>::run(h, args...);
}

template <class F, int H>
struct ScoreTile {
  static void run(int h0, const ChunkInput& in, const std::uint8_t* rows, std::int64_t row_bytes, std::int64_t first,
                  std::int64_t last, float* scores) {
    score_heads<F, H>(in, h0, rows, row_bytes, first, last, scores);
  }
};

template <class F, int H>
struct AccumulateTile {
  static void run(int h0, const ChunkInput& in, const std::uint8_t* rows, std::int64_t row_bytes, int half_block,
                  std::int64_t rows_first, std::int64_t first, std::int64_t last, const ChunkOutput& out,
                  const float* p) {
    accumulate_half_block<F, H>(in, h0, half_block, rows, row_bytes, rows_first, first, last, out, p);
  }
};

// The raw rows' format: RawF16 or RawF32 as the input dtype was, rows packed; `rows` is the
// first argument after the tile's own.
template <template <class, int> class Tile, class... Args>
void over_raw_head_tiles(const ChunkInput& in, const std::uint8_t* rows, Args&&... args) {
  const std::int64_t blocks = in.head_dim / kBlock;
  if (in.raw_f16) return over_head_tiles<RawF16, Tile>(in.group, in, rows, blocks * RawF16::kBytes, args...);
  over_head_tiles<RawF32, Tile>(in.group, in, rows, blocks * RawF32::kBytes, args...);
}

// Every token in order, its row from the codes or (from k_raw_from / v_raw_from on) raw: the
// same sums in the same order whichever a token's row comes from.
template <class FK, class FV>
void attend_chunk_avx2(const ChunkInput& in, const ChunkOutput& out, float* scores) {
  const std::int64_t k_codes = in.codes_end(false), v_codes = in.codes_end(true);
  if (k_codes > 0) over_head_tiles<FK, ScoreTile>(in.group, in, in.k, in.k_row_bytes, std::int64_t{0}, k_codes, scores);
  if (k_codes < in.tokens) over_raw_head_tiles<ScoreTile>(in, in.k_raw, k_codes, in.tokens, scores);
  for (int g = 0; g < in.group; ++g) softmax_head(in, g, out, scores);
  const float* p = scores;
  for (std::int64_t first = 0; first < in.tokens; first += kValueTileTokens) {
    const std::int64_t last = std::min(in.tokens, first + kValueTileTokens);
    const std::int64_t split = std::clamp(v_codes, first, last);
    for (int half_block = 0; half_block < 2 * (in.head_dim / kBlock); ++half_block) {
      if (first < split)
        over_head_tiles<FV, AccumulateTile>(in.group, in, in.v, in.v_row_bytes, half_block, std::int64_t{0}, first,
                                            split, out, p);
      if (split < last) over_raw_head_tiles<AccumulateTile>(in, in.v_raw, half_block, v_codes, split, last, out, p);
    }
  }
}

// The role's path among the uniform and codebook formats: Uniform<b>, or TokenLevels<b> where
// tabulated() holds.
enum class CodesPath { uniform2, uniform3, uniform4, uniform8, levels2, levels3, levels4 };
CodesPath codes_path(const ChunkInput& in, bool value) {
  const int bits = kv_block_rules::uniform_bits(value ? in.v_format : in.format);
  if (tabulated(in, value)) return bits == 2 ? CodesPath::levels2 : bits == 3 ? CodesPath::levels3 : CodesPath::levels4;
  return bits == 2   ? CodesPath::uniform2
         : bits == 3 ? CodesPath::uniform3
         : bits == 4 ? CodesPath::uniform4
                     : CodesPath::uniform8;
}

// K's path chosen, V's: any (dgq2's kbits and vbits, each role's granularity).
template <class FK>
void attend_codes_avx2(const ChunkInput& in, const ChunkOutput& out, float* scores) {
  switch (codes_path(in, true)) {
    case CodesPath::uniform2: return attend_chunk_avx2<FK, Uniform<2>>(in, out, scores);
    case CodesPath::uniform3: return attend_chunk_avx2<FK, Uniform<3>>(in, out, scores);
    case CodesPath::uniform4: return attend_chunk_avx2<FK, Uniform<4>>(in, out, scores);
    case CodesPath::uniform8: return attend_chunk_avx2<FK, Uniform<8>>(in, out, scores);
    case CodesPath::levels2: return attend_chunk_avx2<FK, TokenLevels<2>>(in, out, scores);
    case CodesPath::levels3: return attend_chunk_avx2<FK, TokenLevels<3>>(in, out, scores);
    case CodesPath::levels4: return attend_chunk_avx2<FK, TokenLevels<4>>(in, out, scores);
  }
}

// The uniform and codebook formats: each tabulated role's values first, then K's path.
void attend_codes_avx2(const ChunkInput& given, const ChunkOutput& out, float* scores) {
  thread_local std::vector<float> k_levels, v_levels;
  ChunkInput in = given;
  for (const bool value : {false, true}) {
    if (!tabulated(in, value)) continue;
    std::vector<float>& levels = value ? v_levels : k_levels;
    levels.resize(static_cast<std::size_t>(ar::kChunkTokens) * 16);
    token_levels(in, value, levels.data());
    (value ? in.v_token_levels : in.k_token_levels) = levels.data();
  }
  switch (codes_path(in, false)) {
    case CodesPath::uniform2: return attend_codes_avx2<Uniform<2>>(in, out, scores);
    case CodesPath::uniform3: return attend_codes_avx2<Uniform<3>>(in, out, scores);
    case CodesPath::uniform4: return attend_codes_avx2<Uniform<4>>(in, out, scores);
    case CodesPath::uniform8: return attend_codes_avx2<Uniform<8>>(in, out, scores);
    case CodesPath::levels2: return attend_codes_avx2<TokenLevels<2>>(in, out, scores);
    case CodesPath::levels3: return attend_codes_avx2<TokenLevels<3>>(in, out, scores);
    case CodesPath::levels4: return attend_codes_avx2<TokenLevels<4>>(in, out, scores);
  }
}
#endif

}  // namespace

bool vectorized_path_compiled() {
#if defined(DGQ_DECODE_ATTENTION_AVX2)
  return true;
#else
  return false;
#endif
}

void attend_chunk(const ChunkInput& in, const ChunkOutput& out, float* scores, [[maybe_unused]] bool scalar) {
  assert(in.tokens >= 1 && in.tokens <= ar::kChunkTokens && in.head_dim % kv_block_rules::kBlockValues == 0);
#if defined(DGQ_DECODE_ATTENTION_AVX2)
  if (!scalar) {
    switch (in.format) {
      // K and V share a format but for uniform widths (DecodeAttention checks it).
      case StoredFormat::q8_0: return attend_chunk_avx2<Q8_0, Q8_0>(in, out, scores);
      case StoredFormat::q4_0: return attend_chunk_avx2<Q4_0, Q4_0>(in, out, scores);
      case StoredFormat::iq4_nl: return attend_chunk_avx2<IQ4NL, IQ4NL>(in, out, scores);
      case StoredFormat::dgq: return attend_chunk_avx2<Dgq, Dgq>(in, out, scores);
      default: return attend_codes_avx2(in, out, scores);  // uniform and codebook formats
    }
  }
#endif
  attend_chunk_scalar(in, out, scores);
}

}  // namespace dgq::cpu::attention