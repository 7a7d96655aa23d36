#include "array_views.hpp"

#include <nanobind/stl/string.h>

#include <cstddef>
#include <string>

#include "dgq/errors.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {

bool is(const nb::dlpack::dtype& t, nb::dlpack::dtype_code code, int bits) {
  return t.code == static_cast<std::uint8_t>(code) && t.bits == bits && t.lanes == 1;
}

// numpy's name for a DLPack dtype, for messages.
std::string numpy_name(const nb::dlpack::dtype& t) {
  using C = nb::dlpack::dtype_code;
  std::string kind = "dtype code " + std::to_string(t.code) + " of ";
  switch (static_cast<C>(t.code)) {
    case C::Int: kind = "int"; break;
    case C::UInt: kind = "uint"; break;
    case C::Float: kind = "float"; break;
    case C::Bfloat: kind = "bfloat"; break;
    case C::Complex: kind = "complex"; break;
    case C::Bool: return "bool";
    default: break;  // the fp8/fp6/fp4 codes of newer DLPack: named by number
  }
  return kind + std::to_string(t.bits);
}

const char* numpy_name(DType d) {
  switch (d) {
    case DType::f16: return "float16";
    case DType::bf16: return "uint16";
    case DType::f32: return "float32";
  }
  return "?";
}

DType dtype_of(const nb::dlpack::dtype& t, std::optional<std::string_view> given, std::string_view what) {
  using C = nb::dlpack::dtype_code;
  const std::string prefix(what);
  if (given) {
    const DType d = parse_dtype(*given);  // ParameterError for a name dgq does not know
    const bool matches = (d == DType::f16 && is(t, C::Float, 16)) || (d == DType::f32 && is(t, C::Float, 32)) ||
                         (d == DType::bf16 && is(t, C::UInt, 16));
    if (!matches) {
      throw InputError(prefix + ": dtype='" + std::string(*given) + "' needs a " + numpy_name(d) + " array" +
                       (d == DType::bf16 ? " (the bf16 bits)" : "") + ", got " + numpy_name(t));
    }
    return d;
  }
  if (is(t, C::Float, 16)) return DType::f16;
  if (is(t, C::Float, 32)) return DType::f32;
  if (is(t, C::UInt, 16)) {
    throw InputError(prefix + ": a uint16 array needs dtype='bf16' (bf16 is passed as its bits)");
  }
  throw InputError(prefix + ": unsupported dtype " + numpy_name(t) +
                   "; dgq takes float16, float32, or uint16 holding bf16 bits with dtype='bf16'");
}

}  // namespace

ConstTensor tensor_view(const InputArray& a, std::optional<std::string_view> dtype, std::string_view what) {
  const std::string prefix(what);
  if (a.ndim() != 2) {
    std::string shape = "(";
    for (std::size_t i = 0; i < a.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape(i));
    shape += a.ndim() == 1 ? ",)" : ")";
    throw InputError(prefix + ": expected a 2-D array (tokens x channels), got " + std::to_string(a.ndim()) +
                     "-D shape " + shape);
  }
  const DType d = dtype_of(a.dtype(), dtype, what);
  const auto tokens = static_cast<std::int64_t>(a.shape(0));
  const auto channels = static_cast<std::int64_t>(a.shape(1));
  // Strides are in elements; a dimension of extent 1 (or an empty array) may have any stride.
  const bool contiguous =
      tokens * channels == 0 || ((channels == 1 || a.stride(1) == 1) && (tokens == 1 || a.stride(0) == channels));
  if (!contiguous) {
    throw InputError(prefix + ": the array is not C-contiguous (strides " + std::to_string(a.stride(0)) + ", " +
                     std::to_string(a.stride(1)) + " elements); pass numpy.ascontiguousarray(x)");
  }
  return ConstTensor{a.data(), d, tokens, channels};
}

MutTensor output_view(const nb::handle& out, DType dtype, std::int64_t tokens, std::int64_t channels,
                      std::string_view what) {
  const std::string prefix(what);
  const std::string want = "a writable C-contiguous " + std::string(numpy_name(dtype)) + " array of shape (" +
                           std::to_string(tokens) + ", " + std::to_string(channels) + ")";
  // No conversion: a converted copy would be decoded into and dropped, leaving out untouched.
  nb::ndarray<nb::device::cpu> a;
  if (!nb::try_cast(out, a, false))
    throw InputError(prefix + ": out must be " + want + " (a read-only or non-array object was given)");
  const bool shape_ok = a.ndim() == 2 && static_cast<std::int64_t>(a.shape(0)) == tokens &&
                        static_cast<std::int64_t>(a.shape(1)) == channels;
  const bool dtype_ok = dtype == DType::f16   ? is(a.dtype(), nb::dlpack::dtype_code::Float, 16)
                        : dtype == DType::f32 ? is(a.dtype(), nb::dlpack::dtype_code::Float, 32)
                                              : is(a.dtype(), nb::dlpack::dtype_code::UInt, 16);
  const bool contiguous =
      shape_ok &&
      (tokens * channels == 0 || ((channels == 1 || a.stride(1) == 1) && (tokens == 1 || a.stride(0) == channels)));
  if (!shape_ok || !dtype_ok || !contiguous) {
    std::string got = numpy_name(a.dtype()) + " shape (";
    for (std::size_t i = 0; i < a.ndim(); ++i) got += (i ? ", " : "") + std::to_string(a.shape(i));
    got += a.ndim() == 1 ? ",)" : ")";
    if (shape_ok && dtype_ok) got += ", not C-contiguous";
    throw InputError(prefix + ": out must be " + want + ", got " + got);
  }
  return MutTensor{a.data(), dtype, tokens, channels};
}

OutputArray new_matrix(DType dtype, std::int64_t tokens, std::int64_t channels, MutTensor& view) {
  view = MutTensor{nullptr, dtype, tokens, channels};
  // At least one byte, so that an empty result still has a buffer of its own to own.
  auto* buffer = new std::byte[view.bytes() + 1];
  nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<std::byte*>(p); });
  view.data = buffer;
  const std::size_t shape[2] = {static_cast<std::size_t>(tokens), static_cast<std::size_t>(channels)};
  nb::dlpack::dtype t{};
  switch (dtype) {
    case DType::f16: t = {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1}; break;
    case DType::bf16: t = nb::dtype<std::uint16_t>(); break;
    case DType::f32: t = nb::dtype<float>(); break;
  }
  return OutputArray(buffer, 2, shape, owner, nullptr, t);
}

TensorRole parse_role(std::string_view role) {
  if (role == "k") return TensorRole::key;
  if (role == "v") return TensorRole::value;
  throw ParameterError("role must be 'k' (keys) or 'v' (values), got '" + std::string(role) + "'");
}

nb::object bf16_bits_of(nb::handle array, std::optional<std::string_view> dtype, std::string_view what) {
  const std::string prefix(what);
  const std::string accepted =
      "dgq takes float16, float32, or uint16 holding bf16 bits with dtype='bf16' (or an ml_dtypes bfloat16 array)";
  nb::object type_name = nb::borrow(reinterpret_cast<PyObject*>(Py_TYPE(array.ptr()))).attr("__name__");
  if (!nb::hasattr(array, "dtype") || !nb::hasattr(array, "view"))
    throw InputError(prefix + ": a " + nb::cast<std::string>(type_name) + " is not an array; " + accepted);
  const nb::object d = array.attr("dtype");
  const std::string name = nb::hasattr(d, "name") ? nb::cast<std::string>(nb::str(d.attr("name"))) : "?";
  if (name != "bfloat16" || nb::cast<int>(d.attr("itemsize")) != 2)
    throw InputError(prefix + ": unsupported dtype " + name + "; " + accepted);
  if (dtype && *dtype != "bf16")
    throw InputError(prefix + ": a bfloat16 array with dtype='" + std::string(*dtype) + "'; it is bf16");
  return array.attr("view")(nb::module_::import_("numpy").attr("uint16"));
}

}  // namespace dgq::python
