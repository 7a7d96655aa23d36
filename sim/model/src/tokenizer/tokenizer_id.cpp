#include "dgq/sim/model/tokenizer_id.hpp"

#include <cstdint>
#include <cstdio>

namespace dgq::sim {
namespace {

class Fnv1a64 {
 public:
  void add(const std::string& s) {
    std::uint64_t length = s.size();
    for (int b = 0; b < 8; ++b) byte(static_cast<unsigned char>(length >> (8 * b)));
    for (const char ch : s) byte(static_cast<unsigned char>(ch));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ull;
  void byte(unsigned char b) {
    h_ ^= b;
    h_ *= 1099511628211ull;
  }
};

}  // namespace

std::string tokenizer_id(const gguf::File& f) {
  Fnv1a64 h;
  h.add(f.string_value("tokenizer.ggml.model", ""));
  h.add(f.string_value("tokenizer.ggml.pre", ""));
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"})
    if (f.find(key) != nullptr)
      for (const std::string& s : f.string_array(key)) h.add(s);
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx", static_cast<unsigned long long>(h.value()));
  return text;
}

std::string tokenizer_mismatch(const std::string& name, const std::string& id, const ModelConfig& c) {
  if (!id.empty() && !c.tokenizer_id.empty()) {
    if (id == c.tokenizer_id) return {};
    return "the tokenizer of '" + name + "' (" + id + "), the model's is '" + c.name + "' (" + c.tokenizer_id + ")";
  }
  if (name == c.name) return {};
  std::string hint;
  if (id.empty() && !c.tokenizer_id.empty())
    hint =
        " (the file records no tokenizer_id: remake it with tools/make-eval-texts.py or tools/make-passkey.py to "
        "match it by tokenizer)";
  return "the tokenizer of '" + name + "', the model is '" + c.name + "'" + hint;
}

}  // namespace dgq::sim
