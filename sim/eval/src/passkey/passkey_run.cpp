// `dgq eval --task passkey`'s run (dgq/sim/eval/passkey.hpp): every check before any work, then
// per prompt and scheme one teacher-forced pass over [BOS] + prompt + answer[:-1], whose rows
// from the last prompt token on are the answer's logits, scored by score_answer().
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/passkey.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"
#include "dgq/sim/files/output/new_output.hpp"
#include "dgq/sim/files/output/text_output.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/model/decoder.hpp"
#include "passkey/passkey_identity.hpp"
#include "passkey/passkey_output.hpp"

namespace dgq::sim {
namespace {

void check_passkey_options(const PasskeyOptions& o) {
  if (o.output_path.empty()) throw ParameterError("eval: an output file (-o) is required");
  if (o.schemes.empty()) throw ParameterError("--scheme: give at least one scheme");
  if (o.ubatch < 0)
    throw ParameterError("--ubatch " + std::to_string(o.ubatch) + ": must be 0 (one pass) or at least 1");
  if (o.ubatch > 0 && o.cache != CacheMode::causal)
    throw ParameterError("--ubatch " + std::to_string(o.ubatch) + ": the micro-batched decoder needs --cache causal");
}

// Inputs read and checked and caches made, in the order of docs/eval.md's errors, so that a bad
// option, file or scheme fails before the first forward pass.
struct PasskeyPlan {
  explicit PasskeyPlan(const PasskeyOptions& o) {
    check_passkey_options(o);
    model = load_model(o.model_path);
    task = read_passkey_file(o.task_path);
    check_passkey_task(task, model.config, o.task_path);
    for (const auto& spec : o.schemes) {
      caches.push_back(
          std::make_unique<SchemeCache>(spec, o.query_rounding, o.cache, o.keys, o.raw_dtype));  // bad specs fail here
      caches.back()->config = &model.config;
      caches.back()->first_probe = model.config.context_length;  // no attention probes: not reported here
      caches.back()->check_causal_rule();  // a scheme with no causal form fails here, before any work
      hashes.push_back(config_hash(passkey_config_text(model.config, task, o, spec)));
    }
    run_hash = config_hash(passkey_run_config_text(model.config, task, o));
  }
  PasskeyPlan(const PasskeyPlan&) = delete;  // the caches point into model.config
  PasskeyPlan& operator=(const PasskeyPlan&) = delete;

  Model model;
  PasskeyTask task;
  std::vector<std::unique_ptr<SchemeCache>> caches;
  std::vector<std::string> hashes;
  std::string run_hash;
};

// What the model reads for prompt i: BOS when it wants one, the prompt, and every answer token
// but the last (the last is only predicted).
std::vector<std::int32_t> passkey_forward_tokens(const ModelConfig& c, std::span<const std::int32_t> prompt,
                                                 std::span<const std::int32_t> answer) {
  std::vector<std::int32_t> tokens;
  if (c.add_bos) tokens.push_back(static_cast<std::int32_t>(c.bos_token_id));
  tokens.insert(tokens.end(), prompt.begin(), prompt.end());
  tokens.insert(tokens.end(), answer.begin(), answer.end() - 1);
  return tokens;
}

struct PasskeyTime {
  double seconds = 0;
  std::int64_t tokens = 0;
};

// One prompt through one cache: its answer's score, and the cache's counters added to s.
void run_passkey_prompt(const PasskeyOptions& o, const PasskeyPlan& plan, SchemeCache& cache, std::size_t i,
                        PasskeySchemeResult& s, PasskeyTime& time) {
  const ModelConfig& c = plan.model.config;
  const std::span<const std::int32_t> prompt = plan.task.prompt(i), answer = plan.task.answer(i);
  const std::vector<std::int32_t> tokens = passkey_forward_tokens(c, prompt, answer);
  const auto first_row = static_cast<std::int64_t>(c.add_bos + prompt.size()) - 1;  // the last prompt token
  cache.reset_counters();
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<float> logits = o.ubatch > 0
                                        ? decode_logits(plan.model, tokens, cache, first_row, o.ubatch, o.arithmetic)
                                        : forward_logits(plan.model, tokens, cache, first_row, o.arithmetic);
  time.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  time.tokens += static_cast<std::int64_t>(tokens.size());
  const AnswerScore score = score_answer(logits, answer, c.vocab_size);
  s.exact.push_back(score.exact);
  s.logprob.push_back(score.logprob);
  s.first_wrong.push_back(score.first_wrong);
  s.predicted.insert(s.predicted.end(), score.predicted.begin(), score.predicted.end());
  s.stored_bytes += cache.stored_bytes();
  s.stored_k_bytes += cache.stored_bytes(TensorRole::key);
  s.stored_elements += cache.stored_elements();
  s.held_bytes_sum += cache.held_bytes_sum();
  s.held_elements_sum += cache.held_elements_sum();
}

// Accuracy and mean logprob over every prompt and per length, and the bits per element.
void summarize_scheme(const PasskeyTask& task, PasskeySchemeResult& s) {
  std::map<std::int64_t, PasskeyLengthSummary> by_length;
  for (std::size_t i = 0; i < task.size(); ++i) {
    PasskeyLengthSummary& l = by_length[task.length[i]];
    l.length = task.length[i];
    l.prompts += 1;
    l.accuracy += s.exact[i];
    l.logprob_mean += s.logprob[i];
    s.accuracy += s.exact[i];
    s.logprob_mean += s.logprob[i];
  }
  for (auto& [length, l] : by_length) {
    l.accuracy /= double(l.prompts);
    l.logprob_mean /= double(l.prompts);
    s.by_length.push_back(l);
  }
  s.accuracy /= double(task.size());
  s.logprob_mean /= double(task.size());
  s.bits_per_element = s.stored_elements == 0 ? 0 : 8.0 * double(s.stored_bytes) / double(s.stored_elements);
  s.bits_averaged = s.held_elements_sum == 0 ? 0 : 8.0 * double(s.held_bytes_sum) / double(s.held_elements_sum);
  // K and V hold the same number of elements.
  const double role_elements = double(s.stored_elements) / 2;
  s.bits_k = role_elements == 0 ? 0 : 8.0 * double(s.stored_k_bytes) / role_elements;
  s.bits_v = role_elements == 0 ? 0 : 8.0 * double(s.stored_bytes - s.stored_k_bytes) / role_elements;
}

}  // namespace

PasskeyResult run_passkey(const PasskeyOptions& o) {
  use_gemm_library(o.gemm_library);
  if (!o.output_path.empty()) require_new_output(o.output_path, o.force, "dgq eval");
  if (!o.json_path.empty()) check_text_output(o.json_path);
  const PasskeyPlan plan(o);
  const std::size_t n = plan.task.size();
  PasskeyResult result;
  result.model = plan.model.config.name;
  result.cache = o.cache;
  result.keys = o.keys;
  result.raw_dtype = o.raw_dtype;
  result.ubatch = o.ubatch;
  result.prompts = static_cast<std::int64_t>(n);
  result.config_hash = plan.run_hash;
  result.dgq_version = this_build(plan.run_hash).version;
  result.schemes.resize(o.schemes.size());
  Progress progress(o.progress, "eval passkey", static_cast<std::int64_t>(n * o.schemes.size()));
  PasskeyTime time;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < o.schemes.size(); ++k) {
      run_passkey_prompt(o, plan, *plan.caches[k], i, result.schemes[k], time);
      progress.finished("prompt " + std::to_string(i) + " (" + std::to_string(plan.task.length[i]) + " tokens) " +
                        o.schemes[k]);
    }
  for (std::size_t k = 0; k < o.schemes.size(); ++k) {
    result.schemes[k].spec = o.schemes[k];
    result.schemes[k].raw_dtype = raw_dtype_label(o.schemes[k], o.raw_dtype);
    result.schemes[k].config_hash = plan.hashes[k];
    summarize_scheme(plan.task, result.schemes[k]);
  }
  result.tokens_per_second = time.seconds > 0 ? double(time.tokens) / time.seconds : 0;
  write_passkey_results_file(o, plan.model.config, plan.task, result);
  if (!o.json_path.empty()) write_passkey_json(o, result);
  return result;
}

}  // namespace dgq::sim
