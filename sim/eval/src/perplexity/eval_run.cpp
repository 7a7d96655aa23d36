// `dgq eval`'s run: chunks of the text through the model once per cache scheme, scored against
// the base cache. Resumable: each finished chunk is committed as its own file in
// OUTPUT.partial.d/ (eval_chunk_file.hpp); a rerun with the same settings skips those chunks.
// The results file appears, under its final name, only when every chunk is done (docs/eval.md).
//
// The steps, each below: plan (eval_plan.hpp: every check before any work), the base cache's
// source, then per chunk resume or run + commit, and at the end the results.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <span>

#include "dgq/sim/eval/eval.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"
#include "dgq/sim/files/output/new_output.hpp"
#include "dgq/sim/files/output/partial_file.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "dgq/sim/model/decoder.hpp"
#include "perplexity/eval_plan.hpp"
#include "perplexity/version_label.hpp"
#include "results/base_logits_file.hpp"
#include "results/eval_chunk_file.hpp"
#include "results/eval_json.hpp"
#include "results/eval_results_file.hpp"

namespace dgq::sim {
namespace fs = std::filesystem;
namespace {

// The base cache's logits and counters: from an earlier run's base logits file
// (llama.cpp's --kl-divergence-base) when it exists, else computed here like every scheme's.
struct BaseSource {
  std::optional<BaseLogitsReader> file;
  BaseChunkCounters counters;  // [chunk] / [chunk][layer]; filled as chunks finish when computed
  bool reused = false;
  bool keep_logits = false;  // the base's logits are needed: --save-logits, or a base file to write
};

BaseSource open_base_source(const EvalOptions& o, const EvalPlan& plan, VersionLabel& versions) {
  BaseSource base;
  base.reused = !o.base_logits_path.empty() && fs::exists(o.base_logits_path);
  if (base.reused) {
    base.file.emplace(o.base_logits_path, plan.base_identity, static_cast<std::size_t>(plan.chunks),
                      static_cast<std::size_t>(plan.config().num_layers));
    const Provenance recorded = read_provenance_attributes(base.file->file(), o.base_logits_path);
    require_provenance(o.base_logits_path, "the base run", recorded, this_build(plan.scheme_hashes[0]),
                       o.allow_mixed_versions);
    versions.add(recorded.version);
    base.counters = base.file->counters();
  }
  base.keep_logits = o.save_logits || (!o.base_logits_path.empty() && !base.reused);
  return base;
}

// Forward-pass throughput over the chunks computed in this call (resumed ones excluded).
struct ForwardTime {
  double seconds = 0;
  std::int64_t tokens = 0;
  double tokens_per_second() const { return seconds > 0 ? double(tokens) / seconds : 0; }
};

// The base run of one chunk read back from the base logits file: its logits and counters.
std::vector<float> reused_base_run(const BaseSource& base, const EvalPlan& plan, std::int64_t chunk, ChunkRun& run) {
  const auto at = static_cast<std::size_t>(chunk), layers = static_cast<std::size_t>(plan.config().num_layers);
  const BaseChunkCounters& b = base.counters;
  run.bytes = static_cast<std::uint64_t>(b.stored_bytes[at]);
  run.elements = static_cast<std::uint64_t>(b.stored_elements[at]);
  run.held_bytes_sum = static_cast<std::uint64_t>(b.held_bytes_sums[at]);
  run.held_elements_sum = static_cast<std::uint64_t>(b.held_elements_sums[at]);
  run.k_bytes_recorded = !b.stored_k_bytes.empty();
  if (run.k_bytes_recorded) run.k_bytes = static_cast<std::uint64_t>(b.stored_k_bytes[at]);
  run.kl_sums.assign(b.attn_kl_sums.begin() + at * layers, b.attn_kl_sums.begin() + (at + 1) * layers);
  for (std::size_t l = 0; l < layers; ++l)
    run.kl_counts.push_back(static_cast<std::int64_t>(b.attn_kl_counts[at * layers + l]));
  return base.file->logits(chunk, plan.rows, plan.vocab);
}

// A cache's counters after its pass over a chunk.
void record_counters(const SchemeCache& cache, ChunkRun& run) {
  run.bytes = cache.stored_bytes();
  run.elements = cache.stored_elements();
  run.held_bytes_sum = cache.held_bytes_sum();
  run.held_elements_sum = cache.held_elements_sum();
  run.k_bytes = cache.stored_bytes(TensorRole::key);
  run.kl_sums = cache.attention_kl_sums();
  run.kl_counts = cache.attention_kl_counts();
}

// One cache's forward pass over a chunk: its scored rows' logits, and its counters into run.
// With --ubatch N every cache, the base included, runs the literal decoder, so that the KLD
// measures the caches and not two ways of batching the same arithmetic.
std::vector<float> forward_run(const EvalOptions& o, const EvalPlan& plan, SchemeCache& cache,
                               const std::vector<std::int32_t>& tokens, ChunkRun& run, ForwardTime& time) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> logits = o.ubatch > 0
                                  ? decode_logits(plan.model, tokens, cache, plan.first, o.ubatch, o.arithmetic)
                                  : forward_logits(plan.model, tokens, cache, plan.first, o.arithmetic);
  time.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  time.tokens += static_cast<std::int64_t>(tokens.size());
  logits.resize(static_cast<std::size_t>(plan.rows * plan.vocab));  // the last row predicts past the chunk
  record_counters(cache, run);
  return logits;
}

// The same pass scored as it goes: the hidden rows become logits kLogitRowBlock rows at a time
// (the same blocks as forward_logits, so the same bits), each block scored against the base and
// dropped. A scheme's logits are never all in memory: at n_ctx 16K, Gemma 3's would be 8.6 GB.
TokenScores forward_scored(const EvalOptions& o, const EvalPlan& plan, SchemeCache& cache,
                           const std::vector<std::int32_t>& tokens, std::span<const float> base_logits,
                           std::span<const std::int32_t> targets, ChunkRun& run, ForwardTime& time) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<float> hidden = forward_hidden(plan.model, tokens, cache, plan.first, o.arithmetic);
  time.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  time.tokens += static_cast<std::int64_t>(tokens.size());
  record_counters(cache, run);
  const std::int64_t width = plan.config().hidden, vocab = plan.vocab;
  TokenScores scores;
  std::vector<float> block(static_cast<std::size_t>(kLogitRowBlock * vocab));
  // Blocks over every hidden row, as forward_logits cuts them (the last row, which predicts past
  // the chunk, shares the last block), so that each block has the base's row count.
  const auto hidden_rows = static_cast<std::int64_t>(hidden.size()) / width;
  for (std::int64_t r0 = 0; r0 < plan.rows; r0 += kLogitRowBlock) {
    const std::int64_t m = std::min(kLogitRowBlock, plan.rows - r0);
    row_logits(plan.model, hidden.data() + r0 * width, std::min(kLogitRowBlock, hidden_rows - r0), o.arithmetic,
               block.data());
    const auto cells = static_cast<std::size_t>(m * vocab);
    scores.append(score_tokens(base_logits.subspan(static_cast<std::size_t>(r0 * vocab), cells),
                               std::span<const float>(block.data(), cells),
                               targets.subspan(static_cast<std::size_t>(r0), static_cast<std::size_t>(m)), vocab));
  }
  return scores;
}

// Runs one chunk through every cache, the base first (every scheme is scored against it).
std::vector<ChunkRun> run_chunk(const EvalOptions& o, const EvalPlan& plan, const BaseSource& base, std::int64_t ch,
                                ForwardTime& time, Progress& progress) {
  const ModelConfig& c = plan.config();
  const auto& all = plan.text.tokens;
  std::vector<std::int32_t> tokens(all.begin() + ch * o.ctx, all.begin() + (ch + 1) * o.ctx);
  if (c.add_bos) tokens[0] = static_cast<std::int32_t>(c.bos_token_id);
  const std::span<const std::int32_t> targets(all.data() + ch * o.ctx + plan.first + 1, plan.rows);
  std::vector<ChunkRun> runs(plan.runs());
  std::vector<float> base_logits;
  for (std::size_t i = 0; i < plan.runs(); ++i) {
    plan.caches[i]->reset_counters();
    if (i > 0 && o.ubatch == 0 && !o.save_logits) {
      runs[i].scores = forward_scored(o, plan, *plan.caches[i], tokens, base_logits, targets, runs[i], time);
    } else {
      std::vector<float> logits = i == 0 && base.reused ? reused_base_run(base, plan, ch, runs[i])
                                                        : forward_run(o, plan, *plan.caches[i], tokens, runs[i], time);
      if (i == 0) {  // kept for the schemes' scores: moved, not copied (8.6 GB at Gemma 3's 16K)
        base_logits = std::move(logits);
        runs[0].scores = score_tokens(base_logits, base_logits, targets, plan.vocab);
        if (o.save_logits || base.keep_logits) runs[0].logits = base_logits;
        const std::string what = "chunk " + std::to_string(ch) + " " + plan.specs[0];
        if (base.reused) {
          progress.already_done(what + " (base logits reused)");
        } else {
          progress.finished(what);
        }
        continue;
      }
      runs[i].scores = score_tokens(base_logits, logits, targets, plan.vocab);
      if (o.save_logits) runs[i].logits = std::move(logits);
    }
    progress.finished("chunk " + std::to_string(ch) + " " + plan.specs[i]);
  }
  return runs;
}

// The base run's counters of a finished chunk, for the base logits file this run may write.
void record_base_counters(BaseSource& base, const EvalPlan& plan, std::int64_t ch, const ChunkRun& run) {
  BaseChunkCounters& b = base.counters;
  b.stored_bytes.resize(static_cast<std::size_t>(plan.chunks));
  b.stored_elements.resize(static_cast<std::size_t>(plan.chunks));
  b.held_bytes_sums.resize(static_cast<std::size_t>(plan.chunks));
  b.held_elements_sums.resize(static_cast<std::size_t>(plan.chunks));
  b.stored_k_bytes.resize(static_cast<std::size_t>(plan.chunks));
  b.held_bytes_sums[static_cast<std::size_t>(ch)] = double(run.held_bytes_sum);
  b.held_elements_sums[static_cast<std::size_t>(ch)] = double(run.held_elements_sum);
  b.stored_bytes[static_cast<std::size_t>(ch)] = double(run.bytes);
  b.stored_elements[static_cast<std::size_t>(ch)] = double(run.elements);
  b.stored_k_bytes[static_cast<std::size_t>(ch)] = double(run.k_bytes);
  if (!base.reused) {
    b.attn_kl_sums.insert(b.attn_kl_sums.end(), run.kl_sums.begin(), run.kl_sums.end());
    b.attn_kl_counts.insert(b.attn_kl_counts.end(), run.kl_counts.begin(), run.kl_counts.end());
  }
}

// Statistics of every run over all chunks, each against the base run (totals[0]).
EvalResult summarize_runs(const EvalPlan& plan, const std::vector<ChunkRun>& totals) {
  EvalResult result;
  result.model = plan.config().name;
  result.cache = plan.cache_mode;
  result.keys = plan.keys;
  result.raw_dtype = plan.raw_dtype;
  result.text_kind = plan.text.kind;
  result.noise_rate = plan.text.noise_rate;
  result.chunks = plan.chunks;
  result.scored_per_chunk = plan.rows;
  for (std::size_t i = 0; i < plan.runs(); ++i) {
    const ChunkRun& t = totals[i];
    EvalSummary s = summarize(t.scores, totals[0].scores,
                              {t.bytes, t.elements, t.held_bytes_sum, t.held_elements_sum,
                               t.k_bytes_recorded ? static_cast<std::int64_t>(t.k_bytes) : -1});
    double sum = 0, count = 0;
    for (std::size_t l = 0; l < t.kl_sums.size(); ++l) {
      sum += t.kl_sums[l];
      count += double(t.kl_counts[l]);
      s.attn_kl_per_layer.push_back(t.kl_counts[l] > 0 ? t.kl_sums[l] / double(t.kl_counts[l]) : std::nan(""));
    }
    s.attn_kl_mean = count > 0 ? sum / count : std::nan("");
    result.schemes.push_back({plan.specs[i], s, plan.scheme_hashes[i], raw_dtype_label(plan.specs[i], plan.raw_dtype)});
  }
  return result;
}

}  // namespace

EvalResult run_eval(const EvalOptions& o) {
  use_gemm_library(o.gemm_library);
  require_new_output(o.output_path, o.force, "dgq eval");
  if (!o.json_path.empty()) check_text_output(o.json_path);
  const EvalPlan plan(o);
  VersionLabel versions;
  BaseSource base = open_base_source(o, plan, versions);

  ChunkFileLayout layout{.dir = stage_output(o.output_path, RunsInTarget::replace).target + ".partial.d",
                         .identity = plan.identity,
                         .this_run = plan.this_run,
                         .allow_mixed_versions = o.allow_mixed_versions,
                         .rows = static_cast<std::size_t>(plan.rows),
                         .layers = static_cast<std::size_t>(plan.config().num_layers),
                         .vocab = plan.vocab,
                         .with_logits = std::vector<bool>(plan.runs(), o.save_logits)};
  layout.with_logits[0] = base.keep_logits;
  fs::create_directories(layout.dir);
  const auto runs_per_chunk = static_cast<std::int64_t>(plan.runs());
  Progress progress(o.progress, "eval", plan.chunks * runs_per_chunk);
  std::vector<ChunkRun> totals(plan.runs());
  ForwardTime time;
  for (std::int64_t ch = 0; ch < plan.chunks; ++ch) {
    std::vector<ChunkRun> runs;
    if (fs::exists(eval_chunk_path(layout.dir, ch))) {  // finished by an earlier, interrupted run
      std::string version;
      runs = read_chunk_file(layout, ch, version);
      versions.add(version);
      for (std::size_t i = 0; i < plan.runs(); ++i)
        progress.already_done("chunk " + std::to_string(ch) + " " + plan.specs[i] + " (resumed)");
    } else {
      runs = run_chunk(o, plan, base, ch, time, progress);
      write_chunk_file(layout, ch, runs);
    }
    record_base_counters(base, plan, ch, runs[0]);
    for (std::size_t i = 0; i < plan.runs(); ++i) add_chunk(totals[i], runs[i]);
    if (o.after_chunk) o.after_chunk(ch);
  }

  EvalResult result = summarize_runs(plan, totals);
  result.tokens_per_second = time.tokens_per_second();
  result.dgq_version = versions.text();
  result.config_hash = plan.this_run.config_hash;
  if (!o.base_logits_path.empty() && !base.reused)
    write_base_logits_file(o.base_logits_path, o.base, plan.base_identity, plan.scheme_hashes[0], base.counters,
                           totals[0].logits, plan.rows, plan.vocab);
  write_eval_results_file(o, plan, result, totals);
  if (!o.json_path.empty()) write_eval_json(o.json_path, result, o, plan.text);
  fs::remove_all(layout.dir);
  return result;
}

}  // namespace dgq::sim
