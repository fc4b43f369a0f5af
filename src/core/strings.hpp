#pragma once
// Numbers as people read them, shared by lessons, renderers and the benchmark.
#include <cstddef>
#include <string>

namespace attn {

// A double as Python's repr prints it: 0.0, 0.5, 0.25.
std::string py_float(double v);

// 2360064 -> "2,360,064"
std::string with_commas(std::size_t n);

}  // namespace attn
