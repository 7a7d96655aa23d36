#pragma once
// The ggml tensor types a GGUF model's weights come in, decoded to fp32 with ggml's own rules
// (ggml-quants.c dequantize_row_*, ggml_fp16_to_fp32, ggml_bf16_to_fp32), which are also those
// of the gguf package's numpy port (gguf/quants.py) that tools/export-model.py used: a model read
// straight from its GGUF gets the same fp32 weights, bit for bit, as its exported model file
// (tests/python/test_eval_gguf.py). Every product is written as ggml writes it, evaluated left
// to right without contraction (the build has -ffp-contract=off).
#include <cstdint>
#include <string>

namespace dgq::sim::gguf {

struct WeightType {
  const char* name;           // ggml_type_name
  std::int64_t block_values;  // values per block (1 for plain floats)
  std::int64_t block_bytes;
};

// The type's layout, or nullptr when dgq does not decode it (the caller refuses the tensor by
// the type's number and, where known, ggml's name: weight_type_name).
const WeightType* weight_type(std::uint32_t ggml_type);
std::string weight_type_name(std::uint32_t ggml_type);
// The names of the types weight_type() decodes, for error messages.
std::string decoded_weight_types();

// One row of n values (n a multiple of the type's block_values) from its stored bytes.
void dequantize_weight_row(std::uint32_t ggml_type, const std::uint8_t* bytes, std::int64_t n, float* out);

}  // namespace dgq::sim::gguf
