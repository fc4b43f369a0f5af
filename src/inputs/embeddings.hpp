#pragma once
// Loading the token embeddings every lesson starts from: the book's six tokens (data/journey.json)
// or a student's own file or standard input: JSON, a text table (CSV, semicolons, tabs or spaces, as
// np.savetxt writes it), or NumPy's .npy.
#include <cstddef>
#include <iosfwd>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/tensor.hpp"
#include "inputs/source.hpp"
#include "document/inputs.hpp"

namespace attn {

// --input FILE (or - for standard input) and, when no source is asked for, the bundled six tokens, as
// input sources.
InputSource file_source();
InputSource bundled_source();

// The bundled embeddings of "Your journey starts with one step": looked up in $ATTN_DATA_DIR, next to
// the installed executable (../share/attn), the install prefix, then the source tree.
std::string default_embeddings_path();

// How an embeddings file is written.
enum class InputFormat { Json, Table, Npy };

// What `--input -` is called in messages and in the output.
inline constexpr const char* kStdinName = "<stdin>";

// A file format of embeddings, declared once: what --input's help, the man page and the format lookups
// below all read. Adding one is its parser and its entry in embeddings_formats() (docs/architecture.md).
struct EmbeddingsFormat {
  InputFormat id;
  std::vector<std::string> extensions;  // the names that say it, any case: ".json"
  std::string help;                     // how --input's help describes it
  bool (*sniff)(const std::string& bytes);  // whether the content says it; null for the one format taken
                                            // when no other's content matches (the table)
  Inputs (*parse)(const std::string& bytes, const std::string& name);
};
// Every format, in the order --input's help names them.
const std::vector<EmbeddingsFormat>& embeddings_formats();

// The format a file name says (.json, .npy, or a table: .csv .tsv .txt .dat .tab, any case); none for any
// other name, or no extension, whose format the content decides (format_of_content).
std::optional<InputFormat> format_of_name(const std::string& path);
// The format the bytes say: NumPy's magic string, JSON's '[' or '{' first, otherwise a table.
InputFormat format_of_content(const std::string& bytes);

// Reads `path` ("-": `stdin`, held to the same size limit) in the format its name says, or its
// content says when the name says none. `check_memory`, when given, is asked for the process's base and
// the file's size before a file is read (a file is held whole while it is parsed).
Inputs load_embeddings(const std::string& path, std::istream& stdin_stream, const CheckMemory& check_memory = {});
Inputs load_embeddings(const std::string& path, const CheckMemory& check_memory = {});  // a file, never standard input

// `bytes` read from `name` (which labels error messages) in the given format.
Inputs parse_embeddings(const std::string& bytes, const std::string& name, InputFormat format);

// JSON: {"tokens": ["Your", ...] (optional), "embeddings": [[0.43, 0.15, 0.89], ...]}, or just the
// array of rows. Read as it streams: a file past the token or dimension limit is refused there.
Inputs parse_embeddings_json(const std::string& text, const std::string& name);

// A text table: one row per token. Cells are separated by commas, semicolons, tabs or runs of spaces
// (the first data line decides which: ';' if it has one, else ',', else a tab, else spaces); fields
// may be double-quoted. Allowed: an optional header row (a first line with no number after its first
// cell, or with an empty first cell); an optional first column of token text (recognised when the first
// cell of the first data row is not a number, or when the header's first cell is empty: pandas' index);
// blank lines and lines starting with '#' (np.savetxt's header).
Inputs parse_embeddings_table(const std::string& text, const std::string& name);

// NumPy's .npy: a 2-D float32 or float64 array (num_tokens, d_in), C or Fortran order.
Inputs parse_embeddings_npy(const std::string& bytes, const std::string& name);

}  // namespace attn
