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

// A cell's number in at most 5 characters: 0.55, -1.25, 12.3, 1e+04.
std::string heat_number(float v);

// `cell` on the viridis colour at x in [0, 1] (ANSI: 256-colour, or 24-bit with style.truecolor), with black
// or white text, whichever reads better; `cell` itself when colour is off.
std::string ansi_cell(const std::string& cell, double x, const TextStyle& style);

// Heatmaps of a (rows, keys), (b, rows, keys) or (b, h, rows, keys) tensor: every head of the first batch
// element. With `of_tokens`, rows are the queries at positions first_query.. and columns the keys from
// position 0, labelled by `tokens`; otherwise rows and columns are labelled by position. A causal map
// marks the keys after each query's position. Returns "" for shapes that are not such a matrix and a
// one-line note past kHeatmapMaxTokens keys.
std::string heatmaps(const AnyTensor& t, const std::vector<std::string>& tokens, bool causal, bool of_tokens,
                     const TextStyle& style, std::size_t first_query = 0);

}  // namespace attn
