#include "model/safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/strings.hpp"
#include "io/files.hpp"
#include "core/terminal_text.hpp"

namespace attn {

namespace {

constexpr std::size_t kMaxHeaderBytes = std::size_t{100} << 20;  // real headers are tens of KiB

struct DTypeName {
  const char* name;
  SafeDType dtype;
  std::size_t size;
};
constexpr DTypeName kDTypes[] = {
    {"BOOL", SafeDType::Bool, 1}, {"U8", SafeDType::U8, 1},     {"I8", SafeDType::I8, 1},
    {"I16", SafeDType::I16, 2},   {"U16", SafeDType::U16, 2},   {"F16", SafeDType::F16, 2},
    {"BF16", SafeDType::BF16, 2}, {"I32", SafeDType::I32, 4},   {"U32", SafeDType::U32, 4},
    {"F32", SafeDType::F32, 4},   {"F64", SafeDType::F64, 8},   {"I64", SafeDType::I64, 8},
    {"U64", SafeDType::U64, 8},   {"F8_E4M3", SafeDType::F8_E4M3, 1}, {"F8_E5M2", SafeDType::F8_E5M2, 1}};

const DTypeName& info(SafeDType t) {
  for (const auto& d : kDTypes)
    if (d.dtype == t) return d;
  throw std::logic_error("unknown SafeDType");
}

}  // namespace

std::string to_string(SafeDType t) { return info(t).name; }
std::size_t element_size(SafeDType t) { return info(t).size; }

// By hand: neither the C++ standard library of GCC 12 nor the libraries attn builds on (xtensor has no
// half type) convert IEEE half or bfloat16, and the conversion is a few lines of bit manipulation.
float half_to_float(unsigned short h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, or NaN with its payload
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // normal: rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: mantissa * 2^-24, exact in float32
    float value = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
    std::memcpy(&bits, &value, 4);
    bits |= sign;
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

float bfloat16_to_float(unsigned short b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;  // bfloat16 is float32's upper half
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

std::size_t SafeTensor::numel() const {
  std::size_t n = 1;
  for (const std::size_t d : shape) n *= d;  // checked not to overflow when the file was opened
  return n;
}

bool SafeTensor::is_float() const {
  return dtype == SafeDType::F32 || dtype == SafeDType::F16 || dtype == SafeDType::BF16;
}

float SafeTensor::at(std::size_t i) const {
  switch (dtype) {
    case SafeDType::F32: {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    case SafeDType::F16:
    case SafeDType::BF16: {
      unsigned short b;
      std::memcpy(&b, data + 2 * i, 2);
      return dtype == SafeDType::F16 ? half_to_float(b) : bfloat16_to_float(b);
    }
    default:
      throw std::logic_error(name + " is not a float tensor");
  }
}

void SafeTensor::to_float(float* out) const {
  const std::size_t n = numel();
  if (n == 0) return;  // an empty tensor: out may be null, and memcpy's pointers must never be
  if (dtype == SafeDType::F32) {
    std::memcpy(out, data, 4 * n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = at(i);
}

std::size_t SafetensorsFile::header_size(const RegularFile& file) {
  unsigned char length[8];
  if (file.size < 8 || ::pread(file.fd.get(), length, 8, 0) != 8) return 0;
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | length[i];  // little-endian
  return static_cast<std::size_t>(std::min<std::uint64_t>(header, kMaxHeaderBytes));  // more is refused on open
}

SafetensorsFile SafetensorsFile::open(const std::string& path) { return open(open_regular_file(path, kSafetensorsFile), path); }

SafetensorsFile SafetensorsFile::open(const RegularFile& file, const std::string& path) {
  SafetensorsFile f;
  f.name_ = path;
  const std::size_t size = file.size;
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd.get(), 0);
    if (map == MAP_FAILED) throw InputError(path + ": cannot map: " + std::strerror(errno));
    f.map_ = map;
    f.map_size_ = size;
  }
  f.check(static_cast<const unsigned char*>(f.map_), size);
  return f;
}

SafetensorsFile SafetensorsFile::parse(std::string bytes, const std::string& name) {
  SafetensorsFile f;
  f.name_ = name;
  f.owned_ = std::make_shared<const std::string>(std::move(bytes));
  f.check(reinterpret_cast<const unsigned char*>(f.owned_->data()), f.owned_->size());
  return f;
}

void SafetensorsFile::check(const unsigned char* bytes, std::size_t size) {
  const std::string& file = name_;
  const auto fail = [&](const std::string& what) { throw InputError(file + ": " + what); };
  if (size < 8) fail("shorter than the 8-byte header length (" + count_of(size, "byte") + "): not a safetensors file");
  std::uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | bytes[i];  // little-endian
  if (header_length > size - 8)
    fail("the header length " + std::to_string(header_length) + " is past the end of the file (" +
         count_of(size - 8, "byte") + " " + (size - 8 == 1 ? "follows" : "follow") +
         " it): truncated, or not a safetensors file");
  if (header_length > kMaxHeaderBytes)
    fail("a header of " + std::to_string(header_length) + " bytes, more than the 100 MiB any model needs");
  const std::string header(reinterpret_cast<const char*>(bytes + 8), static_cast<std::size_t>(header_length));
  if (!valid_utf8(header)) fail("the header is not UTF-8");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(header);
  } catch (const nlohmann::json::parse_error& e) {
    fail("the header is not JSON (at byte " + std::to_string(e.byte) + " of it)");
  } catch (const nlohmann::json::out_of_range&) {  // out_of_range.406, e.g. 1e999 (found by the fuzzer)
    fail("the header holds a number too large for any JSON reader");
  }
  if (!doc.is_object()) fail("the header is not a JSON object of tensors");
  const std::size_t data_size = size - 8 - static_cast<std::size_t>(header_length);
  const unsigned char* data = bytes + 8 + header_length;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // [begin, end) per tensor, for the overlap check
  for (const auto& [key, entry] : doc.items()) {
    const std::string name = visible(key);
    if (key == "__metadata__") {
      if (!entry.is_object()) fail("__metadata__ is not an object of strings");
      for (const auto& [k, v] : entry.items())
        if (!v.is_string()) fail("__metadata__ \"" + visible(k) + "\" is not a string");
      continue;
    }
    if (!entry.is_object()) fail("tensor " + name + " is not an object with dtype, shape and data_offsets");
    const auto dtype = entry.find("dtype"), shape = entry.find("shape"), offsets = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string()) fail("tensor " + name + " has no dtype string");
    if (shape == entry.end() || !shape->is_array()) fail("tensor " + name + " has no shape array");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      fail("tensor " + name + "'s data_offsets are not two whole numbers [begin, end]");
    SafeTensor t;
    t.name = key;
    const std::string dtype_name = dtype->get<std::string>();
    const auto known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                    [&](const DTypeName& d) { return dtype_name == d.name; });
    if (known == std::end(kDTypes)) fail("tensor " + name + " has an unknown dtype \"" + visible(dtype_name) + "\"");
    t.dtype = known->dtype;
    std::size_t numel = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned()) fail("tensor " + name + "'s shape is not a list of whole numbers");
      const std::size_t dim = d.get<std::size_t>();
      if (__builtin_mul_overflow(numel, dim, &numel)) fail("tensor " + name + "'s shape has more elements than fit in memory");
      t.shape.push_back(dim);
    }
    std::size_t nbytes = 0;
    if (__builtin_mul_overflow(numel, known->size, &nbytes)) fail("tensor " + name + "'s shape has more bytes than fit in memory");
    const std::uint64_t begin = (*offsets)[0].get<std::uint64_t>(), end = (*offsets)[1].get<std::uint64_t>();
    if (begin > end) fail("tensor " + name + "'s data_offsets begin after they end");
    if (end > data_size)
      fail("tensor " + name + "'s data ends at byte " + std::to_string(end) + ", past the " + count_of(data_size, "byte") +
           " of data: truncated");
    if (end - begin != nbytes)
      fail("tensor " + name + " has " + count_of(end - begin, "byte") + " where its dtype and shape need " +
           std::to_string(nbytes));
    // No alignment is required: the format does not ask for it and real checkpoints are not always aligned
    // (llama.cpp PR #18291, safetensors issue #695); values are read with memcpy.
    t.data = data + begin;
    t.bytes = nbytes;
    ranges.push_back({static_cast<std::size_t>(begin), static_cast<std::size_t>(end)});
    tensors_.push_back(std::move(t));
  }
  std::vector<std::size_t> order(tensors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranges[a] < ranges[b]; });
  // One sweep in offset order: a non-empty range overlaps an earlier one exactly when it begins before the
  // furthest end reached so far. Empty tensors (no bytes) overlap nothing and are passed over, so they
  // cannot hide an overlap between the tensors on either side of them.
  std::size_t reach = 0, reached_by = order.size();  // the furthest end, and the tensor that ends there
  for (const std::size_t k : order) {
    const auto& [begin, end] = ranges[k];
    if (begin == end) continue;
    if (reached_by != order.size() && begin < reach)
      fail("tensors " + visible(tensors_[reached_by].name) + " and " + visible(tensors_[k].name) + " overlap in the data");
    if (end > reach) {
      reach = end;
      reached_by = k;
    }
  }
  std::vector<SafeTensor> sorted;
  for (const std::size_t i : order) sorted.push_back(std::move(tensors_[i]));
  tensors_ = std::move(sorted);
}

const SafeTensor* SafetensorsFile::find(const std::string& name) const {
  for (const SafeTensor& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept
    : name_(std::move(o.name_)), map_(std::exchange(o.map_, nullptr)), map_size_(std::exchange(o.map_size_, 0)),
      owned_(std::move(o.owned_)), tensors_(std::move(o.tensors_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& o) noexcept {
  if (this != &o) {
    if (map_ != nullptr) ::munmap(map_, map_size_);
    name_ = std::move(o.name_);
    map_ = std::exchange(o.map_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    owned_ = std::move(o.owned_);
    tensors_ = std::move(o.tensors_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
}

}  // namespace attn
