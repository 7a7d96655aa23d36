// `dgq inspect FILE`: a trace's metadata and per-layer shapes, or a compressed file's
// segments and bytes per layer, tensor and head; for every file, the dgq version and config
// hash it records (docs/results-format.md, "Provenance"), and for results files each run's.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "dgq/sim/compressed.hpp"
#include "dgq/sim/provenance.hpp"
#include "dgq/sim/results.hpp"
#include "dgq/sim/trace.hpp"

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

}  // namespace

void register_inspect(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "inspect", "Describe a trace, compressed, results, eval or base-logits file (shapes, segments, bytes, dgq version)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "trace, compressed, results, eval or base-logits file")->required();
  cmd->callback([path] {
    const sim::FileProvenance provenance = sim::read_file_provenance(*path);
    if (provenance.format == sim::kCompressedFormat) {
      inspect_compressed(*path, provenance);
    } else if (provenance.format == sim::kResultsFormat) {
      inspect_results(*path, provenance);
    } else if (provenance.format == "dgq-eval" || provenance.format == "dgq-base-logits") {
      std::printf("%s: %s\n", path->c_str(), provenance.format.c_str());
      print_provenance(provenance);
    } else {
      inspect_trace(*path, provenance);
    }
  });
}

}  // namespace dgq::cli
