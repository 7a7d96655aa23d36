#pragma once
// The causal cache (docs/spec.md, "Causal caches"): a KV cache written as a decoder writes it,
// token by token, where a token's stored value becomes final once and is never re-quantized
// with statistics of later tokens. Until then the token is held raw, in the cache's raw dtype
// (rule C9: the rows of a role that keeps rows raw are held in it, fp16 as deployments do).
//
// A family states its causal rule through two Scheme members (dgq/scheme.hpp):
//   causal_schedule(x): after token T of x is appended, how many tokens (a prefix) are final and
//     what that prefix costs as stored; decided from tokens 0..T only;
//   causal_form(): the scheme that stores the final prefix. Its compress of the final prefix
//     decodes every final token to the value the cache keeps for it, and compressing a longer
//     final prefix never changes the values of a shorter one (causal consistency, tested for
//     every family on every prefix).
// Two implementations read that rule: CausalCache (the literal cache: append, read) and
// causal_timeline (the whole chunk at once, for a prefill-cost evaluation). They agree byte for
// byte (tests/reference/test_causal_conformance.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "dgq/scheme.hpp"

namespace dgq {

struct CausalSchedule {
  // final_tokens[T], T = 0 .. tokens-1: after token T was appended, tokens 0 .. final_tokens[T]-1
  // hold their final value and tokens final_tokens[T] .. T are raw. Non-decreasing, <= T+1.
  std::vector<std::uint32_t> final_tokens;
  // final_bytes[T]: the bytes the causal form stores for that final prefix.
  std::vector<std::uint64_t> final_bytes;
};

// The schedule of a per-token format (final on append): final_tokens[T] = T+1, final_bytes[T] =
// s.planned_bytes(T+1, ...) (exact for every per-token family). Scheme's default.
CausalSchedule per_token_schedule(const Scheme& s, ConstTensor x, TensorRole role);

// The schedule of a scale fixed from the first `prefix` tokens (rule C5: fp8-e4m3 and nvfp4 with
// scale=prefix): nothing is final before token prefix-1, then every token is, final on append
// from there; final_bytes[T] = s.planned_bytes(final_tokens[T], ...).
CausalSchedule prefix_scale_schedule(const Scheme& s, ConstTensor x, TensorRole role, std::int64_t prefix);

// A schedule's bytes held after token T: the final prefix as stored plus the raw tokens, each a
// row of `channels` elements of `dtype` (the cache's row dtype).
std::uint64_t causal_held_bytes(const CausalSchedule& s, std::int64_t t, std::int64_t channels, DType dtype);

// Rule C9: the dtype a cache of `role` holds its rows in, given the dtype they arrive in. A
// role whose scheme keeps rows raw (Scheme::keeps_raw_rows) holds every row in raw_dtype, and
// its scheme codes them from there, as a deployment that holds its raw window in fp16 has
// nothing else to code from; a role that codes every row on append keeps the rows' own dtype.
// No raw_dtype: the rows' own dtype for every role (the cache before rule C9).
DType cache_row_dtype(const Scheme& s, TensorRole role, DType rows, std::optional<DType> raw_dtype);

// The whole chunk at once: the rows as the cache holds them (x in the row dtype of rule C9), the
// decoded values every token will be final with ([tokens][channels] fp32, widened from the row
// dtype; a token that is still raw after the last append is decoded as the causal form stores a
// closed prefix of all tokens, and nobody reads it) and the schedule of those rows. What
// attention reads for a query at time T: final_values for tokens below schedule.final_tokens[T],
// held_rows above.
struct CausalTimeline {
  DType row_dtype = DType::f32;
  std::vector<float> held_rows;  // [tokens][channels], x converted to row_dtype, widened to fp32
  std::vector<float> final_values;
  CausalSchedule schedule;
};
CausalTimeline causal_timeline(const Scheme& s, ConstTensor x, TensorRole role,
                               std::optional<DType> raw_dtype = std::nullopt);

// The literal cache of one layer x KV head x role: tokens appended in micro-batches, the stored
// state read back at any moment. Each append asks the schedule how many tokens are final now;
// newly final tokens take their value from the causal form's compression of the final prefix,
// and the values stored before are checked to be unchanged (a family whose rule looks ahead
// fails here with std::logic_error, never silently).
class CausalCache {
 public:
  // Rows are appended in `dtype` and held in cache_row_dtype(scheme, role, dtype, raw_dtype).
  // append: a refused batch (InputError for bad data, or a value the row dtype cannot hold)
  // leaves the cache as it was.
  CausalCache(const Scheme& scheme, TensorRole role, std::int64_t channels, DType dtype,
              std::optional<DType> raw_dtype = std::nullopt);
  void append(ConstTensor rows);
  std::int64_t channels() const { return channels_; }
  DType row_dtype() const { return dtype_; }
  std::int64_t tokens() const { return tokens_; }
  std::int64_t final_tokens() const { return final_; }
  // What attention reads now, [tokens()][channels] fp32: final values, then the raw tail.
  void read(std::vector<float>& out) const;
  // The same into out[0 .. tokens()*channels()), memory the caller owns (a numpy array).
  void read(float* out) const;
  // Bytes held now: the final prefix as stored plus the raw tail in the row dtype.
  std::uint64_t held_bytes() const;

 private:
  void settle_final_tokens();

  const Scheme& scheme_;
  std::unique_ptr<Scheme> owned_form_;
  const Scheme* form_ = nullptr;
  TensorRole role_;
  std::int64_t channels_ = 0, tokens_ = 0, final_ = 0;
  DType input_dtype_;                // of the appended rows
  DType dtype_;                      // the rows as held (rule C9)
  std::vector<std::uint8_t> raw_;    // every appended row, row dtype
  std::vector<float> final_values_;  // [final_][channels]
  std::uint64_t final_bytes_ = 0;
};

}  // namespace dgq
