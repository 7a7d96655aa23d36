#pragma once
// A GGUF file (ggml's model container, versions 2 and 3; ggml/docs/gguf.md) opened read-only:
// its metadata and where each tensor lies. Every count, length and offset is checked against the
// file's size before it is used, so a truncated or hostile file gives one InputError naming the
// file, the key or tensor, and the byte offset; nothing past the end is ever read.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dgq::sim::gguf {

// gguf_type (ggml/include/gguf.h).
enum class ValueType : std::uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

// One metadata value. Scalars fill `integer` and `real` (both, whatever the stored type);
// strings fill `text`; arrays fill `count` and, for arrays of strings, `strings` (the raw
// bytes, not checked as UTF-8), for arrays of numbers `numbers` (each widened to double, exact
// for every type but 64-bit integers beyond 2^53).
struct Value {
  ValueType type = ValueType::u8;
  ValueType element_type = ValueType::u8;  // arrays only
  std::int64_t integer = 0;
  double real = 0;
  std::string text;
  std::uint64_t count = 0;
  std::vector<std::string> strings;
  std::vector<double> numbers;
};

struct TensorInfo {
  std::string name;
  std::vector<std::uint64_t> dims;  // ne[0] first: ne[0] is the row length (contiguous)
  std::uint32_t type = 0;           // ggml_type
  std::uint64_t offset = 0;         // from the start of the data section
};

class File {
 public:
  explicit File(const std::string& path);
  // The file image data[0..size) named `name` in messages (the fuzz target's way in); the bytes
  // must outlive the File.
  File(const std::string& name, const std::uint8_t* data, std::uint64_t size);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& path() const { return path_; }
  std::uint32_t version() const { return version_; }

  const Value* find(const std::string& key) const;
  // The key's value, or an InputError naming the file and the key when it is missing or of
  // another kind (a number where a string belongs).
  std::string string_value(const std::string& key) const;
  std::int64_t integer_value(const std::string& key) const;
  double real_value(const std::string& key) const;
  const std::vector<std::string>& string_array(const std::string& key) const;
  const std::vector<double>& number_array(const std::string& key) const;
  // With a default when the key is absent (still an error when it is there with another kind).
  std::string string_value(const std::string& key, const std::string& fallback) const;
  std::int64_t integer_value(const std::string& key, std::int64_t fallback) const;
  double real_value(const std::string& key, double fallback) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(const std::string& name) const;
  // The tensor's bytes, `bytes` long from its offset; an InputError naming the tensor when they
  // do not lie inside the file.
  const std::uint8_t* tensor_data(const TensorInfo& tensor, std::uint64_t bytes) const;
  // The bytes of the data section (from its aligned start to the end of the file).
  std::uint64_t data_bytes() const { return size_ > data_start_ ? size_ - data_start_ : 0; }

 private:
  std::string path_;
  std::uint32_t version_ = 0;
  const std::uint8_t* base_ = nullptr;
  std::uint64_t size_ = 0;
  bool mapped_ = false;  // base_ is this File's mapping, unmapped by the destructor
  std::uint64_t data_start_ = 0;
  std::map<std::string, Value> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t> tensor_index_;

  void parse();
};

// True when the file at `path` starts with the GGUF magic (false when it cannot be opened).
bool has_gguf_magic(const std::string& path);

}  // namespace dgq::sim::gguf
