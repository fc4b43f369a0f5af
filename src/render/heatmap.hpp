#pragma once
// A weight matrix as a heatmap: token labels on rows (queries) and columns (keys), the number in every
// cell, masked cells marked with a symbol, a min -> max legend, and a colour-blind-safe sequential
// palette (viridis) when colour is on.
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "render/style.hpp"

namespace attn {

inline constexpr std::size_t kHeatmapMaxTokens = 16;

// Heatmaps of a (n, n), (b, n, n) or (b, h, n, n) tensor: every head of the first batch element. With
// `of_tokens`, rows are queries and columns keys, labelled by `tokens`; otherwise rows and columns are
// labelled by position. Returns "" for other shapes and a one-line note past kHeatmapMaxTokens.
std::string heatmaps(const AnyTensor& t, const std::vector<std::string>& tokens, bool causal, bool of_tokens,
                     const TextStyle& style);

}  // namespace attn
