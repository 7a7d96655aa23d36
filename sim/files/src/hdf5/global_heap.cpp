// Variable-length strings from a global heap collection's bytes (global_heap.hpp). The layout is
// HDF5's file format specification, "Global Heap" (version 1): "GCOL", version 1, 3 reserved
// bytes, the collection's size (length bytes, header included); then objects, each an index (u16,
// 0 = free space), a reference count (u16), 4 reserved bytes, a size (length bytes) and the data
// padded to a multiple of 8 bytes; the free-space object's size covers its own header and is not
// padded. Too little room left for an object header is free space too.
#include "hdf5/global_heap.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "dgq/errors.hpp"

namespace dgq::sim::h5 {

namespace {

std::uint64_t decode_little_endian(const unsigned char* bytes, unsigned count) {
  std::uint64_t value = 0;
  for (unsigned i = count; i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

struct CollectionLayout {
  unsigned header_bytes;         // "GCOL", version, reserved, size
  unsigned object_header_bytes;  // index, reference count, reserved, size
};

CollectionLayout layout_of(const FileSizes& sizes) {
  return {4 + 1 + 3 + sizes.length_bytes, 2 + 2 + 4 + sizes.length_bytes};
}

class CorruptHeap {
 public:
  CorruptHeap(std::string where, std::uint64_t collection) : where_(std::move(where)), collection_(collection) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where_ + ": corrupt global heap (the collection at address " + std::to_string(collection_) + ": " +
                     what + ")");
  }

 private:
  std::string where_;
  std::uint64_t collection_;
};

// The collection's size from its header, checked to lie inside the file.
std::uint64_t collection_size(const FileBytes& file, const FileSizes& sizes, std::uint64_t collection,
                              const CorruptHeap& corrupt) {
  const CollectionLayout layout = layout_of(sizes);
  unsigned char header[16] = {};
  if (!file.read(collection, header, layout.header_bytes)) corrupt.fail("its header is not inside the file");
  if (std::memcmp(header, "GCOL", 4) != 0) corrupt.fail("no GCOL signature there");
  if (header[4] != 1) corrupt.fail("version " + std::to_string(header[4]) + ", dgq reads version 1");
  const std::uint64_t size = decode_little_endian(header + 8, sizes.length_bytes);
  if (size < layout.header_bytes) corrupt.fail("size " + std::to_string(size) + " is smaller than its header");
  if (!file.read(collection + size - 1, header, 1))
    corrupt.fail("size " + std::to_string(size) + " runs past the end of the file (" + std::to_string(file.size) +
                 " bytes)");
  return size;
}

// The collection's bytes for the walk: read whole in one call when it is small (every
// collection libhdf5 writes for short strings is 4 KiB), else read where asked (a collection
// holding one long string, or a corrupt size that only fits the file).
class CollectionBytes {
 public:
  static constexpr std::uint64_t kReadWhole = std::uint64_t{1} << 20;
  CollectionBytes(const FileBytes& file, std::uint64_t address, std::uint64_t size) : file_(file), address_(address) {
    if (size <= kReadWhole) {
      whole_.resize(size);
      if (!file.read(address, whole_.data(), whole_.size())) whole_.clear();
    }
  }
  bool read(std::uint64_t offset, void* out, std::size_t count) const {
    if (whole_.empty()) return file_.read(address_ + offset, out, count);
    if (offset > whole_.size() || count > whole_.size() - offset) return false;
    std::memcpy(out, whole_.data() + offset, count);
    return true;
  }

 private:
  const FileBytes& file_;
  std::uint64_t address_;
  std::vector<unsigned char> whole_;
};

}  // namespace

bool FileBytes::read(std::uint64_t address, void* out, std::size_t count) const {
  if (address > size || base_address > size - address) return false;
  const std::uint64_t offset = base_address + address;
  if (count > size - offset) return false;
  if (image) {
    std::memcpy(out, image + offset, count);
    return true;
  }
  auto* bytes = static_cast<unsigned char*>(out);
  for (std::size_t done = 0; done < count;) {
    const ssize_t n = ::pread(fd, bytes + done, count - done, static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::size_t heap_id_bytes(const FileSizes& sizes) { return 4 + sizes.address_bytes + 4; }

GlobalHeapId decode_heap_id(const unsigned char* raw, const FileSizes& sizes) {
  GlobalHeapId id;
  id.length = static_cast<std::uint32_t>(decode_little_endian(raw, 4));
  id.collection = decode_little_endian(raw + 4, sizes.address_bytes);
  id.index = static_cast<std::uint32_t>(decode_little_endian(raw + 4 + sizes.address_bytes, 4));
  return id;
}

std::string read_global_heap_string(const FileBytes& file, const FileSizes& sizes, const GlobalHeapId& id,
                                    const std::string& where) {
  if (id.length == 0) return "";
  const CorruptHeap corrupt(where, id.collection);
  if (id.collection == 0) corrupt.fail("a string of " + std::to_string(id.length) + " bytes stored at address 0");
  if (id.index == 0 || id.index > 0xFFFF)
    corrupt.fail("object index " + std::to_string(id.index) + " (objects are numbered 1 to 65535)");
  const CollectionLayout layout = layout_of(sizes);
  const std::uint64_t size = collection_size(file, sizes, id.collection, corrupt);
  const CollectionBytes collection(file, id.collection, size);
  // Every step advances by at least one object header, so the walk ends within size / 16 steps.
  std::uint64_t at = layout.header_bytes;
  while (size - at >= layout.object_header_bytes) {
    unsigned char header[16] = {};
    if (!collection.read(at, header, layout.object_header_bytes)) corrupt.fail("unreadable object header");
    const auto index = static_cast<std::uint32_t>(decode_little_endian(header, 2));
    const std::uint64_t object_size = decode_little_endian(header + 8, sizes.length_bytes);
    const std::uint64_t left = size - at - layout.object_header_bytes;
    if (index == 0) {  // free space: its size includes its header
      if (object_size < layout.object_header_bytes || object_size - layout.object_header_bytes > left)
        corrupt.fail("free space of " + std::to_string(object_size) + " bytes at offset " + std::to_string(at));
      at += object_size;
      continue;
    }
    if (object_size > left)
      corrupt.fail("object " + std::to_string(index) + " of " + std::to_string(object_size) + " bytes at offset " +
                   std::to_string(at) + " runs past its end (" + std::to_string(size) + " bytes)");
    if (index == id.index) {
      if (object_size != id.length)
        corrupt.fail("object " + std::to_string(index) + " holds " + std::to_string(object_size) +
                     " bytes, the string says " + std::to_string(id.length));
      std::string value(object_size, '\0');
      if (!collection.read(at + layout.object_header_bytes, value.data(), value.size()))
        corrupt.fail("object " + std::to_string(index) + " is not inside the file");
      return value.substr(0, std::strlen(value.c_str()));
    }
    const std::uint64_t padded = (object_size + 7) / 8 * 8;
    at += layout.object_header_bytes + std::min(padded, left);
  }
  corrupt.fail("no object " + std::to_string(id.index) + " in it");
}

}  // namespace dgq::sim::h5
