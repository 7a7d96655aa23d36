#include "results/base_logits_file.hpp"

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"

namespace dgq::sim {

BaseLogitsReader::BaseLogitsReader(const std::string& path, const std::string& identity, std::size_t chunks,
                                   std::size_t layers)
    : path_(path), file_(h5::open_file_readonly(path)) {
  const hid_t f = file_.get();
  const std::string stored = h5::read_string_attribute(f, "run_identity", path);
  if (stored != identity)
    throw InputError(path + ": base logits of another run (" + stored + "), this run is " + identity);
  counters_.stored_bytes = h5::read_doubles(f, "chunk_stored_bytes", chunks, path + ": /chunk_stored_bytes");
  counters_.stored_elements = h5::read_doubles(f, "chunk_stored_elements", chunks, path + ": /chunk_stored_elements");
  counters_.held_bytes_sums = h5::read_doubles(f, "chunk_held_bytes_sum", chunks, path + ": /chunk_held_bytes_sum");
  counters_.held_elements_sums =
      h5::read_doubles(f, "chunk_held_elements_sum", chunks, path + ": /chunk_held_elements_sum");
  if (h5::link_exists(f, "chunk_stored_k_bytes"))
    counters_.stored_k_bytes = h5::read_doubles(f, "chunk_stored_k_bytes", chunks, path + ": /chunk_stored_k_bytes");
  counters_.attn_kl_sums = h5::read_doubles(f, "chunk_attn_kl_sum", chunks * layers, path + ": /chunk_attn_kl_sum");
  counters_.attn_kl_counts =
      h5::read_doubles(f, "chunk_attn_kl_count", chunks * layers, path + ": /chunk_attn_kl_count");
}

std::vector<float> BaseLogitsReader::logits(std::int64_t chunk, std::int64_t rows, std::int64_t vocab) const {
  return h5::read_float_rows(file_.get(), "logits", chunk * rows, rows, vocab, path_ + ": /logits");
}

void write_base_logits_file(const std::string& path, const std::string& base_spec, const std::string& identity,
                            const std::string& config_hash, const BaseChunkCounters& counters,
                            const std::vector<float>& logits, std::int64_t rows, std::int64_t vocab) {
  h5::PartialOutput out(path);
  h5::write_string_attribute(out.file(), "format", "dgq-base-logits");
  h5::write_int_attribute(out.file(), "version", 1);
  h5::write_string_attribute(out.file(), "run_identity", identity);
  h5::write_string_attribute(out.file(), "base", base_spec);
  write_provenance_attributes(out.file(), config_hash);
  h5::write_doubles(out.file(), "chunk_stored_bytes", counters.stored_bytes, path);  // exact below 2^53
  h5::write_doubles(out.file(), "chunk_stored_elements", counters.stored_elements, path);
  h5::write_doubles(out.file(), "chunk_held_bytes_sum", counters.held_bytes_sums, path);
  h5::write_doubles(out.file(), "chunk_held_elements_sum", counters.held_elements_sums, path);
  if (!counters.stored_k_bytes.empty())
    h5::write_doubles(out.file(), "chunk_stored_k_bytes", counters.stored_k_bytes, path);
  h5::write_doubles(out.file(), "chunk_attn_kl_sum", counters.attn_kl_sums, path);
  h5::write_doubles(out.file(), "chunk_attn_kl_count", counters.attn_kl_counts, path);
  const auto total_rows = static_cast<hsize_t>(counters.stored_bytes.size()) * static_cast<hsize_t>(rows);
  h5::write_floats(out.file(), "logits", logits, total_rows, static_cast<hsize_t>(vocab), path);
  out.commit();
}

}  // namespace dgq::sim
