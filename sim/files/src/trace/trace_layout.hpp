#pragma once
// The pieces of trace format v1 (docs/trace-format.md) that the trace reader/writer and the
// compressed-file format (docs/compressed-format.md) share: root attributes, the auxiliary
// datasets (/q_pos, /tokens, /noise_mask, /text) and whole [heads][tokens][channels] tensors.
#include <optional>
#include <string>
#include <vector>

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/trace.hpp"

namespace dgq::sim::layout {

inline constexpr const char* kTraceFormat = "dgq-trace";
inline constexpr int kTraceVersion = 1;
// bf16 tensors are stored as uint16 (their bits) with this dataset attribute set to "bf16".
inline constexpr const char* kDtypeAttribute = "dtype";

// The dgq dtype of a tensor dataset (f16, f32, or marked bf16); nullopt for anything else.
std::optional<DType> tensor_dtype(hid_t dataset, hid_t type, const std::string& context);

std::string layer_group(int layer);                             // "/layers/3"
std::string layer_dataset(int layer, const std::string& name);  // "/layers/3/k"

// Synthetic traces: the generator's version and canonical options (TraceMeta, synth.hpp).
inline constexpr const char* kAttrGeneratorVersion = "generator_version";
inline constexpr const char* kAttrGeneratorOptions = "generator_options";

// Root attributes: format, version, model, shape, rope_applied, source, prompt_kind, seed,
// and when present layer_ids, generator_version, generator_options.
void write_meta_attributes(hid_t file, const TraceMeta& meta, const std::string& format);
// Reads and validates them; `path` names the file in errors. Fills the attribute fields only.
TraceMeta read_meta_attributes(hid_t file, const std::string& path, const std::string& expected_format);

// Checks the fields a writer needs (positive shape, q_pos increasing in [0, L), optional
// vectors of length L, kv dtype f16/f32). Throws ParameterError naming the field.
void validate_meta_for_writing(const TraceMeta& meta);

// /q_pos, and /tokens, /noise_mask, /text when present in meta.
void write_aux_datasets(hid_t file, const TraceMeta& meta, const std::string& path);
// Reads them into meta, validating against meta.tokens (L), which must be set first.
void read_aux_datasets(hid_t file, TraceMeta& meta, const std::string& path);

// A [heads][tokens][channels] float tensor, chunked per (head, up to 1024 tokens).
void write_tensor3(hid_t loc, const std::string& name, const Tensor3& t, const std::string& context);
// Checks rank, shape (expected; -1 = any) and dtype (f16/f32/bf16) of a float dataset without
// reading it; returns its dtype. context = "FILE: /layers/3/k".
DType check_tensor3(hid_t loc, const std::string& name, const std::vector<std::int64_t>& expected,
                    const std::string& context);
Tensor3 read_tensor3(hid_t loc, const std::string& name, const std::string& context);

// Throws InputError("<context>: non-finite value nan at head h, token t, channel c").
void check_finite(const Tensor3& t, const std::string& context);

}  // namespace dgq::sim::layout
