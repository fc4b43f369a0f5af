#include "render/torch_print.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

constexpr int kPrecision = 4;
constexpr std::size_t kThreshold = 1000;
constexpr std::size_t kEdgeItems = 3;
constexpr std::size_t kLineWidth = 80;
const std::string kPrefix = "tensor(";

std::string printf_double(const char* format, double value) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, kPrecision, value);
  return buf;
}

// "%.*f" / "%.*e" / "%.0f" as Python's format() gives them: NaN is always "nan", never "-nan".
std::string fixed(double v) { return std::isnan(v) ? "nan" : printf_double("%.*f", v); }
std::string scientific(double v) { return std::isnan(v) ? "nan" : printf_double("%.*e", v); }
std::string whole(double v) {
  if (std::isnan(v)) return "nan";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// _Formatter: one number format for the whole tensor, chosen from the finite non-zero values shown.
class Formatter {
 public:
  Formatter(const std::vector<float>& shown, bool integer_dtype) : integer_dtype_(integer_dtype) {
    if (integer_dtype_) {  // not a floating dtype: str(value), right-aligned to the widest
      for (float v : shown) width_ = std::max(width_, whole(v).size());
      return;
    }
    std::vector<double> vals;
    for (float v : shown)
      if (std::isfinite(v) && v != 0.0f) vals.push_back(static_cast<double>(v));
    if (vals.empty()) return;  // all zeros or non-finite: integer mode, width 1
    double lo = std::fabs(vals.front()), hi = lo;
    for (double v : vals) {
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
    }
    int_mode_ = std::all_of(vals.begin(), vals.end(), [](double v) { return v == std::ceil(v); });
    if (int_mode_) {
      sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8;
      for (double v : vals) width_ = std::max(width_, sci_mode_ ? scientific(v).size() : whole(v).size() + 1);
    } else {
      sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
      for (double v : vals) width_ = std::max(width_, sci_mode_ ? scientific(v).size() : fixed(v).size());
    }
  }

  std::size_t width() const { return width_; }

  std::string format(float value) const {
    const double v = static_cast<double>(value);
    std::string s;
    if (integer_dtype_) {
      s = whole(v);
    } else if (sci_mode_) {
      s = scientific(v);
    } else if (int_mode_) {
      s = whole(v);
      if (std::isfinite(v)) s += ".";
    } else {
      s = fixed(v);
    }
    return s.size() < width_ ? std::string(width_ - s.size(), ' ') + s : s;
  }

 private:
  bool integer_dtype_ = false;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
};

// A view of the tensor from one flat offset: the dimensions still to print and their strides.
struct Sub {
  const float* data;
  const std::size_t* shape;
  const std::size_t* strides;
  std::size_t dim;  // how many dimensions are left

  Sub at(std::size_t i) const { return Sub{data + i * strides[0], shape + 1, strides + 1, dim - 1}; }
};

// The indices of one dimension that are shown: all, or the first and last kEdgeItems.
std::vector<std::size_t> shown_indices(std::size_t size, bool summarize) {
  std::vector<std::size_t> idx;
  if (summarize && size > 2 * kEdgeItems) {
    for (std::size_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    for (std::size_t i = size - kEdgeItems; i < size; ++i) idx.push_back(i);
  } else {
    for (std::size_t i = 0; i < size; ++i) idx.push_back(i);
  }
  return idx;
}

// get_summarized_data: the values a summarised print shows, which alone choose the format.
void collect_shown(const Sub& t, bool summarize, std::vector<float>& out) {
  if (t.dim == 0) {
    out.push_back(*t.data);
    return;
  }
  for (std::size_t i : shown_indices(t.shape[0], summarize)) collect_shown(t.at(i), summarize, out);
}

std::string vector_str(const Sub& t, std::size_t indent, bool summarize, const Formatter& fmt) {
  const std::size_t per_line = std::max<std::size_t>(1, (kLineWidth - std::min(indent, kLineWidth)) / (fmt.width() + 2));
  std::vector<std::string> items;
  const std::size_t n = t.shape[0];
  if (summarize && n > 2 * kEdgeItems) {
    for (std::size_t i = 0; i < kEdgeItems; ++i) items.push_back(fmt.format(t.data[i * t.strides[0]]));
    items.emplace_back(" ...");
    for (std::size_t i = n - kEdgeItems; i < n; ++i) items.push_back(fmt.format(t.data[i * t.strides[0]]));
  } else {
    for (std::size_t i = 0; i < n; ++i) items.push_back(fmt.format(t.data[i * t.strides[0]]));
  }
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
    out += items[i];
  }
  return out + "]";
}

std::string tensor_str(const Sub& t, std::size_t indent, bool summarize, const Formatter& fmt) {
  if (t.dim == 0) return fmt.format(*t.data);
  if (t.dim == 1) return vector_str(t, indent, summarize, fmt);
  std::vector<std::string> slices;
  const std::size_t n = t.shape[0];
  const bool cut = summarize && n > 2 * kEdgeItems;
  for (std::size_t i : shown_indices(n, summarize)) {
    if (cut && i == n - kEdgeItems) slices.emplace_back("...");
    slices.push_back(tensor_str(t.at(i), indent + 1, summarize, fmt));
  }
  const std::string sep = "," + std::string(t.dim - 1, '\n') + std::string(indent + 1, ' ');
  std::string out = "[";
  for (std::size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
  return out + "]";
}

}  // namespace

std::string torch_str(const AnyTensor& tensor, bool integer) {
  const AnyTensor t = tensor;  // a contiguous row-major copy
  const std::vector<std::size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<std::size_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];

  if (t.size() == 0) {
    // An empty tensor prints as [] and, unless it is 1-d, names its size.
    std::string out = kPrefix + "[]";
    if (shape.size() != 1) {
      out += ", size=(";
      for (std::size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
      out += ")";
    }
    return out + ")";
  }

  const Sub whole_tensor{t.data(), shape.data(), strides.data(), shape.size()};
  const bool summarize = t.size() > kThreshold;
  std::vector<float> shown;
  collect_shown(whole_tensor, summarize, shown);
  const Formatter fmt(shown, integer);
  return kPrefix + tensor_str(whole_tensor, kPrefix.size(), summarize, fmt) + ")";
}

std::string torch_size(const AnyTensor& t) {
  std::string out = "torch.Size([";
  for (std::size_t d = 0; d < t.dimension(); ++d) out += (d ? ", " : "") + std::to_string(t.shape()[d]);
  return out + "])";
}

}  // namespace attn
