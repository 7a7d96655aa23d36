// dgq.Scheme (make_scheme of a spec, on the CPU) and dgq.Compressed (Scheme::compress's
// result). Compression and decompression run with the GIL released: other Python threads go
// on, and several threads may compress at once (a Scheme is const and thread-independent, the
// conformance suite's promise).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "array_views.hpp"
#include "bindings.hpp"
#include "compressed_object.hpp"
#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {

struct SchemeObject {
  std::shared_ptr<const Scheme> scheme;
};

CompressedObject compress(const SchemeObject& s, const InputArray& x, std::string_view role,
                          std::optional<std::string_view> dtype) {
  const ConstTensor view = tensor_view(x, dtype, "compress");
  const TensorRole r = parse_role(role);
  CompressedObject out{{}, s.scheme};
  {
    nb::gil_scoped_release release;
    out.c = s.scheme->compress(view, r);
  }
  return out;
}

// Into a new array, or into `out_array` (returned) so that a caller decoding many tensors of one
// shape allocates and page-faults nothing (as Scheme::compress_into does for compression).
nb::object decompress(const CompressedObject& o, std::optional<std::string_view> dtype, nb::object out_array) {
  const DType want = dtype ? parse_dtype(*dtype) : o.c.dtype;
  MutTensor out;
  nb::object result;
  if (out_array.is_none()) {
    result = nb::cast(new_matrix(want, o.c.tokens, o.c.channels, out));
  } else {
    out = output_view(out_array, want, o.c.tokens, o.c.channels, "decompress");
    result = out_array;
  }
  nb::gil_scoped_release release;
  if (want == o.c.dtype) {
    o.scheme->decompress(o.c, out);
  } else {
    // Decoded in the original dtype (what Scheme::decompress writes), then converted by dgq's
    // rule 0 (exact widening; narrowing rounds to nearest even), as the CLI's readers do.
    std::vector<std::byte> native(static_cast<std::size_t>(o.c.tokens * o.c.channels) * dtype_size(o.c.dtype));
    const MutTensor native_view{native.data(), o.c.dtype, o.c.tokens, o.c.channels};
    o.scheme->decompress(o.c, native_view);
    const std::vector<float> values = to_float(native_view);
    from_float(values.data(), out);
  }
  return result;
}

// Name -> read-only uint8 view of the part's bytes, in the scheme's order; the views keep the
// Compressed alive (no copy of the bytes).
nb::dict parts(const CompressedObject& o) {
  nb::handle owner = nb::find(&o);
  nb::dict d;
  for (const Part& p : o.c.parts) {
    d[nb::str(p.name.c_str())] =
        nb::ndarray<nb::numpy, const std::uint8_t, nb::ndim<1>>(p.bytes.data(), {p.bytes.size()}, owner);
  }
  return d;
}

}  // namespace

void bind_schemes(nb::module_& m) {
  nb::class_<CompressedObject>(m, "Compressed", "A tensor compressed by a scheme: its parts and how to decode them.")
      .def_prop_ro(
          "scheme", [](const CompressedObject& o) { return o.c.scheme; }, "The canonical spec of the scheme.")
      .def_prop_ro("tokens", [](const CompressedObject& o) { return o.c.tokens; })
      .def_prop_ro("channels", [](const CompressedObject& o) { return o.c.channels; })
      .def_prop_ro(
          "dtype", [](const CompressedObject& o) { return std::string(dtype_name(o.c.dtype)); },
          "The input's dtype: 'f16', 'bf16' or 'f32'.")
      .def_prop_ro("role", [](const CompressedObject& o) { return std::string(role_name(o.c.role)); })
      .def_prop_ro(
          "bytes", [](const CompressedObject& o) { return o.c.total_bytes(); },
          "Stored bytes: the sum of the parts (diagnostics are not stored).")
      .def_prop_ro(
          "bits_per_element",
          [](const CompressedObject& o) {
            const std::int64_t elements = o.c.tokens * o.c.channels;
            return elements ? static_cast<double>(o.c.total_bytes()) * 8.0 / static_cast<double>(elements)
                            : std::numeric_limits<double>::quiet_NaN();
          },
          "Stored bits per input element (NaN for an empty array).")
      .def_prop_ro("parts", &parts,
                   "dict: part name -> read-only numpy uint8 view of its bytes, in the scheme's order.")
      .def_prop_ro(
          "segment_edges", [](const CompressedObject& o) { return o.c.segment_edges(); },
          "[0, e1, ..., tokens] for a segmenting scheme, [] otherwise.")
      .def("decompress", &decompress, nb::arg("dtype") = nb::none(), nb::arg("out") = nb::none(),
           "The decoded tensor, tokens x channels, in the input's dtype or in dtype ('f16', 'bf16' "
           "as uint16 bits, 'f32'); into out (returned) when given: a writable C-contiguous array "
           "of that shape and dtype.")
      .def("__repr__", [](const CompressedObject& o) {
        return "<dgq.Compressed " + o.c.scheme + " [" + std::to_string(o.c.tokens) + ", " +
               std::to_string(o.c.channels) + "] " + std::string(dtype_name(o.c.dtype)) + " " +
               std::string(role_name(o.c.role)) + ": " + std::to_string(o.c.total_bytes()) + " bytes>";
      });

  nb::class_<SchemeObject>(m, "Scheme",
                           "A scheme made from a spec (make_scheme, CPU): reuse it to compress many arrays.")
      .def(
          "__init__",
          [](SchemeObject* self, std::string_view spec) {
            new (self) SchemeObject{std::shared_ptr<const Scheme>(make_scheme(spec))};
          },
          nb::arg("spec"))
      .def_prop_ro(
          "spec", [](const SchemeObject& s) { return s.scheme->spec(); }, "The canonical spec.")
      .def_prop_ro("family", [](const SchemeObject& s) { return s.scheme->family(); })
      .def("compress", &compress, nb::arg("array"), nb::arg("role") = "k", nb::arg("dtype") = nb::none(),
           "Compress a 2-D C-contiguous array (tokens x channels): float16, float32, or uint16 bf16 "
           "bits with dtype='bf16'. role: 'k' or 'v'.")
      // After the overload above fails: ml_dtypes' bfloat16 arrays, and one error for the rest.
      .def(
          "compress",
          [](nb::handle self, nb::handle array, std::string_view role, std::optional<std::string_view> dtype) {
            return self.attr("compress")(bf16_bits_of(array, dtype, "compress"), role, "bf16");
          },
          nb::arg("array"), nb::arg("role") = "k", nb::arg("dtype") = nb::none())
      .def(
          "planned_bytes",
          [](const SchemeObject& s, std::int64_t tokens, std::int64_t channels, std::string_view dtype,
             std::string_view role) {
            return s.scheme->planned_bytes(tokens, channels, parse_dtype(dtype), parse_role(role));
          },
          nb::arg("tokens"), nb::arg("channels"), nb::arg("dtype") = "f16", nb::arg("role") = "k",
          "Bytes stored for that shape (exact, or the bound of a family whose data decides its size).")
      .def(
          "keeps_raw_rows",
          [](const SchemeObject& s, std::string_view role) { return s.scheme->keeps_raw_rows(parse_role(role)); },
          nb::arg("role") = "k",
          "Whether a cache of this scheme may keep a row of the role raw (a causal raw tail, sinks, a residual): "
          "such rows are held in the cache's raw dtype (docs/spec.md rule C9).")
      .def("__repr__", [](const SchemeObject& s) { return "<dgq.Scheme " + s.scheme->spec() + ">"; });
}

}  // namespace dgq::python
