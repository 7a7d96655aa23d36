// Refusing to resume a sweep over runs of other code or another configuration, and the config
// hash a sweep run records.
#include "sweep/resume_check.hpp"

#include <map>

#include "dgq/sim/eval/eval.hpp"
#include "dgq/sim/eval/eval_identity.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "sweep/eval_sweep.hpp"

namespace dgq::sim {

namespace {

// The config hash of each run, reading each input (trace metadata, or model attributes and
// token file) once however many of its runs are checked.
class RunConfigs {
 public:
  explicit RunConfigs(const SweepConfig& config) : config_(config) {}

  std::string hash(const SweepRun& run) {
    if (config_.eval) {
      const EvalOptions o = eval_options_for(*config_.eval, config_.eval->inputs[run.trace]);
      auto it = eval_inputs_.find(run.trace);
      if (it == eval_inputs_.end())
        it = eval_inputs_.emplace(run.trace, EvalInput{read_model_config(o.model_path), read_token_file(o.text_path)})
                 .first;
      const EvalInput& in = it->second;
      return config_hash(eval_config_text(in.model, in.text, o, eval_chunk_count(in.text, o), run.scheme));
    }
    auto it = traces_.find(run.trace);
    if (it == traces_.end()) it = traces_.emplace(run.trace, trace_meta(config_.traces[run.trace])).first;
    return config_hash(replay_config_text(run.scheme, it->second, resolve_layers(it->second, config_.layers)));
  }

 private:
  // The metadata a trace's runs are replayed with: the recorded file's, or the one the
  // generator writes for the options (the cached trace's, which need not exist yet).
  static TraceMeta trace_meta(const SweepTrace& trace) {
    return trace.synthetic ? synthetic_meta(*trace.synthetic) : TraceReader(trace.path).meta();
  }

  struct EvalInput {
    ModelConfig model;
    TokenText text;
  };
  const SweepConfig& config_;
  std::map<std::size_t, TraceMeta> traces_;
  std::map<std::size_t, EvalInput> eval_inputs_;
};

}  // namespace

std::string sweep_run_config_hash(const SweepConfig& config, const SweepRun& run) {
  return RunConfigs(config).hash(run);
}

void check_resumed_runs(const SweepConfig& config, const std::vector<SweepRun>& mine, const RunListing& done,
                        const SweepOptions& options) {
  if (options.allow_mixed_versions) return;
  RunConfigs configs(config);
  for (const SweepRun& r : mine) {
    if (!done.is_complete(r.name)) continue;
    require_provenance(options.output, "run " + r.name, done.provenance_of(r.name), this_build(configs.hash(r)), false);
  }
}

}  // namespace dgq::sim
