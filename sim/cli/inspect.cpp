// `dgq inspect FILE`: what kind of dgq file it is (by its root `format`), then a trace's metadata
// and per-layer shapes, a compressed file's segments and bytes per layer, tensor and head, a
// results file's runs, an eval or passkey results file's caches, a token, passkey task or model
// file's model and sizes; for every file, the dgq version and config hash it records
// (docs/results-format.md, "Provenance"), and for results files each run's.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/eval/eval_run_listing.hpp"
#include "dgq/sim/eval/passkey.hpp"
#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/files/trace.hpp"
#include "dgq/sim/model/model.hpp"
#include "dgq/sim/model/tokens.hpp"

namespace dgq::cli {

namespace {

// Files written before dgq recorded its version say so rather than print nothing.
void print_provenance(const sim::FileProvenance& p) {
  std::printf("dgq version   %s\n", p.version.value_or("not recorded").c_str());
  std::printf("config hash   %s\n", p.config_hash.value_or("not recorded").c_str());
}

void print_meta(const sim::TraceMeta& m) {
  std::printf("model         %s\n", m.model.c_str());
  std::printf("source        %s%s\n", m.source.c_str(),
              m.seed ? (" (seed " + std::to_string(*m.seed) + ")").c_str() : "");
  std::printf("prompt kind   %s\n", m.prompt_kind.c_str());
  std::printf("shape         %d layers, %d q heads, %d KV heads, head_dim %d, rope_applied %d\n", m.num_layers,
              m.num_q_heads, m.num_kv_heads, m.head_dim, m.rope_applied ? 1 : 0);
  if (!m.layer_ids.empty()) {
    std::string ids;
    for (const int id : m.layer_ids) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    std::printf("layer ids     %s (the recorded model's layer index of each stored layer)\n", ids.c_str());
  }
  std::printf("tokens        %lld (K/V %s), %zu probes\n", static_cast<long long>(m.tokens),
              std::string(dtype_name(m.kv_dtype)).c_str(), m.q_pos.size());
  if (!m.token_ids.empty()) std::printf("token ids     present\n");
  if (!m.noise_mask.empty())
    std::printf("noise tokens  %lld of %lld\n",
                static_cast<long long>(std::count(m.noise_mask.begin(), m.noise_mask.end(), 1)),
                static_cast<long long>(m.tokens));
  if (!m.text.empty()) std::printf("text          %s\n", m.text.substr(0, 400).c_str());
}

std::string shape3(const Tensor3& t) {
  return "[" + std::to_string(t.heads) + ", " + std::to_string(t.tokens) + ", " + std::to_string(t.channels) + "] " +
         std::string(dtype_name(t.dtype));
}

void inspect_trace(const std::string& path, const sim::FileProvenance& provenance) {
  sim::TraceReader reader(path);
  std::printf("%s: dgq trace v1\n", path.c_str());
  print_provenance(provenance);
  print_meta(reader.meta());
  for (int layer = 0; layer < reader.meta().num_layers; ++layer) {
    const auto data = reader.read_layer(layer);  // also checks every value is finite
    std::printf("layer %-3d k %s  v %s  q %s\n", layer, shape3(data.k).c_str(), shape3(data.v).c_str(),
                shape3(data.q).c_str());
  }
}

void inspect_compressed(const std::string& path, const sim::FileProvenance& provenance) {
  sim::CompressedReader reader(path);
  std::printf("%s: dgq compressed v1, scheme %s\n", path.c_str(), reader.scheme().c_str());
  print_provenance(provenance);
  print_meta(reader.meta());
  std::uint64_t total = 0;
  for (int layer = 0; layer < reader.meta().num_layers; ++layer)
    for (TensorRole role : {TensorRole::key, TensorRole::value})
      for (int head = 0; head < reader.meta().num_kv_heads; ++head) {
        const Compressed c = reader.read_unit(layer, role, head);
        std::string line = "layer " + std::to_string(layer) + " " + std::string(role_name(role)) + " head " +
                           std::to_string(head) + ": ";
        if (c.segment_edges().size() >= 2) {
          line += std::to_string(c.segment_edges().size() - 1) + " segments, lengths [";
          for (std::size_t s = 0; s + 1 < c.segment_edges().size(); ++s)
            line += (s ? ", " : "") + std::to_string(c.segment_edges()[s + 1] - c.segment_edges()[s]);
          line += "]";
        } else {
          line += "no segments";
        }
        for (const Part& part : c.parts) line += "  " + part.name + "=" + std::to_string(part.bytes.size());
        total += c.total_bytes();
        std::printf("%s\n", line.c_str());
      }
  std::printf("stored bytes  %llu\n", static_cast<unsigned long long>(total));
}

// A results file holds runs of possibly several builds (resumes, merges with
// --allow-mixed-versions): the root names the writer, each run its own version and config.
void inspect_results(const std::string& path, const sim::FileProvenance& provenance) {
  const sim::RunListing runs = sim::list_runs(path);
  std::printf("%s: dgq results, %zu complete run(s), %zu incomplete\n", path.c_str(), runs.complete.size(),
              runs.incomplete.size());
  std::printf("dgq version   %s (the last writer; each run records its own)\n",
              provenance.version.value_or("not recorded").c_str());
  std::printf("config hash   per run\n");
  for (std::size_t i = 0; i < runs.complete.size(); ++i) {
    const sim::Provenance& p = runs.provenance[i];
    std::printf("run %s: dgq version %s, config hash %s\n", runs.complete[i].c_str(),
                p.version == sim::kNotRecorded ? "not recorded" : p.version.c_str(),
                p.config_hash == sim::kNotRecorded ? "not recorded" : p.config_hash.c_str());
  }
}

// The three inputs of `dgq eval`, read by the readers eval uses (so inspect refuses what eval would).
void inspect_tokens(const std::string& path, const sim::FileProvenance& provenance) {
  const sim::TokenText t = sim::read_token_file(path);
  std::printf("%s: dgq token file (dgq eval --text), %zu tokens\n", path.c_str(), t.tokens.size());
  print_provenance(provenance);
  std::printf("model         %s\n", t.model.c_str());
  std::printf("tokenizer id  %s\n", t.tokenizer_id.empty() ? "not recorded" : t.tokenizer_id.c_str());
  std::printf("text kind     %s, noise rate %g\n", t.kind.c_str(), t.noise_rate);
}

void inspect_passkey_task(const std::string& path, const sim::FileProvenance& provenance) {
  const sim::PasskeyTask t = sim::read_passkey_file(path);
  std::printf("%s: dgq passkey task file (dgq eval --task passkey), %zu prompts\n", path.c_str(), t.size());
  print_provenance(provenance);
  std::printf("model         %s\n", t.model.c_str());
  std::printf("tokenizer id  %s\n", t.tokenizer_id.empty() ? "not recorded" : t.tokenizer_id.c_str());
  if (t.size() > 0) {
    const auto [shortest, longest] = std::minmax_element(t.length.begin(), t.length.end());
    std::printf("lengths       %lld to %lld tokens, seed %lld\n", static_cast<long long>(*shortest),
                static_cast<long long>(*longest), static_cast<long long>(t.seed));
  }
}

void inspect_model(const std::string& path, const sim::FileProvenance& provenance) {
  const sim::ModelConfig c = sim::read_model_config(path);
  std::printf("%s: dgq model file (dgq eval --model), %s\n", path.c_str(), c.architecture.c_str());
  print_provenance(provenance);
  std::printf("model         %s\n", c.name.c_str());
  std::printf("shape         %lld layers, hidden %lld, %lld q heads, %lld KV heads, head_dim %lld\n",
              static_cast<long long>(c.num_layers), static_cast<long long>(c.hidden),
              static_cast<long long>(c.num_q_heads), static_cast<long long>(c.num_kv_heads),
              static_cast<long long>(c.head_dim));
  std::printf("vocabulary    %lld tokens, context %lld\n", static_cast<long long>(c.vocab_size),
              static_cast<long long>(c.context_length));
}

// `dgq eval` and `dgq eval --task passkey` results: one run per cache spec.
void inspect_eval_results(const std::string& path, const sim::FileProvenance& provenance, const char* what) {
  const sim::EvalRunListing runs = sim::list_eval_runs(path);
  std::printf("%s: %s, %zu run(s)\n", path.c_str(), what, runs.names.size());
  print_provenance(provenance);
  std::printf("model         %s\n", runs.model.c_str());
  for (std::size_t i = 0; i < runs.names.size(); ++i)
    std::printf("run %s: %s\n", runs.names[i].c_str(), runs.specs[i].c_str());
}

void inspect_base_logits(const std::string& path, const sim::FileProvenance& provenance) {
  std::printf("%s: dgq base-logits file (dgq eval --base-logits)\n", path.c_str());
  print_provenance(provenance);
}

// Every kind of file dgq writes or reads, by its root `format` attribute. A file without one is
// taken for a trace (the oldest traces have none; the trace reader says what is missing).
void inspect_file(const std::string& path) {
  const sim::FileProvenance provenance = sim::read_file_provenance(path);
  const std::string& format = provenance.format;
  if (format.empty() || format == "dgq-trace") return inspect_trace(path, provenance);
  if (format == sim::kCompressedFormat) return inspect_compressed(path, provenance);
  if (format == sim::kResultsFormat) return inspect_results(path, provenance);
  if (format == "dgq-eval") return inspect_eval_results(path, provenance, "dgq eval results");
  if (format == "dgq-passkey-results") return inspect_eval_results(path, provenance, "dgq passkey results");
  if (format == "dgq-tokens") return inspect_tokens(path, provenance);
  if (format == "dgq-passkey") return inspect_passkey_task(path, provenance);
  if (format == "dgq-model") return inspect_model(path, provenance);
  if (format == "dgq-base-logits") return inspect_base_logits(path, provenance);
  throw InputError(path + ": format '" + format +
                   "' is no kind of dgq file (dgq inspect reads trace, compressed, results, eval, passkey results, "
                   "token, passkey task, model and base-logits files)");
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect",
                                 "Describe any dgq file: trace, compressed, results, eval or passkey results, token, "
                                 "passkey task, model or base-logits file (what it is, shapes, runs, dgq version)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "any dgq HDF5 file")->required();
  cmd->callback([path] { inspect_file(*path); });
}

}  // namespace dgq::cli
