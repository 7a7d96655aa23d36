// `dgq eval`'s run: chunks of the text through the model once per cache scheme, scored against
// the base cache. Resumable: each finished chunk is committed as its own file in
// OUTPUT.partial.d/ (written as .partial and renamed, so a killed run leaves either a whole chunk
// or none); a rerun with the same settings skips those chunks. The results file appears, under
// its final name, only when every chunk is done (docs/eval.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dgq/errors.hpp"
#include "dgq/sim/build_info.hpp"
#include "dgq/sim/eval.hpp"
#include "dgq/sim/provenance.hpp"
#include "dgq/sim/text_output.hpp"
#include "hdf5/h5.hpp"
#include "hdf5/partial_output.hpp"
#include "model/base_logits_file.hpp"
#include "model/eval_identity.hpp"
#include "model/eval_summary_attributes.hpp"
#include "hdf5/numbers.hpp"
#include "provenance/provenance_attributes.hpp"

namespace dgq::sim {
namespace fs = std::filesystem;
namespace {

constexpr std::int64_t kEvalFormatVersion = 1;

struct ChunkRun {
  TokenScores scores;
  std::uint64_t bytes = 0, elements = 0;
  std::vector<double> kl_sums;  // attention KL per layer: sum over probes, and their count
  std::vector<std::int64_t> kl_counts;
  std::vector<float> logits;  // kept only with save_logits
};

void add_per_layer(ChunkRun& total, const ChunkRun& chunk) {
  total.kl_sums.resize(chunk.kl_sums.size(), 0.0);
  total.kl_counts.resize(chunk.kl_counts.size(), 0);
  for (std::size_t l = 0; l < chunk.kl_sums.size(); ++l) {
    total.kl_sums[l] += chunk.kl_sums[l];
    total.kl_counts[l] += chunk.kl_counts[l];
  }
}

// The versions a result is made of: this build's first, then every other build whose chunks or
// base logits were reused (only with allow_mixed_versions), each once.
class VersionLabel {
 public:
  VersionLabel() : versions_{build_info().version_string()} {}
  void add(const std::string& version) {
    if (std::find(versions_.begin(), versions_.end(), version) == versions_.end()) versions_.push_back(version);
  }
  std::string text() const {
    std::string joined;
    for (const auto& v : versions_) joined += (joined.empty() ? "" : "+") + v;
    return joined;
  }

 private:
  std::vector<std::string> versions_;
};

std::string chunk_path(const std::string& dir, std::int64_t c) {
  char name[32];
  std::snprintf(name, sizeof name, "chunk-%05lld.h5", static_cast<long long>(c));
  return dir + "/" + name;
}

void write_scores(hid_t group, const ChunkRun& run, const std::string& context, std::int64_t vocab) {
  h5::write_doubles(group, "nll", run.scores.nll, context);
  h5::write_doubles(group, "kld", run.scores.kld, context);
  h5::write_doubles(group, "p_target", run.scores.p_target, context);
  h5::write_vector(group, "same_top1", run.scores.same_top1, context);
  h5::write_int_attribute(group, "stored_bytes", static_cast<std::int64_t>(run.bytes));
  h5::write_int_attribute(group, "stored_elements", static_cast<std::int64_t>(run.elements));
  h5::write_doubles(group, "attn_kl_sum", run.kl_sums, context);
  std::vector<double> counts(run.kl_counts.begin(), run.kl_counts.end());
  h5::write_doubles(group, "attn_kl_count", counts, context);
  if (!run.logits.empty())
    h5::write_floats(group, "logits", run.logits, run.logits.size() / vocab, vocab, context);
}

ChunkRun read_scores(hid_t group, std::size_t rows, std::size_t layers, const std::string& context, bool with_logits,
                     std::int64_t vocab) {
  ChunkRun run;
  run.scores.nll = h5::read_doubles(group, "nll", rows, context + "/nll");
  run.scores.kld = h5::read_doubles(group, "kld", rows, context + "/kld");
  run.scores.p_target = h5::read_doubles(group, "p_target", rows, context + "/p_target");
  for (std::int64_t v : h5::read_int_vector(group, "same_top1", context + "/same_top1"))
    run.scores.same_top1.push_back(static_cast<std::uint8_t>(v));
  if (run.scores.same_top1.size() != rows) throw InputError(context + "/same_top1: wrong length");
  run.bytes = static_cast<std::uint64_t>(h5::read_int_attribute(group, "stored_bytes", context));
  run.elements = static_cast<std::uint64_t>(h5::read_int_attribute(group, "stored_elements", context));
  run.kl_sums = h5::read_doubles(group, "attn_kl_sum", layers, context + "/attn_kl_sum");
  for (double v : h5::read_doubles(group, "attn_kl_count", layers, context + "/attn_kl_count"))
    run.kl_counts.push_back(static_cast<std::int64_t>(v));
  if (with_logits) run.logits = h5::read_float_rows(group, "logits", 0, rows, vocab, context + "/logits");
  return run;
}

class ProgressBar {
 public:
  ProgressBar(bool enabled, std::int64_t total) : enabled_(enabled), total_(total) {}
  void show(std::int64_t done, const std::string& what) const {
    if (!enabled_) return;
    const int width = 30;
    const auto filled = static_cast<int>(width * done / std::max<std::int64_t>(1, total_));
    std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done << "/"
              << total_ << " " << what << "          " << std::flush;
    if (done == total_) std::cerr << "\n";
  }

 private:
  bool enabled_;
  std::int64_t total_;
};

// The --json summary, through nlohmann-json: strings escaped, a non-finite number written as
// null, the keys in this order (ordered_json).
void write_json(const std::string& path, const EvalResult& r, const EvalOptions& o, const TokenText& text) {
  using Json = nlohmann::ordered_json;
  Json schemes = Json::array();
  for (const EvalSchemeResult& scheme : r.schemes) {
    const EvalSummary& s = scheme.summary;
    schemes.push_back(Json{{"spec", scheme.spec},
                           {"config_hash", scheme.config_hash},
                           {"tokens", s.tokens},
                           {"bits_per_element", s.bits_per_element},
                           {"ppl", s.ppl},
                           {"ppl_stderr", s.ppl_stderr},
                           {"dppl", s.dppl},
                           {"dppl_stderr", s.dppl_stderr},
                           {"kld_mean", s.kld_mean},
                           {"kld_stderr", s.kld_stderr},
                           {"kld_median", s.kld_median},
                           {"kld_p90", s.kld_p90},
                           {"kld_p99", s.kld_p99},
                           {"kld_max", s.kld_max},
                           {"rms_dp", s.rms_dp},
                           {"same_top1", s.same_top1},
                           {"attn_kl_mean", s.attn_kl_mean}});
  }
  const Json doc{{"format", "dgq-eval-summary"},
                 {"version", 1},
                 {"dgq_version", r.dgq_version},
                 {"config_hash", r.config_hash},
                 {"model", r.model},
                 {"text", o.text_path},
                 {"kind", text.kind},
                 {"noise_rate", text.noise_rate},
                 {"ctx", o.ctx},
                 {"chunks", r.chunks},
                 {"scored_per_chunk", r.scored_per_chunk},
                 {"base", o.base},
                 {"query_rounding", o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off"},
                 {"tokens_per_second", r.tokens_per_second},
                 {"schemes", std::move(schemes)}};
  write_text_file(path, doc.dump(2) + "\n");
}


}  // namespace

std::int64_t first_scored_row(std::int64_t ctx) { return ctx / 2; }

EvalResult run_eval(const EvalOptions& o) {
  if (o.output_path.empty()) throw ParameterError("eval: an output file (-o) is required");
  const Model model = load_model(o.model_path);
  const ModelConfig& c = model.config;
  const TokenText text = read_token_file(o.text_path);
  if (text.model != c.name)
    throw InputError(o.text_path + ": tokens were made with the tokenizer of '" + text.model + "', the model is '" +
                     c.name + "'");
  for (std::size_t i = 0; i < text.tokens.size(); ++i)
    if (text.tokens[i] >= c.vocab_size)
      throw InputError(o.text_path + ": dataset /tokens: index " + std::to_string(i) + " holds " +
                       std::to_string(text.tokens[i]) + ", outside the vocabulary of " + std::to_string(c.vocab_size));
  if (o.ctx < 4 || o.ctx > c.context_length)
    throw ParameterError("--ctx " + std::to_string(o.ctx) + ": must be in [4, " + std::to_string(c.context_length) +
                         "] (the model's context length)");
  std::int64_t chunks = static_cast<std::int64_t>(text.tokens.size()) / o.ctx;
  if (chunks == 0)
    throw InputError(o.text_path + ": " + std::to_string(text.tokens.size()) + " tokens, fewer than one chunk of --ctx " +
                     std::to_string(o.ctx));
  if (o.max_chunks > 0) chunks = std::min(chunks, o.max_chunks);
  if (o.schemes.empty()) throw ParameterError("--schemes: give at least one scheme");

  std::vector<std::string> specs{o.base};
  specs.insert(specs.end(), o.schemes.begin(), o.schemes.end());
  std::vector<std::unique_ptr<SchemeCache>> caches;
  for (const auto& spec : specs) {
    caches.push_back(std::make_unique<SchemeCache>(spec, o.query_rounding));  // bad specs fail here, before any work
  }
  const std::int64_t first = first_scored_row(o.ctx), rows = o.ctx - 1 - first, vocab = c.vocab_size;
  for (auto& cache : caches) {
    cache->config = &c;
    cache->first_probe = first;
    cache->reset_counters();
  }
  const std::string identity = eval_run_identity(c, text, o, chunks, true);
  const std::string base_identity = eval_run_identity(c, text, o, chunks, false);
  // Provenance (docs/results-format.md): the whole run's hash for its chunk files and results
  // root, one per scheme for its run, the base's for the base logits file.
  const Provenance this_run = this_build(config_hash(identity));
  std::vector<std::string> scheme_hashes;
  for (const auto& spec : specs) scheme_hashes.push_back(config_hash(eval_config_text(c, text, o, chunks, spec)));
  VersionLabel versions;

  // Base logits from an earlier run (llama.cpp's --kl-divergence-base), when the file exists.
  std::optional<BaseLogitsReader> base_file;
  BaseChunkCounters base;  // the base cache's counters: [chunk] / [chunk][layer]
  const bool reuse_base = !o.base_logits_path.empty() && fs::exists(o.base_logits_path);
  if (reuse_base) {
    base_file.emplace(o.base_logits_path, base_identity, static_cast<std::size_t>(chunks),
                      static_cast<std::size_t>(c.num_layers));
    const Provenance recorded = read_provenance_attributes(base_file->file(), o.base_logits_path);
    require_provenance(o.base_logits_path, "the base run", recorded, this_build(scheme_hashes[0]),
                       o.allow_mixed_versions);
    versions.add(recorded.version);
    base = base_file->counters();
  }
  const bool keep_base_logits = o.save_logits || (!o.base_logits_path.empty() && !reuse_base);

  const std::string dir = o.output_path + ".partial.d";
  fs::create_directories(dir);
  ProgressBar bar(o.progress, chunks * static_cast<std::int64_t>(specs.size()));
  std::vector<ChunkRun> totals(specs.size());
  double forward_seconds = 0;
  std::int64_t forward_tokens = 0;
  for (std::int64_t ch = 0; ch < chunks; ++ch) {
    const std::string path = chunk_path(dir, ch);
    std::vector<ChunkRun> runs(specs.size());
    if (fs::exists(path)) {  // finished by an earlier, interrupted run
      h5::Handle f = h5::open_file_readonly(path);
      const std::string stored = h5::read_string_attribute(f.get(), "run_identity", path);
      if (stored != identity)
        throw InputError(path + ": a chunk of another run (" + stored + "); delete " + dir + " to start over");
      const Provenance recorded = read_provenance_attributes(f.get(), path);
      require_provenance(path, "chunk " + std::to_string(ch), recorded, this_run, o.allow_mixed_versions);
      versions.add(recorded.version);
      for (std::size_t i = 0; i < specs.size(); ++i) {
        h5::Handle g = h5::open_group(f.get(), "runs/" + std::to_string(i), path + ": /runs/" + std::to_string(i));
        runs[i] = read_scores(g.get(), rows, static_cast<std::size_t>(c.num_layers), path + ": /runs/" + std::to_string(i), i == 0 ? keep_base_logits : o.save_logits, vocab);
      }
      bar.show((ch + 1) * static_cast<std::int64_t>(specs.size()), "chunk " + std::to_string(ch) + " (resumed)");
    } else {
      std::vector<std::int32_t> tokens(text.tokens.begin() + ch * o.ctx, text.tokens.begin() + (ch + 1) * o.ctx);
      if (c.add_bos) tokens[0] = static_cast<std::int32_t>(c.bos_token_id);
      const std::span<const std::int32_t> targets(text.tokens.data() + ch * o.ctx + first + 1, rows);
      std::vector<float> base_logits;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        std::vector<float> logits;
        caches[i]->reset_counters();
        if (i == 0 && reuse_base) {
          logits = base_file->logits(ch, rows, vocab);
          const auto at = static_cast<std::size_t>(ch), layers = static_cast<std::size_t>(c.num_layers);
          runs[i].bytes = static_cast<std::uint64_t>(base.stored_bytes[at]);
          runs[i].elements = static_cast<std::uint64_t>(base.stored_elements[at]);
          runs[i].kl_sums.assign(base.attn_kl_sums.begin() + at * layers, base.attn_kl_sums.begin() + (at + 1) * layers);
          for (std::size_t l = 0; l < layers; ++l)
            runs[i].kl_counts.push_back(static_cast<std::int64_t>(base.attn_kl_counts[at * layers + l]));
        } else {
          const auto t0 = std::chrono::steady_clock::now();
          logits = forward_logits(model, tokens, *caches[i], first);
          forward_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          forward_tokens += o.ctx;
          logits.resize(static_cast<std::size_t>(rows * vocab));  // the last row predicts past the chunk
          runs[i].bytes = caches[i]->stored_bytes();
          runs[i].elements = caches[i]->stored_elements();
          runs[i].kl_sums = caches[i]->attention_kl_sums();
          runs[i].kl_counts = caches[i]->attention_kl_counts();
        }
        if (i == 0) base_logits = logits;
        runs[i].scores = score_tokens(base_logits, logits, targets, vocab);
        if (o.save_logits || (i == 0 && keep_base_logits)) runs[i].logits = std::move(logits);
        bar.show(ch * static_cast<std::int64_t>(specs.size()) + static_cast<std::int64_t>(i) + 1,
                 "chunk " + std::to_string(ch) + " " + specs[i]);
      }
      h5::PartialOutput out(path);
      h5::write_string_attribute(out.file(), "run_identity", identity);
      write_provenance_attributes(out.file(), this_run.config_hash);
      h5::Handle group = h5::create_group(out.file(), "runs", path);
      for (std::size_t i = 0; i < specs.size(); ++i) {
        h5::Handle g = h5::create_group(group.get(), std::to_string(i), path);
        write_scores(g.get(), runs[i], path + ": /runs/" + std::to_string(i), vocab);
      }
      out.commit();
    }
    base.stored_bytes.resize(static_cast<std::size_t>(chunks));
    base.stored_elements.resize(static_cast<std::size_t>(chunks));
    base.stored_bytes[static_cast<std::size_t>(ch)] = double(runs[0].bytes);
    base.stored_elements[static_cast<std::size_t>(ch)] = double(runs[0].elements);
    if (!reuse_base) {
      base.attn_kl_sums.insert(base.attn_kl_sums.end(), runs[0].kl_sums.begin(), runs[0].kl_sums.end());
      base.attn_kl_counts.insert(base.attn_kl_counts.end(), runs[0].kl_counts.begin(), runs[0].kl_counts.end());
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      totals[i].scores.append(runs[i].scores);
      totals[i].bytes += runs[i].bytes;
      totals[i].elements += runs[i].elements;
      add_per_layer(totals[i], runs[i]);
      totals[i].logits.insert(totals[i].logits.end(), runs[i].logits.begin(), runs[i].logits.end());
    }
    if (o.after_chunk) o.after_chunk(ch);
  }

  EvalResult result;
  result.model = c.name;
  result.text_kind = text.kind;
  result.noise_rate = text.noise_rate;
  result.chunks = chunks;
  result.scored_per_chunk = rows;
  result.tokens_per_second = forward_seconds > 0 ? double(forward_tokens) / forward_seconds : 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EvalSummary s = summarize(totals[i].scores, totals[0].scores, totals[i].bytes, totals[i].elements);
    double sum = 0, count = 0;
    for (std::size_t l = 0; l < totals[i].kl_sums.size(); ++l) {
      sum += totals[i].kl_sums[l];
      count += double(totals[i].kl_counts[l]);
      s.attn_kl_per_layer.push_back(totals[i].kl_counts[l] > 0 ? totals[i].kl_sums[l] / double(totals[i].kl_counts[l])
                                                                : std::nan(""));
    }
    s.attn_kl_mean = count > 0 ? sum / count : std::nan("");
    result.schemes.push_back({specs[i], s, scheme_hashes[i]});
  }
  result.dgq_version = versions.text();
  result.config_hash = this_run.config_hash;

  if (!o.base_logits_path.empty() && !reuse_base)
    write_base_logits_file(o.base_logits_path, o.base, base_identity, scheme_hashes[0], base, totals[0].logits, rows,
                           vocab);
  {
    h5::PartialOutput out(o.output_path);
    const hid_t f = out.file();
    h5::write_string_attribute(f, "format", "dgq-eval");
    h5::write_int_attribute(f, "version", kEvalFormatVersion);
    h5::write_string_attribute(f, "model", c.name);
    h5::write_string_attribute(f, "architecture", c.architecture);
    h5::write_string_attribute(f, "text_kind", text.kind);
    h5::write_double_attribute(f, "noise_rate", text.noise_rate);
    h5::write_int_attribute(f, "ctx", o.ctx);
    h5::write_int_attribute(f, "chunks", chunks);
    h5::write_int_attribute(f, "scored_per_chunk", rows);
    h5::write_int_attribute(f, "add_bos", c.add_bos);
    h5::write_string_attribute(f, "base", o.base);
    h5::write_string_attribute(f, "query_rounding", o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off");
    write_provenance_attributes(f, result.config_hash, result.dgq_version);
    h5::Handle group = h5::create_group(f, "runs", o.output_path);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      h5::Handle g = h5::create_group(group.get(), std::to_string(i), o.output_path);
      h5::write_string_attribute(g.get(), "spec", specs[i]);
      write_provenance_attributes(g.get(), scheme_hashes[i], result.dgq_version);
      write_summary_attributes(g.get(), result.schemes[i].summary);
      ChunkRun all = totals[i];
      if (!o.save_logits) all.logits.clear();
      write_scores(g.get(), all, o.output_path + ": /runs/" + std::to_string(i), vocab);
    }
    out.commit();
  }
  if (!o.json_path.empty()) write_json(o.json_path, result, o, text);
  fs::remove_all(dir);
  return result;
}

std::string format_eval_table(const EvalResult& r) {
  std::ostringstream s;
  s << r.model << ": " << r.chunks << " chunks x " << r.scored_per_chunk << " scored tokens\n";
  s << std::left << std::setw(34) << "scheme" << std::right << std::setw(7) << "bits" << std::setw(18) << "PPL"
    << std::setw(20) << "dPPL" << std::setw(22) << "KLD mean" << std::setw(11) << "KLD p99" << std::setw(11)
    << "KLD max" << std::setw(9) << "RMS dp" << std::setw(8) << "top1%" << std::setw(12) << "attn KL" << "\n";
  for (const auto& scheme : r.schemes) {
    const EvalSummary& x = scheme.summary;
    char line[320];
    std::snprintf(line, sizeof line, "%-34s %6.2f %8.4f+-%-7.4f %9.5f+-%-8.5f %10.3e+-%-9.2e %10.3e %10.3e %8.4f %7.2f %11.3e\n",
                  scheme.spec.substr(0, 34).c_str(), x.bits_per_element, x.ppl, x.ppl_stderr, x.dppl,
                  x.dppl_stderr, x.kld_mean, x.kld_stderr, x.kld_p99, x.kld_max, x.rms_dp, 100.0 * x.same_top1,
                  x.attn_kl_mean);
    s << line;
  }
  s << "forward pass: " << std::fixed << std::setprecision(1) << r.tokens_per_second << " tokens/s\n";
  return s.str();
}

}  // namespace dgq::sim
