#pragma once
// The tensor types every part of attn shares. Computations use fixed-rank xt::xtensor<float, N>
// (never `auto` holding an expression over a temporary); a Step keeps its result as a dynamic-rank
// xt::xarray<float>, which is what the renderers take.
#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

namespace attn {

using Scalar = xt::xtensor<float, 0>;   // ()
using Vector = xt::xtensor<float, 1>;   // (n,)
using Matrix = xt::xtensor<float, 2>;   // (rows, cols)
using Tensor3 = xt::xtensor<float, 3>;  // (b, num_tokens, d)
using Tensor4 = xt::xtensor<float, 4>;  // (b, num_heads, num_tokens, head_dim) and the like
using AnyTensor = xt::xarray<float>;    // rank 0-4, as stored in a Step

using Shape = std::vector<std::size_t>;

}  // namespace attn
