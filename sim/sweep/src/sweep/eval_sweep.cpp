// Eval sweeps: each input (model x text x ctx) with pending runs is one run_eval call whose
// output goes to OUTPUT.cache/eval/<input>.h5 (resumable chunk by chunk there, as `dgq eval`);
// its per-scheme summaries then become complete run groups of OUTPUT, and the scratch file is
// removed. The base run is computed once per input and shard; a scheme equal to the base is
// taken from it rather than run twice.
#include <omp.h>

#include <filesystem>
#include <map>

#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/eval/eval_summary_attributes.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/output/progress.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "sweep/eval_sweep.hpp"

namespace dgq::sim {

namespace {

namespace fs = std::filesystem;

void write_eval_run(hid_t file, const std::string& name, const SweepEvalInput& in, const SweepEval& eval,
                    const EvalResult& result, const EvalSchemeResult& scheme, const std::string& context) {
  const std::string where = context + ": /runs/" + name;
  h5::Handle runs = h5::open_group(file, "runs", context + ": /runs");
  h5::Handle g = h5::create_group(runs.get(), name, where);
  h5::write_string_attribute(g.get(), "kind", "eval");
  h5::write_string_attribute(g.get(), "scheme", scheme.spec);
  h5::write_string_attribute(g.get(), "model", result.model);
  h5::write_string_attribute(g.get(), "model_path", in.model_as);
  h5::write_string_attribute(g.get(), "text", in.text_as);
  h5::write_int_attribute(g.get(), "ctx", in.ctx);
  h5::write_int_attribute(g.get(), "chunks", result.chunks);
  h5::write_int_attribute(g.get(), "scored_per_chunk", result.scored_per_chunk);
  h5::write_string_attribute(g.get(), "base", eval.base);
  h5::write_string_attribute(g.get(), "query_rounding", eval.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off");
  h5::write_string_attribute(g.get(), "cache", cache_mode_name(in.cache));
  h5::write_string_attribute(g.get(), "keys", key_position_name(in.keys));
  h5::write_string_attribute(g.get(), "raw_dtype", scheme.raw_dtype);
  h5::write_string_attribute(g.get(), "text_kind", result.text_kind);
  h5::write_double_attribute(g.get(), "noise_rate", result.noise_rate);
  write_provenance_attributes(g.get(), scheme.config_hash, result.dgq_version);
  write_summary_attributes(g.get(), scheme.summary);
  h5::write_int_attribute(g.get(), "complete", 1);  // last (docs/results-format.md)
}

}  // namespace

EvalOptions eval_options_for(const SweepEval& eval, const SweepEvalInput& in) {
  EvalOptions o;
  o.model_path = in.model_path;
  o.text_path = in.text_path;
  o.ctx = in.ctx;
  o.max_chunks = eval.chunks;
  o.base = eval.base;
  o.query_rounding = eval.query_rounding;
  o.cache = in.cache;
  o.keys = in.keys;
  o.raw_dtype = in.raw_dtype;
  return o;
}

SweepReport run_eval_sweep(const SweepConfig& config, const SweepOptions& options, const std::vector<SweepRun>& mine,
                           const RunListing& done, SweepReport report) {
  const SweepEval& eval = *config.eval;
  if (options.device != Device::cpu)
    throw ParameterError(config.config_path + ": [eval] sweeps run on the CPU (--device cpu)");
  if (options.threads > 0) omp_set_num_threads(options.threads);
  std::map<std::size_t, std::vector<const SweepRun*>> by_input;  // pending runs, in run-list order
  for (const SweepRun& r : mine) {
    if (done.is_complete(r.name)) {
      ++report.skipped_complete;
      continue;
    }
    by_input[r.trace].push_back(&r);
  }
  // Each eval reports its own chunks; on a terminal its bar owns the line, so the sweep's own
  // progress is a line after each input instead of a second bar drawn over it.
  const ProgressMode sweep_mode = options.progress == ProgressMode::bar ? ProgressMode::lines : options.progress;
  Progress progress(sweep_mode, "sweep", static_cast<std::int64_t>(report.in_shard));
  if (report.skipped_complete > 0)
    progress.already_done("run(s) done (already complete)", static_cast<std::int64_t>(report.skipped_complete));
  const std::string base = canonical_cache_spec(eval.base);
  for (const auto& group : by_input) {
    // Named variables, not a structured binding: the lambda below captures them, which
    // clang 14 (the sanitizer build) does not allow for structured bindings.
    const SweepEvalInput& in = eval.inputs[group.first];
    const std::vector<const SweepRun*>& runs = group.second;
    EvalOptions o = eval_options_for(eval, in);
    o.progress = options.progress;
    o.allow_mixed_versions = options.allow_mixed_versions;
    for (const SweepRun* r : runs)
      if (r->scheme != base) o.schemes.push_back(r->scheme);
    if (o.schemes.empty()) o.schemes.push_back(base);  // only the base is pending: run_eval wants a scheme
    const fs::path scratch = fs::path(options.output + ".cache") / "eval" / (sanitize_run_name(in.label) + ".h5");
    fs::create_directories(scratch.parent_path());
    o.output_path = scratch.string();
    EvalResult result;
    try {
      result = run_eval(o);
    } catch (...) {
      rethrow_with_context(std::current_exception(), config.config_path + ": eval input '" + in.label + "'");
    }
    std::vector<std::string> names;
    for (const SweepRun* r : runs) names.push_back(r->name);
    add_run_groups(options.output, names, false, [&](hid_t file) {
      for (const SweepRun* r : runs) {
        const bool is_base = r->scheme == base;
        std::size_t k = 0;
        if (!is_base) {
          k = 1;
          while (result.schemes[k].spec != r->scheme) ++k;  // run_eval keeps the order it was given
        }
        EvalSchemeResult s = result.schemes[k];
        s.spec = r->scheme;
        write_eval_run(file, r->name, in, eval, result, s, options.output);
      }
    });
    fs::remove(scratch);
    report.ran += runs.size();
    progress.finished("run(s) done (eval input " + in.label + ", " +
                          std::to_string(static_cast<long long>(result.tokens_per_second)) + " tokens/s)",
                      static_cast<std::int64_t>(runs.size()));
  }
  return report;
}

}  // namespace dgq::sim
