// Token files (format "dgq-tokens" v1, docs/eval.md), written by tools/make-eval-texts.py and
// `dgq tokenize`.
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/model/tokens.hpp"

namespace dgq::sim {

TokenText read_token_file(const std::string& path) {
  h5::Handle file = h5::open_file_readonly(path);
  const hid_t f = file.get();
  const std::string format = h5::read_string_attribute(f, "format", path);
  if (format != "dgq-tokens") throw InputError(path + ": format is '" + format + "', expected 'dgq-tokens'");
  const std::int64_t version = h5::read_int_attribute(f, "version", path);
  if (version != kTokenFormatVersion)
    throw InputError(path + ": token format version " + std::to_string(version) + ", this dgq reads " +
                     std::to_string(kTokenFormatVersion));
  TokenText t;
  t.model = h5::read_string_attribute(f, "model", path);
  t.kind = h5::read_string_attribute(f, "kind", path);
  if (h5::has_attribute(f, "tokenizer_id")) t.tokenizer_id = h5::read_string_attribute(f, "tokenizer_id", path);
  t.noise_rate = h5::read_double_attribute(f, "noise_rate", path);
  const std::vector<std::int64_t> ids = h5::read_int_vector(f, "tokens", path + ": dataset /tokens");
  t.tokens.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > INT32_MAX)
      throw InputError(path + ": dataset /tokens: index " + std::to_string(i) + " holds " + std::to_string(ids[i]) +
                       ", not a token id");
    t.tokens.push_back(static_cast<std::int32_t>(ids[i]));
  }
  return t;
}

void write_token_file(const std::string& path, const TokenText& t, const std::string& text) {
  h5::PartialOutput out(path);
  const hid_t f = out.file();
  h5::write_string_attribute(f, "format", "dgq-tokens");
  h5::write_int_attribute(f, "version", kTokenFormatVersion);
  h5::write_string_attribute(f, "model", t.model);
  if (!t.tokenizer_id.empty()) h5::write_string_attribute(f, "tokenizer_id", t.tokenizer_id);
  h5::write_string_attribute(f, "kind", t.kind);
  h5::write_double_attribute(f, "noise_rate", t.noise_rate);
  h5::write_vector(f, "tokens", t.tokens, path + ": dataset /tokens");
  h5::write_string_dataset(f, "text", text, path + ": dataset /text");
  out.commit();
}

}  // namespace dgq::sim
