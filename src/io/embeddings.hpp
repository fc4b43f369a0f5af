#pragma once
// Loading the token embeddings every lesson starts from: the book's six tokens (data/journey.json)
// or a student's own file, JSON or CSV.
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/tensor.hpp"

namespace attn {

struct Inputs {
  std::vector<std::string> tokens;  // one label per row; "x1".."xN" when the file names none
  Matrix embeddings;                // (num_tokens, d_in)
  std::string source;               // where they came from, as shown to the user

  std::size_t num_tokens() const { return embeddings.shape(0); }
  std::size_t d_in() const { return embeddings.shape(1); }
};

// The bundled embeddings of "Your journey starts with one step": looked up in $ATTN_DATA_DIR, next to
// the installed executable (../share/attn), the install prefix, then the source tree.
std::string default_embeddings_path();

// Reads `path`; a name ending in .csv is read as CSV, anything else as JSON.
Inputs load_embeddings(const std::string& path);

// JSON: {"tokens": ["Your", ...] (optional), "embeddings": [[0.43, 0.15, 0.89], ...]}, or just the
// array of rows. `name` labels error messages.
Inputs parse_embeddings_json(const std::string& text, const std::string& name);

// CSV: one row per token, comma-separated numbers, optionally preceded by a first column of token
// text (recognised when the first cell of the first row is not a number). Blank lines and lines
// starting with '#' are skipped; fields may be double-quoted.
Inputs parse_embeddings_csv(const std::string& text, const std::string& name);

}  // namespace attn
