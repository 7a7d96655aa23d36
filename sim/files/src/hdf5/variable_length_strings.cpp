// Variable-length strings read without libhdf5's global-heap code (h5_shared.hpp,
// docs/robustness.md "Variable-length strings without libhdf5").
//
// libhdf5 reads the stored heap id of an attribute or dataset (its object header and storage
// are parsed as for any value, and were walked by the isolated metadata check); its conversion
// to a C string would then follow the id into the global heap, where libhdf5 1.10.8 loops or
// copies out of bounds on corrupt bytes. So the value is read into an opaque memory type through
// a conversion of dgq's own that copies the stored id unchanged, and global_heap.cpp reads the
// string from the file's bytes.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "hdf5/global_heap.hpp"
#include "hdf5/h5_shared.hpp"

namespace dgq::sim::h5 {

namespace {

constexpr const char* kStoredHeapIdTag = "dgq: a variable-length string's stored heap id";

bool is_stored_heap_id_type(hid_t type) {
  if (H5Tget_class(type) != H5T_OPAQUE) return false;
  char* tag = H5Tget_tag(type);
  const bool ours = tag != nullptr && std::strcmp(tag, kStoredHeapIdTag) == 0;
  H5free_memory(tag);
  return ours;
}

// A libhdf5 conversion (H5T_conv_t) from a variable-length string as stored in the file to
// dgq's opaque type of the same size: the bytes are the stored heap id already, so nothing
// moves. A string in memory form (a char*, of another size) is refused, not reinterpreted.
herr_t keep_stored_heap_id(hid_t source, hid_t destination, H5T_cdata_t* cdata, std::size_t, std::size_t, std::size_t,
                           void*, void*, hid_t) {
  switch (cdata->command) {
    case H5T_CONV_INIT:
      cdata->need_bkg = H5T_BKG_NO;
      return H5Tis_variable_str(source) > 0 && is_stored_heap_id_type(destination) ? 0 : -1;
    case H5T_CONV_CONV: return H5Tget_size(source) == H5Tget_size(destination) ? 0 : -1;
    case H5T_CONV_FREE: return 0;
    default: return -1;
  }
}

void register_heap_id_conversion() {
  static std::once_flag once;
  std::call_once(once, [] {
    Handle string(check(H5Tcopy(H5T_C_S1), "string type"), Handle::Kind::datatype);
    check_status(H5Tset_size(string.get(), H5T_VARIABLE), "string type");
    Handle opaque(check(H5Tcreate(H5T_OPAQUE, 16), "heap id type"), Handle::Kind::datatype);
    check_status(H5Tset_tag(opaque.get(), kStoredHeapIdTag), "heap id type");
    check_status(H5Tregister(H5T_PERS_SOFT, "dgq stored heap id", string.get(), opaque.get(), keep_stored_heap_id),
                 "registering dgq's heap id conversion");
  });
}

// What the reader needs of an open file: the superblock's sizes, where address 0 is (after a
// user block), and its bytes as libhdf5 has them open: its descriptor (sec2, the default driver)
// or its image in memory (the core driver of h5::ScopedFileImage).
struct OpenFile {
  FileSizes sizes;
  FileBytes bytes;
};

OpenFile open_file_of(hid_t file, const std::string& where) {
  OpenFile open;
  Handle fcpl(check(H5Fget_create_plist(file), where), Handle::Kind::plist);
  std::size_t address_bytes = 0, length_bytes = 0;
  hsize_t user_block = 0;
  check_status(H5Pget_sizes(fcpl.get(), &address_bytes, &length_bytes), where);
  check_status(H5Pget_userblock(fcpl.get(), &user_block), where);
  const auto valid = [](std::size_t n) { return n == 2 || n == 4 || n == 8; };
  if (!valid(address_bytes) || !valid(length_bytes))
    throw InputError(where + ": the file declares " + std::to_string(address_bytes) + "-byte addresses and " +
                     std::to_string(length_bytes) + "-byte lengths");
  open.sizes = {static_cast<unsigned>(address_bytes), static_cast<unsigned>(length_bytes)};
  open.bytes.base_address = user_block;

  Handle fapl(check(H5Fget_access_plist(file), where), Handle::Kind::plist);
  const hid_t driver = H5Pget_driver(fapl.get());
  void* handle = nullptr;
  check_status(H5Fget_vfd_handle(file, fapl.get(), &handle), where + ": file handle");
  if (driver == H5FD_SEC2) {
    open.bytes.fd = *static_cast<const int*>(handle);
    struct stat st {};
    if (::fstat(open.bytes.fd, &st) != 0) throw InputError(where + ": cannot stat the file");
    open.bytes.size = static_cast<std::uint64_t>(st.st_size);
  } else if (driver == H5FD_CORE) {
    open.bytes.image = *static_cast<unsigned char* const*>(handle);
    hsize_t size = 0;
    check_status(H5Fget_filesize(file, &size), where);
    open.bytes.size = size;
  } else {
    throw Error(where + ": dgq reads variable-length strings from files opened by the sec2 or core driver");
  }
  return open;
}

// A file this process has open for writing is its own (h5::create_file, open_own_copy_readwrite),
// and what it wrote may still be only in libhdf5's cache, not in the file's bytes: read through
// libhdf5 (merge compares a run it has just copied into its output with its duplicate).
std::string read_own_string(hid_t obj, bool is_attribute, const std::string& where) {
  Handle stored(check(is_attribute ? H5Aget_type(obj) : H5Dget_type(obj), where), Handle::Kind::datatype);
  Handle mem(check(H5Tcopy(H5T_C_S1), where), Handle::Kind::datatype);
  check_status(H5Tset_size(mem.get(), H5T_VARIABLE), where);
  check_status(H5Tset_cset(mem.get(), H5Tget_cset(stored.get())), where);  // libhdf5 converts no cset to another
  char* value = nullptr;
  const herr_t status =
      is_attribute ? H5Aread(obj, mem.get(), &value) : H5Dread(obj, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
  check_status(status, where + ": cannot read string");
  std::string out = value ? value : "";
  H5free_memory(value);
  return out;
}

bool open_for_writing(hid_t file, const std::string& where) {
  unsigned intent = 0;
  check_status(H5Fget_intent(file, &intent), where);
  return (intent & H5F_ACC_RDWR) != 0;
}

}  // namespace

std::string read_variable_length_string(hid_t obj, bool is_attribute, const std::string& where) {
  register_heap_id_conversion();
  Handle file_id(check(H5Iget_file_id(obj), where), Handle::Kind::file);
  if (open_for_writing(file_id.get(), where)) return read_own_string(obj, is_attribute, where);
  const OpenFile file = open_file_of(file_id.get(), where);
  Handle stored(check(H5Tcreate(H5T_OPAQUE, heap_id_bytes(file.sizes)), where), Handle::Kind::datatype);
  check_status(H5Tset_tag(stored.get(), kStoredHeapIdTag), where);
  std::vector<unsigned char> raw(heap_id_bytes(file.sizes));
  const herr_t status = is_attribute ? H5Aread(obj, stored.get(), raw.data())
                                     : H5Dread(obj, stored.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data());
  check_status(status, where + ": cannot read string");
  return read_global_heap_string(file.bytes, file.sizes, decode_heap_id(raw.data(), file.sizes), where);
}

}  // namespace dgq::sim::h5
