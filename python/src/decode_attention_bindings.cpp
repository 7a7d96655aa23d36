// dgq.decode_attention: one decode step of attention read straight from compressed heads
// (dgq::cpu::CompressedLayer, the CPU kernel of docs/benchmarks.md "Decode attention"), with the
// GIL released. The heads' parts are read in place (no copy, no decompression); the layer is set
// up at every call (each head's ranges read once), which a loop over steps pays each time.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "compressed_object.hpp"
#include "dgq/cpu/compressed_layer.hpp"
#include "dgq/errors.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {

using Query = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Output = nb::ndarray<nb::numpy, float, nb::ndim<2>>;

std::vector<const Compressed*> heads_of(const std::vector<const CompressedObject*>& objects, const char* name) {
  std::vector<const Compressed*> heads;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (objects[i] == nullptr)
      throw ParameterError(std::string("decode_attention: ") + name + "[" + std::to_string(i) + "] is None");
    heads.push_back(&objects[i]->c);
  }
  return heads;
}

Output decode_attention(const Query& q, const std::vector<const CompressedObject*>& keys,
                        const std::vector<const CompressedObject*>& values, std::optional<float> scale, int threads) {
  if (threads < 1 || threads > 1024)
    throw ParameterError("decode_attention: threads must be in [1, 1024], got " + std::to_string(threads));
  const std::vector<const Compressed*> k = heads_of(keys, "keys"), v = heads_of(values, "values");
  const cpu::CompressedLayer layer(k, v);  // std::invalid_argument -> ValueError, InputError -> dgq.InputError
  const auto query_heads = static_cast<std::int64_t>(q.shape(0)), head_dim = static_cast<std::int64_t>(q.shape(1));
  const auto kv_heads = static_cast<std::int64_t>(k.size());
  if (head_dim != layer.shape(1).head_dim || query_heads < kv_heads || query_heads % kv_heads != 0)
    throw ParameterError("decode_attention: q is " + std::to_string(query_heads) + " x " + std::to_string(head_dim) +
                         "; it must be (a multiple of the " + std::to_string(kv_heads) + " KV heads) x the heads' " +
                         std::to_string(layer.shape(1).head_dim) + " channels");
  const int group = static_cast<int>(query_heads / kv_heads);
  const float s = scale.value_or(1.0f / std::sqrt(static_cast<float>(head_dim)));
  if (!std::isfinite(s)) throw ParameterError("decode_attention: scale must be finite");
  auto* out = new float[static_cast<std::size_t>(query_heads * head_dim)];
  nb::capsule owner(out, [](void* p) noexcept { delete[] static_cast<float*>(p); });
  {
    nb::gil_scoped_release release;
    layer.attend(q.data(), group, s, out, threads);
  }
  return Output(out, {static_cast<std::size_t>(query_heads), static_cast<std::size_t>(head_dim)}, owner);
}

}  // namespace

void bind_decode_attention(nb::module_& m) {
  m.def("decode_attention", &decode_attention, nb::arg("q"), nb::arg("keys"), nb::arg("values"),
        nb::arg("scale") = nb::none(), nb::arg("threads") = 1,
        "One decode step on compressed heads: q (query_heads x head_dim, float32), keys and values "
        "(lists of dgq.Compressed, one per KV head, compressed as 'k' and 'v'); query head h reads "
        "KV head h // (query_heads / kv_heads). scale defaults to 1/sqrt(head_dim). Returns "
        "query_heads x head_dim float32.");
}

}  // namespace dgq::python
