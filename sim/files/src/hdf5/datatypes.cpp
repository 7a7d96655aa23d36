// The file types of dgq's float dtypes, and the description of any stored type for errors.
#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim::h5 {

Handle half_type() {
  // The same construction as h5py's float16 type.
  Handle type(check(H5Tcopy(H5T_IEEE_F32LE), "half type"), Handle::Kind::datatype);
  check_status(H5Tset_fields(type.get(), 15, 10, 5, 0, 10), "half type");
  check_status(H5Tset_size(type.get(), 2), "half type");
  check_status(H5Tset_ebias(type.get(), 15), "half type");
  return type;
}

Handle float_file_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return half_type();
    case DType::f32: return Handle(check(H5Tcopy(H5T_IEEE_F32LE), "float type"), Handle::Kind::datatype);
    case DType::bf16:  // its bits; the reader knows it by the dataset's dtype attribute
      return Handle(check(H5Tcopy(H5T_STD_U16LE), "bf16 type"), Handle::Kind::datatype);
  }
  throw InputError("unknown dtype");
}

std::optional<DType> float_dtype_of(hid_t type) {
  if (H5Tget_class(type) != H5T_FLOAT) return std::nullopt;
  std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0) {
    take_error_message();
    return std::nullopt;
  }
  const std::size_t size = H5Tget_size(type);
  const std::size_t bias = H5Tget_ebias(type);
  if (size == 2 && spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 && bias == 15) return DType::f16;
  if (size == 4 && spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23 && bias == 127) return DType::f32;
  return std::nullopt;
}

bool is_integer_type(hid_t type) { return H5Tget_class(type) == H5T_INTEGER; }

std::string describe_type(hid_t type) {
  const std::string bytes = " (" + std::to_string(H5Tget_size(type)) + " bytes)";
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: return (H5Tget_sign(type) == H5T_SGN_NONE ? "unsigned integer" : "integer") + bytes;
    case H5T_FLOAT: {
      const auto dtype = float_dtype_of(type);
      return dtype ? std::string(dtype_name(*dtype)) : "non-IEEE or unsupported float" + bytes;
    }
    case H5T_STRING: return "string";
    case H5T_ENUM: return "enum" + bytes;
    case H5T_COMPOUND: return "compound" + bytes;
    default: return "unsupported type" + bytes;
  }
}

}  // namespace dgq::sim::h5
