#include "dgq/sim/model/gguf_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "dgq/errors.hpp"

namespace dgq::sim::gguf {
namespace {

constexpr std::uint32_t kMaxDims = 4;            // GGML_MAX_DIMS
constexpr std::uint64_t kDefaultAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT

const char* type_name(ValueType t) {
  static const char* const names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const auto i = static_cast<std::uint32_t>(t);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

// Bounds-checked little-endian reads from the mapped file; every failure names what was being
// read and where.
class Cursor {
 public:
  Cursor(const std::uint8_t* base, std::uint64_t size, const std::string& path)
      : base_(base), size_(size), path_(path) {}

  std::uint64_t offset() const { return at_; }
  std::uint64_t remaining() const { return size_ - at_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(one_line(path_ + ": GGUF " + what + " (byte " + std::to_string(at_) + ")"));
  }

  const std::uint8_t* take(std::uint64_t bytes, const std::string& what) {
    if (bytes > remaining()) fail(what + ": the file ends " + std::to_string(remaining()) + " bytes later");
    const std::uint8_t* p = base_ + at_;
    at_ += bytes;
    return p;
  }

  template <class T>
  T scalar(const std::string& what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what), sizeof(T));
    return v;
  }

  std::string string(const std::string& what) {
    const auto length = scalar<std::uint64_t>(what + " length");
    const std::uint8_t* p = take(length, what);
    return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(length));
  }

 private:
  const std::uint8_t* base_;
  std::uint64_t size_;
  std::uint64_t at_ = 0;
  const std::string& path_;
};

std::uint64_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::boolean: return 1;
    case ValueType::u16:
    case ValueType::i16: return 2;
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::f32: return 4;
    case ValueType::u64:
    case ValueType::i64:
    case ValueType::f64: return 8;
    default: return 0;
  }
}

// A float's integer part, 0 when it has none in int64's range (NaN, infinities, beyond 2^63):
// converting those is undefined behaviour. integer_value() refuses float keys anyway.
std::int64_t truncated(double x) {
  return std::isfinite(x) && x > -9.2e18 && x < 9.2e18 ? static_cast<std::int64_t>(x) : 0;
}

void read_scalar(Cursor& in, ValueType t, Value& v, const std::string& what) {
  switch (t) {
    case ValueType::u8:
      v.integer = in.scalar<std::uint8_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::i8:
      v.integer = in.scalar<std::int8_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::boolean:
      v.integer = in.scalar<std::uint8_t>(what) != 0;
      v.real = double(v.integer);
      return;
    case ValueType::u16:
      v.integer = in.scalar<std::uint16_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::i16:
      v.integer = in.scalar<std::int16_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::u32:
      v.integer = in.scalar<std::uint32_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::i32:
      v.integer = in.scalar<std::int32_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::i64:
      v.integer = in.scalar<std::int64_t>(what);
      v.real = double(v.integer);
      return;
    case ValueType::u64: {
      const auto u = in.scalar<std::uint64_t>(what);
      v.integer = u > std::uint64_t(INT64_MAX) ? INT64_MAX : std::int64_t(u);
      v.real = double(u);
      return;
    }
    // float32 widened to double exactly (as Python's float() of the stored value).
    case ValueType::f32:
      v.real = in.scalar<float>(what);
      v.integer = truncated(v.real);
      return;
    case ValueType::f64:
      v.real = in.scalar<double>(what);
      v.integer = truncated(v.real);
      return;
    default: in.fail(what + ": value type " + std::to_string(std::uint32_t(t)) + " is not a GGUF type");
  }
}

Value read_value(Cursor& in, const std::string& key) {
  const std::string what = "metadata key " + key;
  Value v;
  v.type = static_cast<ValueType>(in.scalar<std::uint32_t>(what + ": type"));
  if (v.type == ValueType::string) {
    v.text = in.string(what);
  } else if (v.type == ValueType::array) {
    v.element_type = static_cast<ValueType>(in.scalar<std::uint32_t>(what + ": element type"));
    v.count = in.scalar<std::uint64_t>(what + ": element count");
    if (v.element_type == ValueType::string) {
      // Each string takes at least its 8-byte length: a count the file cannot hold is refused
      // before anything is reserved.
      if (v.count > in.remaining() / 8)
        in.fail(what + ": " + std::to_string(v.count) + " strings do not fit in the file");
      v.strings.reserve(static_cast<std::size_t>(v.count));
      for (std::uint64_t i = 0; i < v.count; ++i)
        v.strings.push_back(in.string(what + ": element " + std::to_string(i)));
    } else {
      const std::uint64_t size = scalar_size(v.element_type);
      if (size == 0)
        in.fail(what + ": array of " + type_name(v.element_type) + " (type " +
                std::to_string(std::uint32_t(v.element_type)) + ") is not supported");
      if (v.count > in.remaining() / size)
        in.fail(what + ": " + std::to_string(v.count) + " elements do not fit in the file");
      v.numbers.reserve(static_cast<std::size_t>(v.count));
      Value element;
      for (std::uint64_t i = 0; i < v.count; ++i) {
        read_scalar(in, v.element_type, element, what);
        v.numbers.push_back(element.real);
      }
    }
  } else {
    read_scalar(in, v.type, v, what);
  }
  return v;
}

bool is_numeric(ValueType t) { return scalar_size(t) != 0; }

}  // namespace

File::File(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw InputError(path + ": cannot map the file: " + std::strerror(errno));
    base_ = static_cast<const std::uint8_t*>(p);
    mapped_ = true;
  } else {
    ::close(fd);
  }
  try {
    parse();
  } catch (...) {
    if (mapped_) ::munmap(const_cast<std::uint8_t*>(base_), static_cast<std::size_t>(size_));
    throw;
  }
}

File::File(const std::string& name, const std::uint8_t* data, std::uint64_t size)
    : path_(name), base_(data), size_(size) {
  parse();
}

File::~File() {
  if (mapped_) ::munmap(const_cast<std::uint8_t*>(base_), static_cast<std::size_t>(size_));
}

void File::parse() {
  Cursor in(base_, size_, path_);
  const std::uint8_t* magic = in.take(4, "magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) in.fail("magic: not a GGUF file");
  version_ = in.scalar<std::uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    in.fail("version " + std::to_string(version_) + ": dgq reads GGUF versions 2 and 3");
  const auto tensor_count = in.scalar<std::uint64_t>("tensor count");
  const auto kv_count = in.scalar<std::uint64_t>("metadata key count");
  // A key takes at least 12 bytes (length and type), a tensor entry at least 24.
  if (kv_count > in.remaining() / 12) in.fail(std::to_string(kv_count) + " metadata keys do not fit in the file");
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::string key = in.string("metadata key " + std::to_string(i) + " name");
    Value v = read_value(in, key);
    if (!metadata_.emplace(key, std::move(v)).second) in.fail("metadata key " + key + " appears twice");
  }
  if (tensor_count > in.remaining() / 24) in.fail(std::to_string(tensor_count) + " tensors do not fit in the file");
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    TensorInfo t;
    t.name = in.string("tensor " + std::to_string(i) + " name");
    const std::string what = "tensor " + t.name;
    const auto n_dims = in.scalar<std::uint32_t>(what + ": dimension count");
    if (n_dims == 0 || n_dims > kMaxDims)
      in.fail(what + ": " + std::to_string(n_dims) + " dimensions, expected 1 to " + std::to_string(kMaxDims));
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto ne = in.scalar<std::uint64_t>(what + ": dimension " + std::to_string(d));
      if (ne == 0 || ne > (std::uint64_t(1) << 40))
        in.fail(what + ": dimension " + std::to_string(d) + " is " + std::to_string(ne));
      t.dims.push_back(ne);
    }
    t.type = in.scalar<std::uint32_t>(what + ": type");
    t.offset = in.scalar<std::uint64_t>(what + ": data offset");
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) in.fail(what + " appears twice");
    tensors_.push_back(std::move(t));
  }
  std::uint64_t alignment = kDefaultAlignment;
  if (const Value* a = find("general.alignment")) {
    if (a->type != ValueType::u32 || a->integer == 0 || (a->integer & (a->integer - 1)) != 0)
      in.fail("metadata key general.alignment: must be a power of two (uint32), found " + std::to_string(a->integer));
    alignment = static_cast<std::uint64_t>(a->integer);
  }
  data_start_ = (in.offset() + alignment - 1) / alignment * alignment;
  for (const TensorInfo& t : tensors_)
    if (t.offset % alignment != 0)
      in.fail("tensor " + t.name + ": data offset " + std::to_string(t.offset) +
              " is not a multiple of the alignment " + std::to_string(alignment));
}

const Value* File::find(const std::string& key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

namespace {

[[noreturn]] void wrong_kind(const std::string& path, const std::string& key, const Value& v, const char* expected) {
  throw InputError(one_line(path + ": GGUF metadata key " + key + ": " + type_name(v.type) + ", expected " + expected));
}

const Value& required(const File& f, const std::string& key) {
  const Value* v = f.find(key);
  if (v == nullptr) throw InputError(one_line(f.path() + ": GGUF metadata key " + key + " missing"));
  return *v;
}

}  // namespace

std::string File::string_value(const std::string& key) const {
  const Value& v = required(*this, key);
  if (v.type != ValueType::string) wrong_kind(path_, key, v, "a string");
  return v.text;
}

std::int64_t File::integer_value(const std::string& key) const {
  const Value& v = required(*this, key);
  if (!is_numeric(v.type) || v.type == ValueType::f32 || v.type == ValueType::f64)
    wrong_kind(path_, key, v, "an integer");
  return v.integer;
}

double File::real_value(const std::string& key) const {
  const Value& v = required(*this, key);
  if (!is_numeric(v.type)) wrong_kind(path_, key, v, "a number");
  return v.real;
}

const std::vector<std::string>& File::string_array(const std::string& key) const {
  const Value& v = required(*this, key);
  if (v.type != ValueType::array || v.element_type != ValueType::string)
    wrong_kind(path_, key, v, "an array of strings");
  return v.strings;
}

const std::vector<double>& File::number_array(const std::string& key) const {
  const Value& v = required(*this, key);
  if (v.type != ValueType::array || !is_numeric(v.element_type)) wrong_kind(path_, key, v, "an array of numbers");
  return v.numbers;
}

std::string File::string_value(const std::string& key, const std::string& fallback) const {
  return find(key) == nullptr ? fallback : string_value(key);
}

std::int64_t File::integer_value(const std::string& key, std::int64_t fallback) const {
  return find(key) == nullptr ? fallback : integer_value(key);
}

double File::real_value(const std::string& key, double fallback) const {
  return find(key) == nullptr ? fallback : real_value(key);
}

const TensorInfo* File::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const std::uint8_t* File::tensor_data(const TensorInfo& t, std::uint64_t bytes) const {
  const std::uint64_t available = data_bytes();
  if (t.offset > available || bytes > available - t.offset)
    throw InputError(one_line(path_ + ": GGUF tensor " + t.name + ": " + std::to_string(bytes) +
                              " bytes at data offset " + std::to_string(t.offset) + " run past the end of the file (" +
                              std::to_string(available) + " data bytes)"));
  return base_ + data_start_ + t.offset;
}

bool has_gguf_magic(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char magic[4] = {};
  const bool gguf = ::read(fd, magic, 4) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
  ::close(fd);
  return gguf;
}

}  // namespace dgq::sim::gguf
