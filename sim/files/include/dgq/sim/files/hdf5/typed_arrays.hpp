#pragma once
// Typed numeric datasets (results tables), on top of the shared RAII layer (hdf5/h5.hpp):
// write_array<T> picks the file and memory types from T. Tables of 64 KiB or more are one
// chunk, shuffled and deflated. Scalar numbers: hdf5/numbers.hpp.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim::h5 {

template <class T>
struct Types;
template <>
struct Types<double> {
  static hid_t file() { return H5T_IEEE_F64LE; }
  static hid_t mem() { return H5T_NATIVE_DOUBLE; }
};
template <>
struct Types<std::uint64_t> {
  static hid_t file() { return H5T_STD_U64LE; }
  static hid_t mem() { return H5T_NATIVE_UINT64; }
};
template <>
struct Types<std::int32_t> {
  static hid_t file() { return H5T_STD_I32LE; }
  static hid_t mem() { return H5T_NATIVE_INT32; }
};
template <>
struct Types<std::uint8_t> {
  static hid_t file() { return H5T_STD_U8LE; }
  static hid_t mem() { return H5T_NATIVE_UINT8; }
};
template <>
struct Types<std::uint32_t> {
  static hid_t file() { return H5T_STD_U32LE; }
  static hid_t mem() { return H5T_NATIVE_UINT32; }
};

// Writes values (row-major, product(shape) entries) as dataset `name` under loc.
template <class T>
void write_array(hid_t loc, const std::string& name, const std::vector<T>& values, const std::vector<hsize_t>& shape,
                 const std::string& context) {
  // Small tables are stored contiguously: a chunk index and filter pipeline per dataset
  // would cost more file space than the data.
  constexpr std::size_t kChunkFrom = 1 << 16;  // bytes
  const bool chunk = values.size() * sizeof(T) >= kChunkFrom;
  Handle ds =
      create_dataset(loc, name, Types<T>::file(), shape, chunk ? shape : std::vector<hsize_t>{}, context + "/" + name);
  if (!values.empty()) write_all(ds.get(), Types<T>::mem(), values.data(), context + "/" + name);
}

}  // namespace dgq::sim::h5
