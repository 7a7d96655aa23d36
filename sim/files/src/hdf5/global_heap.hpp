#pragma once
// A variable-length string read from a file's bytes, not through libhdf5 (docs/robustness.md,
// "Variable-length strings without libhdf5").
//
// An HDF5 variable-length string is stored as a heap id (its length, the address of a global
// heap collection, an object index) and its bytes live in that collection ("GCOL": a header,
// then objects of index, reference count, size and data padded to 8 bytes, the last one free
// space). libhdf5 1.10.8 trusts every one of those fields: a free-space object of size 0 makes
// it loop forever, an object size beyond the collection or the string makes it copy out of
// bounds (H5HG_read under H5Aread). Here each field is checked against the collection and the
// file before a byte is copied, and the walk over the objects advances at every step, so a
// corrupt heap is one error, at once.
#include <cstddef>
#include <cstdint>
#include <string>

namespace dgq::sim::h5 {

// The bytes of an open HDF5 file: a file descriptor (pread) or an in-memory image.
struct FileBytes {
  int fd = -1;
  const unsigned char* image = nullptr;
  std::uint64_t size = 0;          // bytes in the file (or image)
  std::uint64_t base_address = 0;  // where HDF5 address 0 is (after a user block)
  // Copies `count` bytes at HDF5 address `address`; false when they are not all inside the file.
  bool read(std::uint64_t address, void* out, std::size_t count) const;
};

// The sizes the file's superblock declares (1, 2, 4 or 8 bytes each; 8 in every file dgq writes).
struct FileSizes {
  unsigned address_bytes = 8;
  unsigned length_bytes = 8;
};

// A heap id as an attribute or dataset stores it: length (u32), collection address, object index (u32).
struct GlobalHeapId {
  std::uint32_t length = 0;
  std::uint64_t collection = 0;
  std::uint32_t index = 0;
};

// Bytes in a stored heap id: 4 + the file's address size + 4.
std::size_t heap_id_bytes(const FileSizes& sizes);
// Decodes a stored heap id (little-endian, heap_id_bytes(sizes) bytes at `raw`).
GlobalHeapId decode_heap_id(const unsigned char* raw, const FileSizes& sizes);

// The `id.length` bytes of the string `id` points to, up to its first NUL (what libhdf5's
// conversion to a C string gives). "" for a zero length. Throws InputError(where + ": corrupt
// global heap (...)") naming the collection's address and what is wrong with it.
std::string read_global_heap_string(const FileBytes& file, const FileSizes& sizes, const GlobalHeapId& id,
                                    const std::string& where);

}  // namespace dgq::sim::h5
