#include "results/eval_results_file.hpp"

#include "dgq/sim/eval/eval_summary_attributes.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"

namespace dgq::sim {

namespace {

constexpr std::int64_t kEvalFormatVersion = 1;

void write_run_settings(hid_t f, const EvalOptions& o, const EvalPlan& plan) {
  const ModelConfig& c = plan.config();
  h5::write_string_attribute(f, "format", "dgq-eval");
  h5::write_int_attribute(f, "version", kEvalFormatVersion);
  h5::write_string_attribute(f, "model", c.name);
  h5::write_string_attribute(f, "architecture", c.architecture);
  h5::write_string_attribute(f, "text_kind", plan.text.kind);
  h5::write_double_attribute(f, "noise_rate", plan.text.noise_rate);
  h5::write_int_attribute(f, "ctx", o.ctx);
  h5::write_int_attribute(f, "chunks", plan.chunks);
  h5::write_int_attribute(f, "scored_per_chunk", plan.rows);
  h5::write_int_attribute(f, "add_bos", c.add_bos);
  h5::write_string_attribute(f, "base", o.base);
  h5::write_string_attribute(f, "query_rounding", o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off");
  h5::write_string_attribute(f, "cache", cache_mode_name(o.cache));
  h5::write_string_attribute(f, "keys", key_position_name(o.keys));
  h5::write_string_attribute(f, "raw_dtype", std::string(dtype_name(o.raw_dtype)));
  h5::write_int_attribute(f, "ubatch", o.ubatch);
  h5::write_string_attribute(f, "gemm", std::string(gemm_library_name(o.gemm_library)));
}

}  // namespace

void write_eval_results_file(const EvalOptions& o, const EvalPlan& plan, const EvalResult& result,
                             const std::vector<ChunkRun>& totals) {
  h5::PartialOutput out(o.output_path, RunsInTarget::replace);  // run_eval refused an existing file without --force
  const hid_t f = out.file();
  write_run_settings(f, o, plan);
  write_provenance_attributes(f, result.config_hash, result.dgq_version);
  h5::Handle group = h5::create_group(f, "runs", o.output_path);
  for (std::size_t i = 0; i < plan.runs(); ++i) {
    h5::Handle g = h5::create_group(group.get(), std::to_string(i), o.output_path);
    h5::write_string_attribute(g.get(), "spec", plan.specs[i]);
    h5::write_string_attribute(g.get(), "raw_dtype", result.schemes[i].raw_dtype);
    write_provenance_attributes(g.get(), plan.scheme_hashes[i], result.dgq_version);
    write_summary_attributes(g.get(), result.schemes[i].summary);
    ChunkRun all = totals[i];
    if (!o.save_logits) all.logits.clear();
    write_chunk_scores(g.get(), all, o.output_path + ": /runs/" + std::to_string(i), plan.vocab);
  }
  out.commit();
}

}  // namespace dgq::sim
