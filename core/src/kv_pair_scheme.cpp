// The K/V pair scheme (dgq/kv_pair.hpp): every call goes to the side of its role.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/registry.hpp"

namespace dgq {
namespace {

class KvPairScheme final : public Scheme {
 public:
  KvPairScheme(std::unique_ptr<Scheme> k, std::unique_ptr<Scheme> v, Device device)
      : k_(std::move(k)), v_(std::move(v)), device_(device) {}

  std::string spec() const override { return k_->spec() + kKvPairSeparator + v_->spec(); }
  std::string family() const override { return k_->family() + kKvPairSeparator + v_->family(); }
  Compressed compress(ConstTensor x, TensorRole role) const override { return side(role).compress(x, role); }
  void compress_into(ConstTensor x, TensorRole role, Compressed& out) const override {
    side(role).compress_into(x, role, out);
  }
  void decompress(const Compressed& c, MutTensor out) const override { side(c.role).decompress(c, out); }
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    return side(role).planned_bytes(tokens, channels, dtype, role);
  }
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    return side(role).causal_schedule(x, role);
  }
  // Each side's causal form, or (when a side is its own) that side made again from its spec:
  // the pair owns its sides and hands out a new scheme.
  std::unique_ptr<Scheme> causal_form() const override {
    std::unique_ptr<Scheme> k = k_->causal_form(), v = v_->causal_form();
    if (!k && !v) return nullptr;
    if (!k) k = make_scheme(k_->spec(), device_);
    if (!v) v = make_scheme(v_->spec(), device_);
    return make_kv_pair_scheme(std::move(k), std::move(v), device_);
  }

  bool keeps_raw_rows(TensorRole role) const override { return side(role).keeps_raw_rows(role); }

  const Scheme& side(TensorRole role) const { return role == TensorRole::key ? *k_ : *v_; }

 private:
  std::unique_ptr<Scheme> k_, v_;
  Device device_;
};

}  // namespace

std::optional<KvPairSpec> split_kv_pair_spec(std::string_view spec) {
  const std::size_t slash = spec.find(kKvPairSeparator);
  if (slash == std::string_view::npos) return std::nullopt;
  KvPairSpec pair{std::string(spec.substr(0, slash)), std::string(spec.substr(slash + 1))};
  const auto blank = [](const std::string& s) { return s.find_first_not_of(' ') == std::string::npos; };
  if (blank(pair.k) || blank(pair.v))
    throw ParameterError("scheme '" + std::string(spec) + "': a K/V pair needs a scheme on both sides of '/'");
  if (pair.v.find(kKvPairSeparator) != std::string::npos)
    throw ParameterError("scheme '" + std::string(spec) + "': a K/V pair has one '/' (K_SPEC/V_SPEC)");
  return pair;
}

std::string join_kv_pair_spec(std::string_view k, std::string_view v) {
  if (k == v) return std::string(k);
  return std::string(k) + kKvPairSeparator + std::string(v);
}

std::vector<std::string> kv_pair_specs(const std::vector<std::string>& k, const std::vector<std::string>& v,
                                       std::string_view k_name, std::string_view v_name) {
  if (k.size() > 1 && v.size() > 1 && k.size() != v.size())
    throw ParameterError(std::string(k_name) + " has " + std::to_string(k.size()) + " entries and " +
                         std::string(v_name) + " " + std::to_string(v.size()) +
                         ": give as many of each, or one of them once");
  const auto side = [](const std::vector<std::string>& given, std::size_t i) -> std::string {
    if (given.empty()) return "fp16";
    return given.size() == 1 ? given[0] : given[i];
  };
  std::vector<std::string> pairs;
  for (std::size_t i = 0; i < std::max(k.size(), v.size()); ++i) {
    const std::string ki = side(k, i), vi = side(v, i);
    for (const auto& [name, s] : {std::pair{k_name, ki}, std::pair{v_name, vi}})
      if (s.find(kKvPairSeparator) != std::string::npos || s.find(';') != std::string::npos)
        // ';' is `dgq eval`'s layer plan (sim/eval/src/cache/layer_plan.hpp): a plan of pairs, not a
        // pair of plans, is what its grammar reads ("DEFAULT;LAYERS=K/V").
        throw ParameterError(std::string(name) + " takes one scheme per entry, not a K/V pair or a layer plan ('" + s +
                             "')");
    pairs.push_back(join_kv_pair_spec(ki, vi));
  }
  return pairs;
}

std::unique_ptr<Scheme> make_kv_pair_scheme(std::unique_ptr<Scheme> k, std::unique_ptr<Scheme> v, Device device) {
  if (!k || !v) throw std::logic_error("make_kv_pair_scheme: a side is missing");
  return std::make_unique<KvPairScheme>(std::move(k), std::move(v), device);
}

}  // namespace dgq
