#pragma once
// Hugging Face's safetensors format (https://github.com/huggingface/safetensors), read for --model:
//   8 bytes: N, the header's length (little-endian u64); N bytes: a UTF-8 JSON object, name ->
//   {"dtype": "F32", "shape": [768, 2304], "data_offsets": [begin, end]}, plus an optional "__metadata__"
//   object of strings, padded with spaces; then the data, offsets counted from its first byte.
// The file is memory-mapped, never copied; every entry is checked when the file is opened, before any
// tensor is used, and each fault is one InputError naming the file.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "io/files.hpp"

namespace attn {

// The cap on a weights file (io/files): past any GPT-2 (gpt2-xl's is 6.4 GB). The memory budget, which
// counts the mapping, is what bounds a run (docs/errors.md).
inline constexpr FileKind kSafetensorsFile{"the model's weights", std::size_t{64} << 30};

enum class SafeDType { Bool, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, F8_E4M3, F8_E5M2 };
std::string to_string(SafeDType t);  // "F32", as the header spells it
std::size_t element_size(SafeDType t);

struct SafeTensor {
  std::string name;
  SafeDType dtype = SafeDType::F32;
  std::vector<std::size_t> shape;
  const unsigned char* data = nullptr;  // into the mapping (or the bytes parse() keeps)
  std::size_t bytes = 0;

  std::size_t numel() const;
  bool is_float() const;  // F32, F16 or BF16: the dtypes attn converts
  // Element i as float32 (F32, F16 and BF16 only); read with memcpy, so no alignment is assumed.
  float at(std::size_t i) const;
  void to_float(float* out) const;  // all numel() elements
};

class SafetensorsFile {
 public:
  // The length of an opened file's header, as its first 8 bytes say (at most the 100 MiB any is allowed;
  // 0 for a file too short to say), read before the file is mapped.
  static std::size_t header_size(const RegularFile& file);
  // Memory-maps `path` read-only and checks it.
  static SafetensorsFile open(const std::string& path);
  // The same for a file opened and checked already (the size mapped is the size it had then).
  static SafetensorsFile open(const RegularFile& file, const std::string& path);
  // The same checks on bytes in memory (the fuzz target, tests); `name` labels the messages. Keeps them.
  static SafetensorsFile parse(std::string bytes, const std::string& name);

  const SafeTensor* find(const std::string& name) const;  // nullptr when absent
  const std::vector<SafeTensor>& tensors() const { return tensors_; }  // in data-offset order
  const std::string& name() const { return name_; }

  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

 private:
  SafetensorsFile() = default;
  void check(const unsigned char* bytes, std::size_t size);  // fills tensors_

  std::string name_;
  void* map_ = nullptr;  // the mapping (open), or none
  std::size_t map_size_ = 0;
  std::shared_ptr<const std::string> owned_;  // the bytes (parse): on the heap, so tensors' pointers survive a move
  std::vector<SafeTensor> tensors_;
};

// IEEE half and bfloat16 bit patterns as float32.
float half_to_float(unsigned short bits);
float bfloat16_to_float(unsigned short bits);

}  // namespace attn
