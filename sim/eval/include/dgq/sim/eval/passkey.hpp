#pragma once
// `dgq eval --task passkey` (docs/eval.md, "The passkey task"): needle-in-a-haystack retrieval.
// Each prompt hides a random key in natural text and ends with the question; the model must
// continue with the key. One teacher-forced pass over prompt + answer scores what greedy
// decoding would emit (the proof is in docs/eval.md), so no sampling loop is needed.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dgq/sim/eval/cache_settings.hpp"
#include "dgq/sim/files/output/progress.hpp"
#include "dgq/sim/model/forward.hpp"
#include "dgq/sim/model/gemm_library.hpp"

namespace dgq::sim {

// ---- Task files (format "dgq-passkey" v1, tools/make-passkey.py) ---------------------------
struct PasskeyTask {
  std::string model;         // the tokenizer's model name; must equal the model file's
  std::string tokenizer_id;  // the tokenizer's identity, empty in older files (model/tokenizer_id.hpp)
  std::int64_t seed = 0;
  std::vector<std::int32_t> tokens;                        // every prompt, concatenated (no BOS)
  std::vector<std::int64_t> prompt_offsets;                // [n+1]: prompt i is tokens[off[i], off[i+1])
  std::vector<std::int32_t> answer_tokens;                 // every answer, concatenated
  std::vector<std::int64_t> answer_offsets;                // [n+1], like prompt_offsets
  std::vector<std::int64_t> key, length, needle_position;  // [n]
  std::vector<double> depth;                               // [n], percent
  std::size_t size() const { return key.size(); }
  std::span<const std::int32_t> prompt(std::size_t i) const;
  std::span<const std::int32_t> answer(std::size_t i) const;
};
// Validates the format, version, shapes, offsets (start at 0, strictly increasing, end at the
// data's length) and per-prompt fields; throws InputError naming the file, dataset and index.
// Token ids are checked against a model's vocabulary by check_passkey_task.
PasskeyTask read_passkey_file(const std::string& path);
inline constexpr std::int64_t kPasskeyFormatVersion = 1;
// The task fits the model: made by its tokenizer, every token id in its vocabulary, every
// prompt + answer (and BOS) within its context length. InputError naming file/dataset/index.
void check_passkey_task(const PasskeyTask& task, const ModelConfig& config, const std::string& path);

// ---- One answer's score --------------------------------------------------------------------
// logits [answer.size()][vocab]: row r follows the prompt and the true answer tokens 0..r-1
// (teacher forcing). predicted[r] is row r's argmax (ties: the lowest token id); exact = every
// predicted token equals the answer's, which is exactly when greedy decoding emits the answer;
// first_wrong = the first r where they differ (-1: none), the first token greedy gets wrong;
// logprob = sum over r of log softmax(row r)[answer[r]], in double.
struct AnswerScore {
  bool exact = false;
  double logprob = 0;
  std::int64_t first_wrong = -1;
  std::vector<std::int32_t> predicted;
};
AnswerScore score_answer(std::span<const float> logits, std::span<const std::int32_t> answer, std::int64_t vocab);

// ---- The run -------------------------------------------------------------------------------
struct PasskeyOptions {
  std::string model_path, task_path, output_path, json_path;
  std::vector<std::string> schemes;  // "fp32" = the exact cache; else make_scheme specs
  QueryRounding query_rounding = QueryRounding::off;
  CacheMode cache = CacheMode::causal;  // a decoder's cache: the task is decoding
  KeyPosition keys = KeyPosition::post_rope;
  DType raw_dtype = DType::f16;  // --raw-dtype (dgq/sim/eval/eval.hpp, parse_raw_dtype)
  std::int64_t ubatch = 0;       // causal only: 0 one pass, N the literal decoder
  Arithmetic arithmetic = Arithmetic::blocked;
  GemmLibrary gemm_library = default_gemm_library();  // as EvalOptions::gemm_library
  bool force = false;                         // replace an existing output file (refused otherwise, before any work)
  ProgressMode progress = ProgressMode::off;  // a unit: one prompt through one cache
};

struct PasskeyLengthSummary {
  std::int64_t length = 0, prompts = 0;
  double accuracy = 0, logprob_mean = 0;
};
struct PasskeySchemeResult {
  std::string spec, config_hash;
  std::string raw_dtype;                  // raw_dtype_label(spec, options.raw_dtype)
  std::vector<std::uint8_t> exact;        // [n]
  std::vector<double> logprob;            // [n]
  std::vector<std::int64_t> first_wrong;  // [n]
  std::vector<std::int32_t> predicted;    // concatenated like the task's answer_tokens
  // Summed over prompts: bits per element = 8 x bytes / elements, so longer prompts weigh more.
  std::uint64_t stored_bytes = 0, stored_elements = 0, held_bytes_sum = 0, held_elements_sum = 0;
  double bits_per_element = 0, bits_averaged = 0;
  std::uint64_t stored_k_bytes = 0;             // the K cache's part of stored_bytes
  double bits_k = 0, bits_v = 0;                // bits_per_element of the K and of the V cache apart
  double accuracy = 0, logprob_mean = 0;        // over every prompt
  std::vector<PasskeyLengthSummary> by_length;  // ascending length
};
struct PasskeyResult {
  std::string model;
  CacheMode cache = CacheMode::causal;
  KeyPosition keys = KeyPosition::post_rope;
  DType raw_dtype = DType::f16;
  std::int64_t ubatch = 0;
  std::int64_t prompts = 0;
  double tokens_per_second = 0;
  std::string dgq_version, config_hash;
  std::vector<PasskeySchemeResult> schemes;  // in the order given
};

// The canonical configuration of one scheme's passkey run (docs/results-format.md,
// "Provenance"): "passkey", the model, the task's token and answer counts and hashes, the cache
// settings, the scheme's canonical spec. Paths, threads and --json are not part of it.
std::string passkey_config_text(const ModelConfig& config, const PasskeyTask& task, const PasskeyOptions& options,
                                const std::string& spec);
// Every check first (options, model, task file, schemes, causal rules), then every prompt
// through every scheme; writes the results file (and JSON) and returns the summary.
PasskeyResult run_passkey(const PasskeyOptions& options);
std::string format_passkey_table(const PasskeyResult& result);

}  // namespace dgq::sim
