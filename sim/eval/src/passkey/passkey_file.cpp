// Passkey task files (format "dgq-passkey" v1, docs/eval.md "The passkey task"), written by
// tools/make-passkey.py. Everything the run indexes with is checked here, so a damaged or
// hand-edited file fails with one line naming the file, dataset and index, never out of range.
#include <cmath>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/passkey.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/model/tokenizer_id.hpp"

namespace dgq::sim {
namespace {

std::string in_dataset(const std::string& path, const char* dataset) { return path + ": dataset /" + dataset; }

std::vector<std::int32_t> read_passkey_ids(hid_t f, const std::string& path, const char* dataset) {
  const std::vector<std::int64_t> ids = h5::read_int_vector(f, dataset, in_dataset(path, dataset));
  std::vector<std::int32_t> out;
  out.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > INT32_MAX)
      throw InputError(in_dataset(path, dataset) + ": index " + std::to_string(i) + " holds " + std::to_string(ids[i]) +
                       ", not a token id");
    out.push_back(static_cast<std::int32_t>(ids[i]));
  }
  return out;
}

// Offsets of n >= 1 pieces of `data_size` items: [n+1], starting at 0, strictly increasing (no
// empty prompt or answer), ending at data_size.
std::vector<std::int64_t> read_passkey_offsets(hid_t f, const std::string& path, const char* dataset,
                                               std::size_t data_size, const char* data_name) {
  std::vector<std::int64_t> off = h5::read_int_vector(f, dataset, in_dataset(path, dataset));
  if (off.size() < 2)
    throw InputError(in_dataset(path, dataset) + ": " + std::to_string(off.size()) +
                     " entries, need at least 2 (one prompt)");
  if (off[0] != 0)
    throw InputError(in_dataset(path, dataset) + ": index 0 holds " + std::to_string(off[0]) + ", expected 0");
  for (std::size_t i = 1; i < off.size(); ++i)
    if (off[i] <= off[i - 1])
      throw InputError(in_dataset(path, dataset) + ": index " + std::to_string(i) + " holds " + std::to_string(off[i]) +
                       ", not above index " + std::to_string(i - 1) + " (" + std::to_string(off[i - 1]) + ")");
  if (off.back() != static_cast<std::int64_t>(data_size))
    throw InputError(in_dataset(path, dataset) + ": index " + std::to_string(off.size() - 1) + " holds " +
                     std::to_string(off.back()) + ", expected the length of /" + data_name + " (" +
                     std::to_string(data_size) + ")");
  return off;
}

std::vector<std::int64_t> read_per_prompt(hid_t f, const std::string& path, const char* dataset, std::size_t n) {
  std::vector<std::int64_t> v = h5::read_int_vector(f, dataset, in_dataset(path, dataset));
  if (v.size() != n)
    throw InputError(in_dataset(path, dataset) + ": " + std::to_string(v.size()) + " entries, expected " +
                     std::to_string(n) + " (one per prompt)");
  return v;
}

// The per-prompt fields agree with the offsets: length = the prompt's token count, the needle
// inside the prompt, depth a percentage, key a positive number.
void check_prompt_fields(const PasskeyTask& t, const std::string& path) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string at = ": index " + std::to_string(i);
    const std::int64_t tokens = t.prompt_offsets[i + 1] - t.prompt_offsets[i];
    if (t.length[i] != tokens)
      throw InputError(in_dataset(path, "length") + at + " holds " + std::to_string(t.length[i]) + ", the prompt has " +
                       std::to_string(tokens) + " tokens");
    if (t.needle_position[i] < 0 || t.needle_position[i] >= tokens)
      throw InputError(in_dataset(path, "needle_position") + at + " holds " + std::to_string(t.needle_position[i]) +
                       ", outside the prompt's " + std::to_string(tokens) + " tokens");
    if (!(t.depth[i] >= 0 && t.depth[i] <= 100))
      throw InputError(in_dataset(path, "depth") + at + " holds " + std::to_string(t.depth[i]) + ", not a percentage");
    if (t.key[i] <= 0)
      throw InputError(in_dataset(path, "key") + at + " holds " + std::to_string(t.key[i]) + ", not a key");
  }
}

void check_ids_in_vocabulary(const std::vector<std::int32_t>& ids, std::int64_t vocab, const std::string& path,
                             const char* dataset) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= vocab)
      throw InputError(in_dataset(path, dataset) + ": index " + std::to_string(i) + " holds " + std::to_string(ids[i]) +
                       ", outside the vocabulary of " + std::to_string(vocab));
}

}  // namespace

std::span<const std::int32_t> PasskeyTask::prompt(std::size_t i) const {
  return std::span(tokens).subspan(static_cast<std::size_t>(prompt_offsets[i]),
                                   static_cast<std::size_t>(prompt_offsets[i + 1] - prompt_offsets[i]));
}

std::span<const std::int32_t> PasskeyTask::answer(std::size_t i) const {
  return std::span(answer_tokens)
      .subspan(static_cast<std::size_t>(answer_offsets[i]),
               static_cast<std::size_t>(answer_offsets[i + 1] - answer_offsets[i]));
}

PasskeyTask read_passkey_file(const std::string& path) {
  h5::Handle file = h5::open_file_readonly(path);
  const hid_t f = file.get();
  const std::string format = h5::read_string_attribute(f, "format", path);
  if (format != "dgq-passkey") throw InputError(path + ": format is '" + format + "', expected 'dgq-passkey'");
  const std::int64_t version = h5::read_int_attribute(f, "version", path);
  if (version != kPasskeyFormatVersion)
    throw InputError(path + ": passkey format version " + std::to_string(version) + ", this dgq reads " +
                     std::to_string(kPasskeyFormatVersion));
  PasskeyTask t;
  t.model = h5::read_string_attribute(f, "model", path);
  if (h5::has_attribute(f, "tokenizer_id")) t.tokenizer_id = h5::read_string_attribute(f, "tokenizer_id", path);
  t.seed = h5::read_int_attribute(f, "seed", path);
  t.tokens = read_passkey_ids(f, path, "tokens");
  t.prompt_offsets = read_passkey_offsets(f, path, "prompt_offsets", t.tokens.size(), "tokens");
  const std::size_t n = t.prompt_offsets.size() - 1;
  t.answer_tokens = read_passkey_ids(f, path, "answer_tokens");
  t.answer_offsets = read_passkey_offsets(f, path, "answer_offsets", t.answer_tokens.size(), "answer_tokens");
  if (t.answer_offsets.size() != n + 1)
    throw InputError(in_dataset(path, "answer_offsets") + ": " + std::to_string(t.answer_offsets.size()) +
                     " entries, /prompt_offsets has " + std::to_string(n + 1));
  t.key = read_per_prompt(f, path, "key", n);
  t.length = read_per_prompt(f, path, "length", n);
  t.needle_position = read_per_prompt(f, path, "needle_position", n);
  t.depth = h5::read_doubles(f, "depth", n, in_dataset(path, "depth"));
  check_prompt_fields(t, path);
  return t;
}

void check_passkey_task(const PasskeyTask& t, const ModelConfig& c, const std::string& path) {
  const std::string mismatch = tokenizer_mismatch(t.model, t.tokenizer_id, c);
  if (!mismatch.empty()) throw InputError(path + ": the task was made with " + mismatch);
  check_ids_in_vocabulary(t.tokens, c.vocab_size, path, "tokens");
  check_ids_in_vocabulary(t.answer_tokens, c.vocab_size, path, "answer_tokens");
  for (std::size_t i = 0; i < t.size(); ++i) {
    // The forward pass holds BOS, the prompt and every answer token but the last.
    const auto n = static_cast<std::int64_t>(c.add_bos + t.prompt(i).size() + t.answer(i).size() - 1);
    if (n > c.context_length)
      throw InputError(path + ": prompt " + std::to_string(i) + ": " + std::to_string(n) +
                       " tokens with BOS and answer, beyond the model's context length " +
                       std::to_string(c.context_length));
  }
}

}  // namespace dgq::sim
