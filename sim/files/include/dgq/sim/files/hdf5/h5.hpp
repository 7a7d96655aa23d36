#pragma once
// Thin RAII layer over the HDF5 C API, shared by the trace reader/writer, the compressed-file
// format and (free to reuse) the replay/sweep results files.
//
// - Handle owns one hid_t and closes it with the matching H5?close, so no id leaks on throw.
// - HDF5's automatic error-stack printing is silenced (silence_hdf5_errors(), called by every
//   helper here); failures become dgq::InputError("<file>: <dataset>: <what>: <HDF5's
//   innermost message>") via check()/fail(), so the CLI prints one clear line.
// - Attribute and dataset helpers implement the conventions of docs/trace-format.md:
//   strings are written as variable-length UTF-8 and read in either form; integers are
//   written as int64 and read from any integer type (and h5py's bool enum); fp16 is the IEEE
//   half layout h5py uses for numpy float16.
//
// Defined one concept per file: h5_errors.cpp, handle.cpp, files.cpp, groups.cpp,
// attributes.cpp, strings.cpp (variable-length ones through variable_length_strings.cpp and
// global_heap.cpp, not through libhdf5's global heap), datatypes.cpp, datasets.cpp; helpers they
// share are in h5_shared.hpp.
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq::sim::h5 {

// Turns off HDF5's printing of error stacks to stderr (idempotent, cheap).
void silence_hdf5_errors();

// The innermost message of HDF5's current error stack ("" if empty), then clears it.
std::string take_error_message();

// Throws dgq::InputError(context + ": " + HDF5's message).
[[noreturn]] void fail(const std::string& context);

// Returns id, or fails with context when id < 0.
hid_t check(hid_t id, const std::string& context);
void check_status(herr_t status, const std::string& context);

// Owns one HDF5 identifier. Kind picks the close function.
class Handle {
 public:
  enum class Kind { file, group, dataset, dataspace, datatype, attribute, plist, object };
  Handle() = default;
  Handle(hid_t id, Kind kind) : id_(id), kind_(kind) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), kind_(o.kind_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; returns false (and records HDF5's message) when the close failed, which
  // for a file means its data may not have reached the disk.
  bool close();
  void reset() { (void)close(); }
  // Forgets the id without closing it (see close_file()).
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Kind kind_ = Kind::file;
};

// ---- Files ------------------------------------------------------------------------------
// Opens read-only. Missing file -> "PATH: no such file"; not HDF5 or truncated ->
// "PATH: not an HDF5 file or truncated". Every file dgq reads comes through here, so this is
// where its metadata is first walked in a child process (isolated_metadata_check.hpp):
// metadata that crashes or stalls libhdf5 -> "PATH: damaged HDF5 metadata (...)".
Handle open_file_readonly(const std::string& path);
// Creates (truncating) a file for writing.
Handle create_file(const std::string& path);
// Opens COPY for reading and writing, unchecked: COPY must be a byte copy, just made, of
// ORIGINAL, a file this process wrote itself (is_written_here(ORIGINAL), asserted by a throw).
// Appending to such a copy and renaming it over ORIGINAL costs a byte copy where rewriting
// every object costs a read and a write of each.
Handle open_own_copy_readwrite(const std::string& copy, const std::string& original);
// Closes a file written by this process. A failed close (disk full, I/O error) throws
// "<context>: closing the file failed (HDF5: ...)"; the id is then kept open on purpose
// (libhdf5 1.10 crashes at exit in H5F__close_cb when a file whose close failed is closed
// again), so the process must not reuse the file. One line, no newline in the message.
void close_file(Handle& file, const std::string& context);

// While alive, open_file_readonly(name) opens `size` bytes at `data` (an HDF5 file image in
// memory) instead of the file `name` on disk: the fuzz targets run the real readers on bytes.
// One image per thread; data must outlive this object.
class ScopedFileImage {
 public:
  ScopedFileImage(std::string name, const void* data, std::size_t size);
  ~ScopedFileImage();
  ScopedFileImage(const ScopedFileImage&) = delete;
  ScopedFileImage& operator=(const ScopedFileImage&) = delete;
};

bool link_exists(hid_t loc, const std::string& path);  // every component checked
Handle open_group(hid_t loc, const std::string& name, const std::string& context);
Handle create_group(hid_t loc, const std::string& name, const std::string& context);
Handle open_dataset(hid_t loc, const std::string& name, const std::string& context);

// ---- Attributes ----------------------------------------------------------------------------
bool has_attribute(hid_t obj, const std::string& name);
// Throws "<context>: attribute 'name' is missing" / "... is not a string" etc.
std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& context);
std::int64_t read_int_attribute(hid_t obj, const std::string& name, const std::string& context);
void write_string_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_int_attribute(hid_t obj, const std::string& name, std::int64_t value);
// One-dimensional int64 attributes (read from any integer type).
void write_int_array_attribute(hid_t obj, const std::string& name, const std::vector<std::int64_t>& values);
std::vector<std::int64_t> read_int_array_attribute(hid_t obj, const std::string& name, const std::string& context);

// ---- Datatypes -----------------------------------------------------------------------------
// The IEEE half type (sign 15, exponent 10..14, mantissa 0..9, bias 15), little-endian.
Handle half_type();
// The file type of a dgq float dtype (f16: half_type(); f32: IEEE F32LE; bf16: U16LE, its
// bits, which trace_layout marks with a dataset attribute dtype = "bf16").
Handle float_file_type(DType dtype);
// Classifies a dataset's stored type as one of dgq's float dtypes; nullopt otherwise.
std::optional<DType> float_dtype_of(hid_t type);
bool is_integer_type(hid_t type);
// "integer (4 bytes)", "float (8 bytes)", "string", ... for error messages.
std::string describe_type(hid_t type);

// ---- Datasets ------------------------------------------------------------------------------
std::vector<hsize_t> dataset_shape(hid_t dataset);
// Checks, before anything is allocated for it, that a dataset's shape is backed by bytes in
// the file: the element count and byte size do not overflow and stay below 2^40 bytes; its
// storage lies inside the file; unfiltered data has at least its logical size stored and
// filtered (deflate) data at most 1100x expansion. Returns the element count.
// Throws InputError(context + ": ...") naming the shape and the stored bytes.
std::uint64_t check_stored_extent(hid_t dataset, const std::string& context);
// a * b, or InputError(context + ": " + what + " overflows") when it does not fit 63 bits.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& context, const char* what);
std::string shape_string(const std::vector<hsize_t>& shape);  // "[8, 1024, 128]"

// Creates a dataset of the given shape and file type; chunked (chunk = the given chunk dims,
// clipped to the shape) with shuffle + deflate level 4 when no dimension is 0.
Handle create_dataset(hid_t loc, const std::string& name, hid_t file_type, const std::vector<hsize_t>& shape,
                      const std::vector<hsize_t>& chunk, const std::string& context);
// Writes/reads a whole dataset from/to memory of the given memory type.
void write_all(hid_t dataset, hid_t mem_type, const void* data, const std::string& context);
void read_all(hid_t dataset, hid_t mem_type, void* data, const std::string& context);

// Convenience: one-dimensional datasets of native integers.
void write_vector(hid_t loc, const std::string& name, const std::vector<std::int32_t>& v, const std::string& context);
void write_vector(hid_t loc, const std::string& name, const std::vector<std::uint8_t>& v, const std::string& context);
// Reads a rank-1 integer dataset of any integer type; the context names file and dataset.
std::vector<std::int64_t> read_int_vector(hid_t loc, const std::string& name, const std::string& context);
// Scalar string datasets (fixed or variable length on read; variable-length UTF-8 on write).
void write_string_dataset(hid_t loc, const std::string& name, const std::string& value, const std::string& context);
std::string read_string_dataset(hid_t loc, const std::string& name, const std::string& context);

}  // namespace dgq::sim::h5
