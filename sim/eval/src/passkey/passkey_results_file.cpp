// The results file of `dgq eval --task passkey` (format dgq-passkey-results v1, docs/eval.md):
// the run's settings and provenance on its root, the task's per-prompt fields, one group
// /runs/<i> per scheme (in the order given) with every prompt's score.
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/hdf5/typed_arrays.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"
#include "passkey/passkey_output.hpp"

namespace dgq::sim {
namespace {

constexpr std::int64_t kPasskeyResultsVersion = 1;

// typed_arrays.hpp has no int64 table; the per-prompt integers are int64 as in the task file.
void write_int64s(hid_t loc, const std::string& name, const std::vector<std::int64_t>& values,
                  const std::string& context) {
  h5::Handle ds = h5::create_dataset(loc, name, H5T_STD_I64LE, {values.size()}, {}, context + "/" + name);
  if (!values.empty()) h5::write_all(ds.get(), H5T_NATIVE_INT64, values.data(), context + "/" + name);
}

void write_passkey_settings(hid_t f, const PasskeyOptions& o, const ModelConfig& c, const PasskeyTask& t) {
  h5::write_string_attribute(f, "format", "dgq-passkey-results");
  h5::write_int_attribute(f, "version", kPasskeyResultsVersion);
  h5::write_string_attribute(f, "task", "passkey");
  h5::write_string_attribute(f, "model", c.name);
  h5::write_string_attribute(f, "architecture", c.architecture);
  h5::write_int_attribute(f, "add_bos", c.add_bos);
  h5::write_int_attribute(f, "seed", t.seed);
  h5::write_int_attribute(f, "prompts", static_cast<std::int64_t>(t.size()));
  h5::write_string_attribute(f, "query_rounding", o.query_rounding == QueryRounding::q8_0 ? "q8_0" : "off");
  h5::write_string_attribute(f, "cache", cache_mode_name(o.cache));
  h5::write_string_attribute(f, "keys", key_position_name(o.keys));
  h5::write_string_attribute(f, "raw_dtype", std::string(dtype_name(o.raw_dtype)));
  h5::write_int_attribute(f, "ubatch", o.ubatch);
  h5::write_int_attribute(f, "row_exact", o.arithmetic == Arithmetic::row_exact);
  h5::write_string_attribute(f, "gemm", std::string(gemm_library_name(o.gemm_library)));
}

void write_task_fields(hid_t f, const PasskeyTask& t, const std::string& path) {
  write_int64s(f, "key", t.key, path);
  write_int64s(f, "length", t.length, path);
  h5::write_doubles(f, "depth", t.depth, path + ": /depth");
  write_int64s(f, "needle_position", t.needle_position, path);
  write_int64s(f, "answer_offsets", t.answer_offsets, path);
  h5::write_array(f, "answer_tokens", t.answer_tokens, {t.answer_tokens.size()}, path);
}

void write_passkey_scheme(hid_t g, const PasskeySchemeResult& s, const std::string& version,
                          const std::string& context) {
  h5::write_string_attribute(g, "spec", s.spec);
  h5::write_string_attribute(g, "raw_dtype", s.raw_dtype);
  write_provenance_attributes(g, s.config_hash, version);
  h5::write_double_attribute(g, "accuracy", s.accuracy);
  h5::write_double_attribute(g, "logprob_mean", s.logprob_mean);
  h5::write_double_attribute(g, "bits_per_element", s.bits_per_element);
  h5::write_double_attribute(g, "bits_averaged", s.bits_averaged);
  h5::write_double_attribute(g, "bits_k", s.bits_k);
  h5::write_double_attribute(g, "bits_v", s.bits_v);
  h5::write_int_attribute(g, "stored_bytes", static_cast<std::int64_t>(s.stored_bytes));
  h5::write_int_attribute(g, "stored_elements", static_cast<std::int64_t>(s.stored_elements));
  h5::write_int_attribute(g, "held_bytes_sum", static_cast<std::int64_t>(s.held_bytes_sum));
  h5::write_int_attribute(g, "held_elements_sum", static_cast<std::int64_t>(s.held_elements_sum));
  h5::write_array(g, "exact", s.exact, {s.exact.size()}, context);
  h5::write_doubles(g, "logprob", s.logprob, context + "/logprob");
  write_int64s(g, "first_wrong", s.first_wrong, context);
  h5::write_array(g, "predicted", s.predicted, {s.predicted.size()}, context);
}

}  // namespace

void write_passkey_results_file(const PasskeyOptions& o, const ModelConfig& c, const PasskeyTask& t,
                                const PasskeyResult& r) {
  h5::PartialOutput out(o.output_path, RunsInTarget::replace);  // run_passkey refused an existing file without --force
  const hid_t f = out.file();
  write_passkey_settings(f, o, c, t);
  write_provenance_attributes(f, r.config_hash, r.dgq_version);
  write_task_fields(f, t, o.output_path);
  h5::Handle runs = h5::create_group(f, "runs", o.output_path);
  for (std::size_t i = 0; i < r.schemes.size(); ++i) {
    h5::Handle g = h5::create_group(runs.get(), std::to_string(i), o.output_path);
    write_passkey_scheme(g.get(), r.schemes[i], r.dgq_version, o.output_path + ": /runs/" + std::to_string(i));
  }
  out.commit();
}

}  // namespace dgq::sim
