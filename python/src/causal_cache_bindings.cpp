// dgq.CausalCache: the literal causal cache of one layer x KV head x role (dgq/causal.hpp,
// docs/spec.md "Causal caches"): rows appended as a decoder writes them, the stored state read
// back as attention reads it. The same C++ object `dgq eval --cache causal --ubatch N` appends
// to, so a Python decoder that appends the same rows reads the same values, bit for bit.
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "array_views.hpp"
#include "bindings.hpp"
#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {

// The scheme is owned here because CausalCache keeps a reference to it.
struct CausalCacheObject {
  std::shared_ptr<const Scheme> scheme;
  std::unique_ptr<CausalCache> cache;
  DType dtype;
};

void init(CausalCacheObject* self, std::string_view spec, std::string_view role, std::int64_t channels,
          std::string_view dtype, std::string_view raw_dtype) {
  if (channels < 1) throw ParameterError("CausalCache: channels must be at least 1, got " + std::to_string(channels));
  const DType d = parse_dtype(dtype);
  const DType raw = parse_dtype(raw_dtype);
  std::shared_ptr<const Scheme> scheme(make_scheme(spec));
  // causal_form throws ParameterError for a scheme without a causal rule: refused here, before
  // any row is appended, as `dgq eval --cache causal` refuses it before any work.
  auto cache = std::make_unique<CausalCache>(*scheme, parse_role(role), channels, d, raw);
  new (self) CausalCacheObject{std::move(scheme), std::move(cache), d};
}

void append(CausalCacheObject& o, const InputArray& rows) {
  const ConstTensor view = tensor_view(rows, std::string(dtype_name(o.dtype)), "CausalCache.append");
  nb::gil_scoped_release release;
  o.cache->append(view);
}

// What attention reads now, tokens x channels fp32: the final values, then the raw tail
// (widened exactly from the row dtype). Into `out_array` when given.
nb::object read(const CausalCacheObject& o, nb::object out_array) {
  MutTensor out;
  nb::object result;
  const std::int64_t tokens = o.cache->tokens(), channels = o.cache->channels();
  if (out_array.is_none()) {
    result = nb::cast(new_matrix(DType::f32, tokens, channels, out));
  } else {
    out = output_view(out_array, DType::f32, tokens, channels, "CausalCache.read");
    result = out_array;
  }
  nb::gil_scoped_release release;
  o.cache->read(static_cast<float*>(out.data));
  return result;
}

}  // namespace

void bind_causal_cache(nb::module_& m) {
  nb::class_<CausalCacheObject>(m, "CausalCache",
                                "The causal cache of one layer x KV head x role (docs/spec.md, 'Causal caches').")
      .def("__init__", &init, nb::arg("spec"), nb::arg("role") = "k", nb::arg("channels"), nb::arg("dtype") = "f32",
           nb::arg("raw_dtype") = "f16",
           "A cache written with the scheme of spec (ParameterError if its family has no causal rule) for rows "
           "of `channels` values in dtype ('f32', 'f16', or 'bf16' given as uint16 bits). A role whose scheme "
           "keeps rows raw (Scheme.keeps_raw_rows) holds every row in raw_dtype ('f16', the default, as "
           "deployments do; 'bf16'; 'f32') and codes them from there (docs/spec.md rule C9).")
      .def("append", &append, nb::arg("rows"),
           "Append rows (tokens x channels, the cache's dtype): newly final tokens are stored by the causal "
           "form; the rest stays raw.")
      // After the overload above fails: ml_dtypes' bfloat16 rows (a cache of dtype "bf16").
      .def(
          "append",
          [](nb::handle self, nb::handle rows) {
            const auto& o = nb::cast<const CausalCacheObject&>(self);
            self.attr("append")(bf16_bits_of(rows, std::string(dtype_name(o.dtype)), "CausalCache.append"));
          },
          nb::arg("rows"))
      .def("read", &read, nb::arg("out") = nb::none(),
           "What attention reads now: tokens x channels float32, the final values then the raw tail.")
      .def_prop_ro("spec", [](const CausalCacheObject& o) { return o.scheme->spec(); })
      .def_prop_ro("dtype", [](const CausalCacheObject& o) { return std::string(dtype_name(o.dtype)); })
      .def_prop_ro(
          "row_dtype", [](const CausalCacheObject& o) { return std::string(dtype_name(o.cache->row_dtype())); },
          "The dtype the rows are held in (rule C9): raw_dtype when the scheme keeps rows of this role "
          "raw, else dtype.")
      .def_prop_ro("channels", [](const CausalCacheObject& o) { return o.cache->channels(); })
      .def_prop_ro(
          "tokens", [](const CausalCacheObject& o) { return o.cache->tokens(); }, "Tokens appended.")
      .def_prop_ro(
          "final_tokens", [](const CausalCacheObject& o) { return o.cache->final_tokens(); },
          "Tokens holding their final stored value (a prefix).")
      .def_prop_ro(
          "held_bytes", [](const CausalCacheObject& o) { return o.cache->held_bytes(); },
          "Bytes held now: the final prefix as stored plus the raw tail in the row dtype.")
      .def("__repr__", [](const CausalCacheObject& o) {
        return "<dgq.CausalCache " + o.scheme->spec() + " " + std::to_string(o.cache->tokens()) + " x " +
               std::to_string(o.cache->channels()) + " " + std::string(dtype_name(o.dtype)) + ": " +
               std::to_string(o.cache->final_tokens()) + " final, " + std::to_string(o.cache->held_bytes()) +
               " bytes held>";
      });
}

}  // namespace dgq::python
