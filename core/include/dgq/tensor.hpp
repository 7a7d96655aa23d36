#pragma once
// Tensors of the KV cache as dgq sees them: one (layer, KV head, K or V) unit is a
// row-major [tokens][channels] matrix in its storage dtype.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dgq {

enum class DType : std::uint8_t { f16, bf16, f32 };

std::size_t dtype_size(DType t);
std::string_view dtype_name(DType t);   // "f16", "bf16", "f32"
DType parse_dtype(std::string_view s);  // throws ParameterError

// Read-only view of one [tokens][channels] row-major matrix; rows are contiguous.
struct ConstTensor {
  const void* data = nullptr;
  DType dtype = DType::f16;
  std::int64_t tokens = 0;
  std::int64_t channels = 0;
  std::size_t bytes() const { return static_cast<std::size_t>(tokens * channels) * dtype_size(dtype); }
};

struct MutTensor {
  void* data = nullptr;
  DType dtype = DType::f16;
  std::int64_t tokens = 0;
  std::int64_t channels = 0;
  std::size_t bytes() const { return static_cast<std::size_t>(tokens * channels) * dtype_size(dtype); }
  operator ConstTensor() const { return {data, dtype, tokens, channels}; }
};

// Owning [heads][tokens][channels] tensor (one layer's K or V for all KV heads, or Q).
struct Tensor3 {
  DType dtype = DType::f16;
  std::int64_t heads = 0, tokens = 0, channels = 0;
  std::vector<std::byte> storage;  // heads*tokens*channels*dtype_size bytes

  Tensor3() = default;
  Tensor3(DType t, std::int64_t h, std::int64_t l, std::int64_t d);
  std::size_t head_bytes() const { return static_cast<std::size_t>(tokens * channels) * dtype_size(dtype); }
  ConstTensor head(std::int64_t h) const;
  MutTensor head(std::int64_t h);
};

// Exact conversions (docs/spec.md rule 0): fp16/bf16 -> fp32 is exact; fp32 -> fp16/bf16
// rounds to nearest, ties to even. Element i of t, as fp32.
float load_element(ConstTensor t, std::int64_t index);
void store_element(MutTensor t, std::int64_t index, float value);
// Whole-matrix conversion to fp32 (row-major, tokens*channels floats).
std::vector<float> to_float(ConstTensor t);
// The same into out (resized to tokens*channels), so a caller converting many tensors of one
// shape reuses its buffer.
void to_float(ConstTensor t, std::vector<float>& out);
// The same into out[0 .. tokens*channels), memory the caller owns.
void to_float(ConstTensor t, float* out);
// Fill t from fp32 values with round-to-nearest-even.
void from_float(const float* values, MutTensor t);
// x in dtype `to` (rule 0: widening is exact, narrowing rounds to nearest, ties to even), in out
// (resized), as a view of out; x itself when it already is `to`. x must be finite; a finite value
// too large for `to` (above 65504 in fp16) throws InputError "<who>: value V at token t, channel
// d overflows f16 (the largest finite is 65504)", its token counted from first_token, rather
// than becoming an infinity nobody asked for.
ConstTensor convert_tensor(ConstTensor x, DType to, std::vector<std::uint8_t>& out, std::string_view who,
                           std::int64_t first_token = 0);

// The NaN/Inf check every input boundary shares (the schemes, the causal cache): InputError
// "<who>: non-finite value nan at token t, channel d" for the first NaN/Inf of x, its token
// counted from first_token. A finite tensor costs one pass the compiler vectorizes.
void check_finite(ConstTensor x, std::string_view who, std::int64_t first_token = 0);
// That error for element `index` of a tensor of `channels` columns whose value is v.
[[noreturn]] void throw_non_finite(std::string_view who, float v, std::int64_t index, std::int64_t channels,
                                   std::int64_t first_token = 0);

}  // namespace dgq
