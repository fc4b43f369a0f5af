#include "inputs/embeddings.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <new>
#include <streambuf>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>
#include <xtensor/xnpy.hpp>

#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "io/files.hpp"
#include "io/paths.hpp"

namespace attn {

namespace {

constexpr FileKind kEmbeddingsFile{"an embeddings file", kMaxFileBytes};

std::string nonempty(std::string bytes, const std::string& name) {
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(name + ": the file is empty");
  return bytes;
}

// All of standard input (--input -), held to the file size limit as it arrives.
std::string read_all(std::istream& in, const std::string& name) {
  return nonempty(read_capped(in, name, kEmbeddingsFile), name);
}

// All of a regular file: a FIFO, a device or a directory is refused before a byte is read (io/files), and
// `check_memory` sees its size on the process's base first.
std::string read_file(const std::string& path, const CheckMemory& check_memory) {
  const RegularFile file = open_regular_file(path, kEmbeddingsFile);
  if (check_memory) check_memory(saturating_sum(kBaseBytes, file.size));
  return nonempty(read_regular_file(file, path, kEmbeddingsFile), path);
}

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

// The text after a UTF-8 byte-order mark: a view, since a copy of a file of hundreds of megabytes would
// count against the memory budget (core/heap_budget.hpp).
std::string_view strip_bom(const std::string& text) {
  const std::string_view view(text);
  return view.compare(0, 3, "\xEF\xBB\xBF") == 0 ? view.substr(3) : view;
}

// Reading stops at the token or value past a limit, so the whole count is not known.
std::string tokens_limit_error(const std::string& name) {
  return name + ": more tokens than the limit of " + std::to_string(kMaxTokens) + " (reading stopped at token " +
         std::to_string(kMaxTokens + 1) + ")";
}
std::string dims_limit_error(const std::string& name) {
  return name + ": more dimensions than the limit of " + std::to_string(kMaxDims) + " (reading stopped at value " +
         std::to_string(kMaxDims + 1) + " of row 1)";
}

// The embeddings as they are read, row by row, into the (num_tokens, d_in) float32 matrix: each number
// rounded as torch.tensor(rows) rounds a Python float. A file past the token or dimension limit is refused
// at the row or value that passes it, not after reading the rest.
class RowBuilder {
 public:
  explicit RowBuilder(std::string name) : name_(std::move(name)) {}

  // Starts row `rows() + 1`; refuses the one past the token limit.
  void begin_row() {
    if (rows_ == kMaxTokens) throw InputError(tokens_limit_error(name_));
    ++rows_;
    in_row_ = 0;
  }
  // The next value of the current row; `where` says where it is for the finiteness error.
  template <class Where>
  void value(double v, Where where) {
    if (rows_ == 1 && in_row_ == kMaxDims) throw InputError(dims_limit_error(name_));
    if (rows_ > 1 && in_row_ == d_in_)  // a row longer than the first: stop here, not at its end
      throw InputError(where() + ": row 1 has only " + count_of(d_in_, "value"));
    const float f = static_cast<float>(v);
    if (!std::isfinite(f)) throw InputError(where() + ": value is not a finite float32 number");
    values_.push_back(f);
    ++in_row_;
  }
  // Ends the current row: every row is as long as the first, which has at least one value. `ragged`
  // words the error from this row's count and the first row's.
  template <class Ragged>
  void end_row(Ragged ragged) {
    if (rows_ == 1) {
      if (in_row_ == 0) throw InputError(name_ + ": row 1 is empty (need at least one dimension)");
      d_in_ = in_row_;
    } else if (in_row_ != d_in_) {
      throw InputError(ragged(count_of(in_row_, "value"), std::to_string(d_in_)));
    }
  }
  std::size_t rows() const { return rows_; }
  std::size_t d_in() const { return d_in_; }

  // The Inputs; `tokens`: what the file names, or nothing when it names none (the tokens are then x1..xN).
  Inputs finish(std::optional<std::vector<std::string>> tokens) && {
    if (rows_ == 0) throw InputError(name_ + ": no embeddings (need at least one token)");
    if (!tokens) {
      tokens.emplace();
      for (std::size_t r = 0; r < rows_; ++r) tokens->push_back("x" + std::to_string(r + 1));
    } else if (tokens->size() != rows_) {
      throw InputError(name_ + ": " + count_of(tokens->size(), "token") + " but " + count_of(rows_, "embedding row"));
    }
    Inputs in;
    in.source = name_;
    in.tokens = std::move(*tokens);
    in.embeddings = xt::empty<float>({rows_, d_in_});  // (num_tokens, d_in)
    std::copy(values_.begin(), values_.end(), in.embeddings.begin());
    return in;
  }

 private:
  std::string name_;
  std::vector<float> values_;  // row after row
  std::size_t rows_ = 0, d_in_ = 0, in_row_ = 0;
};

// ---- JSON ----------------------------------------------------------------------------------------------

// nlohmann's SAX events for {"tokens": [...], "embeddings": [[...], ...]} or [[...], ...], straight into a
// RowBuilder: no document tree of the whole file is built, and a file past a limit stops there.
class EmbeddingsSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  EmbeddingsSax(const std::string& name, std::string_view text) : name_(name), text_(text), rows_(name) {}

  Inputs finish() && {
    if (!seen_embeddings_) throw InputError(name_ + ": expected a key \"embeddings\" holding an array of rows");
    return std::move(rows_).finish(std::move(tokens_));
  }

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return number(v); }
  bool string(string_t& s) override {
    if (skip_ > 0) return true;
    if (where_ == Where::Tokens) {
      if (tokens_->size() == kMaxTokens) throw InputError(tokens_limit_error(name_));
      tokens_->push_back(std::move(s));
      return true;
    }
    return scalar();
  }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override {
    if (skip_ > 0 || (where_ == Where::Object && next_ == Where::Skip)) return ++skip_, true;
    if (where_ == Where::Top) return where_ = Where::Object, true;
    return scalar();
  }
  bool key(string_t& k) override {
    if (skip_ > 0) return true;
    next_ = Where::Skip;
    if (k == "embeddings" || k == "tokens") {
      bool& seen = k == "embeddings" ? seen_embeddings_ : seen_tokens_;
      if (seen) throw InputError(name_ + ": the key \"" + k + "\" appears twice");
      seen = true;
      next_ = k == "embeddings" ? Where::Embeddings : Where::Tokens;
    }
    return true;
  }
  bool end_object() override {
    if (skip_ > 0) --skip_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (skip_ > 0) return ++skip_, true;
    switch (where_) {
      case Where::Top:
        seen_embeddings_ = true;
        where_ = Where::Rows;
        return true;
      case Where::Object:
        if (next_ == Where::Skip) return ++skip_, true;
        if (next_ == Where::Tokens) tokens_.emplace();
        where_ = next_ == Where::Embeddings ? Where::Rows : Where::Tokens;
        return true;
      case Where::Rows:
        rows_.begin_row();
        where_ = Where::Row;
        col_ = 0;
        return true;
      case Where::Row:
        throw InputError(name_ + ": embeddings[" + std::to_string(rows_.rows() - 1) + "][" + std::to_string(col_) +
                         "] is not a number");
      default:
        return scalar();
    }
  }
  bool end_array() override {
    if (skip_ > 0) return --skip_, true;
    if (where_ == Where::Row) {
      const std::size_t r = rows_.rows();
      rows_.end_row([&](const std::string& has, const std::string& first) {
        return name_ + ": row " + std::to_string(r) + " has " + has + ", row 1 has " + first;
      });
      where_ = Where::Rows;
    } else {
      where_ = Where::Object;
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    if (e.id == 406)  // out_of_range.406: a number beyond any double, e.g. 1e999999 (found by the fuzzer)
      throw InputError(name_ + ": a number is too large to be a float32 value");
    // nlohmann's message reads "[json.exception...] parse error at line 2, column 7: syntax error while
    // parsing value - unexpected ']'; expected '[', '{', or a literal"; keep what follows the last " - ".
    std::string reason = e.what();
    const auto dash = reason.rfind(" - ");
    reason = dash == std::string::npos ? std::string("syntax error") : reason.substr(dash + 3);
    reason = reason.substr(0, reason.find("; last read"));  // it would echo the offending bytes
    // The byte offset where parsing stopped (1-based), as a line and column.
    const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    const std::size_t byte = pe != nullptr ? pe->byte : 0;
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < byte && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw InputError(name_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": invalid JSON: " + reason);
  }

 private:
  enum class Where { Top, Object, Tokens, Embeddings, Rows, Row, Skip };

  bool number(double v) {
    if (skip_ > 0) return true;
    if (where_ != Where::Row) return scalar();
    const std::size_t r = rows_.rows() - 1, c = col_++;
    rows_.value(v, [&] { return name_ + ": row " + std::to_string(r + 1) + ", column " + std::to_string(c + 1); });
    return true;
  }
  // A value where the structure wants something else.
  bool scalar() {
    if (skip_ > 0) return true;
    switch (where_) {
      case Where::Top:
        throw InputError(name_ + ": \"embeddings\" must be an array of rows of numbers");
      case Where::Object:  // the value of a key
        if (next_ == Where::Tokens) throw InputError(name_ + ": \"tokens\" must be an array of strings");
        if (next_ == Where::Embeddings)
          throw InputError(name_ + ": \"embeddings\" must be an array of rows of numbers");
        return true;  // another key's: not read
      case Where::Tokens:
        throw InputError(name_ + ": tokens[" + std::to_string(tokens_->size()) + "] is not a string");
      case Where::Rows:
        throw InputError(name_ + ": embeddings[" + std::to_string(rows_.rows()) + "] is not an array of numbers");
      case Where::Row:
        throw InputError(name_ + ": embeddings[" + std::to_string(rows_.rows() - 1) + "][" + std::to_string(col_) +
                         "] is not a number");
      default:
        return true;
    }
  }

  const std::string& name_;
  std::string_view text_;
  RowBuilder rows_;
  std::optional<std::vector<std::string>> tokens_;
  Where where_ = Where::Top;
  Where next_ = Where::Skip;  // what the value after the last key is
  bool seen_embeddings_ = false, seen_tokens_ = false;
  std::size_t skip_ = 0;  // nesting depth inside a value nobody reads (an unknown key's)
  std::size_t col_ = 0;
};

// ---- text tables ---------------------------------------------------------------------------------------

enum class Separator { Comma, Semicolon, Tab, Spaces };

// Splits one line into fields, honouring double quotes ("" inside quotes is a quote). With Spaces, runs
// of spaces and tabs separate and leading or trailing ones are ignored.
std::vector<std::string> split_line(const std::string& line, Separator sep, const std::string& where) {
  const char delim = sep == Separator::Comma ? ',' : sep == Separator::Semicolon ? ';' : '\t';
  const auto is_sep = [&](char ch) { return sep == Separator::Spaces ? (ch == ' ' || ch == '\t') : ch == delim; };
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, in_field = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = in_field = true;
    } else if (is_sep(ch)) {
      if (sep != Separator::Spaces || in_field) fields.push_back(field);
      field.clear();
      in_field = false;
    } else {
      field += ch;
      in_field = true;
    }
  }
  if (quoted) throw InputError(where + ": unterminated quoted field");
  if (sep != Separator::Spaces || in_field) fields.push_back(field);
  return fields;
}

// The separator of a table, from its first data line (outside quotes).
Separator separator_of(const std::string& line) {
  bool quoted = false, comma = false, semicolon = false, tab = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    if (quoted) continue;
    comma |= ch == ',';
    semicolon |= ch == ';';
    tab |= ch == '\t';
  }
  return semicolon ? Separator::Semicolon : comma ? Separator::Comma : tab ? Separator::Tab : Separator::Spaces;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool parse_number(const std::string& cell, double& out) {
  const std::string t = trim(cell);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

bool is_number(const std::string& cell) {
  double ignored = 0;
  return parse_number(cell, ignored);
}

// ---- .npy ----------------------------------------------------------------------------------------------

// The part of a .npy file xtensor's reader trusts: xtensor (xnpy.hpp) reads the header length through a
// signed char, allocates whatever size the header's shape says, and does not check that the file holds
// that much data. A file from anyone is checked here first, against the form NumPy writes (format 1.0 or
// 2.0: magic, version, little-endian header length, a dict literal ending in a newline), so that
// xtensor's own parser only ever sees a well-formed header and the limits are checked on its shape
// before any allocation. Everything else is xt::load_npy's.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
  std::size_t data_offset = 0;
};

NpyHeader read_npy_header(const std::string& bytes, const std::string& name) {
  const auto bad = [&](const std::string& why) { return InputError(name + ": not a valid .npy file (" + why + ")"); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw bad("no NumPy magic string");
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
  const std::size_t major = byte(6), minor = byte(7);
  std::size_t len = 0, start = 0;
  if (major == 1 && minor == 0) {
    len = byte(8) | byte(9) << 8;
    start = 10;
  } else if (major == 2 && minor == 0 && bytes.size() >= 12) {
    len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    start = 12;
  } else {
    throw InputError(name + ": .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                     " is not supported (1.0 and 2.0 are; np.save writes them)");
  }
  if (len > bytes.size() - start) throw bad("the header runs past the end of the file");
  NpyHeader h;
  const std::string header = bytes.substr(start, len);
  // The dict NumPy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (6, 3), } and padding.
  static const std::regex form(
      R"(\{ *'descr': *'[<>|=][a-zA-Z]\d+', *'fortran_order': *(True|False), *'shape': *\( *(\d+ *(, *\d+ *)*,? *)?\) *,? *\} *\n)");
  if (!std::regex_match(header, form)) throw bad("its header is not the dict NumPy writes");
  try {
    xt::detail::parse_header(header, h.descr, &h.fortran_order, h.shape);
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, or past the memory budget (core/heap_budget.hpp): not a malformed file
  } catch (const std::exception& e) {
    throw bad(e.what());
  }
  h.data_offset = start + len;
  return h;
}

}  // namespace

std::string default_embeddings_path() {
  const std::string path = find_data_file("journey.json");
  if (path.empty())
    throw InputError("cannot find the bundled journey.json (looked in " + data_dirs_text() + "); pass --input FILE");
  return path;
}

const std::vector<EmbeddingsFormat>& embeddings_formats() {
  static const std::vector<EmbeddingsFormat> formats{
      {InputFormat::Json, {".json"}, "JSON {\"tokens\": [...], \"embeddings\": [[...], ...]}",
       [](const std::string& bytes) {  // '[' or '{' first, after a byte-order mark and white space
         const std::string_view text = strip_bom(bytes);
         const auto first = text.find_first_not_of(" \t\r\n");
         return first != std::string_view::npos && (text[first] == '[' || text[first] == '{');
       },
       parse_embeddings_json},
      {InputFormat::Table, {".csv", ".tsv", ".txt", ".dat", ".tab"},
       "a table (CSV, semicolons, tabs or spaces as np.savetxt writes; an optional header row and first column of "
       "token text)",
       nullptr, parse_embeddings_table},
      {InputFormat::Npy, {".npy"}, "NumPy .npy (2-D float32/float64)",
       [](const std::string& bytes) { return bytes.compare(0, 6, "\x93NUMPY") == 0; },  // NumPy's magic string
       parse_embeddings_npy},
  };
  return formats;
}

std::optional<InputFormat> format_of_name(const std::string& path) {
  for (const EmbeddingsFormat& f : embeddings_formats())
    for (const std::string& ext : f.extensions)
      if (ends_with_ci(path, ext)) return f.id;
  return std::nullopt;
}

InputFormat format_of_content(const std::string& bytes) {
  const EmbeddingsFormat* fallback = nullptr;
  for (const EmbeddingsFormat& f : embeddings_formats()) {
    if (f.sniff == nullptr) fallback = &f;
    else if (f.sniff(bytes)) return f.id;
  }
  return fallback->id;
}

Inputs load_embeddings(const std::string& path, std::istream& stdin_stream, const CheckMemory& check_memory) {
  if (path == "-") {
    const std::string bytes = read_all(stdin_stream, kStdinName);
    return parse_embeddings(bytes, kStdinName, format_of_content(bytes));
  }
  return load_embeddings(path, check_memory);
}

Inputs load_embeddings(const std::string& path, const CheckMemory& check_memory) {
  const std::string bytes = read_file(path, check_memory);
  return parse_embeddings(bytes, path, format_of_name(path).value_or(format_of_content(bytes)));
}

Inputs parse_embeddings(const std::string& bytes, const std::string& name, InputFormat format) {
  for (const EmbeddingsFormat& f : embeddings_formats())
    if (f.id == format) return f.parse(bytes, name);
  throw std::logic_error("no embeddings format of that id");
}

Inputs parse_embeddings_json(const std::string& raw, const std::string& name) {
  const std::string_view text = strip_bom(raw);
  EmbeddingsSax sax(name, text);
  nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
  return std::move(sax).finish();
}

Inputs parse_embeddings_table(const std::string& raw, const std::string& name) {
  const std::string_view text = strip_bom(raw);
  if (text.compare(0, 6, "\x93NUMPY") == 0)
    throw InputError(name + ": a NumPy .npy file, not a text table (name it .npy, or leave the extension out)");
  RowBuilder rows(name);
  std::vector<std::string> tokens;
  std::optional<Separator> sep;
  bool has_token_column = false, index_column = false;
  std::size_t header_fields = 0, header_line = 0;  // 0: no header row
  // Line by line where the text is (a std::istringstream would copy all of it first).
  std::string line;
  std::size_t start = 0;
  for (std::size_t line_no = 1; start < text.size(); ++line_no) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    line.assign(text.substr(start, end - start));
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    const std::string where = name + ":" + std::to_string(line_no);
    if (!sep) sep = separator_of(line);
    const std::vector<std::string> fields = split_line(line, *sep, where);
    if (rows.rows() == 0 && header_line == 0) {
      // A header row: no number after its first cell (token,d1,d2 or d1,d2), or a lone cell that is no number.
      // Or pandas' DataFrame.to_csv(): an empty first cell over its index column, whatever the column names
      // are; that column labels the rows.
      index_column = fields.size() > 1 && trim(fields.front()).empty();
      bool header = fields.size() > 1 || !is_number(fields.front());
      for (std::size_t c = 1; c < fields.size(); ++c) header = header && !is_number(fields[c]);
      if (header || index_column) {
        header_fields = fields.size();
        header_line = line_no;
        continue;
      }
    }
    if (rows.rows() == 0) has_token_column = index_column || !is_number(fields.front());
    if (header_line != 0 && rows.rows() == 0 && fields.size() != header_fields)
      throw InputError(where + ": " + count_of(fields.size(), "column") + ", the header row (line " +
                       std::to_string(header_line) + ") has " + std::to_string(header_fields));
    rows.begin_row();
    std::size_t first = 0;
    if (has_token_column) {
      if (!valid_utf8(fields.front())) throw InputError(where + ": the token text is not valid UTF-8");
      tokens.push_back(trim(fields.front()));
      first = 1;
    }
    for (std::size_t c = first; c < fields.size(); ++c) {
      double v = 0;
      if (!parse_number(fields[c], v)) {
        const std::string cell = trim(fields[c]);
        std::string with_point = cell;  // 0,43 from a spreadsheet set to a decimal comma
        const auto comma = with_point.find(',');
        if (comma != std::string::npos) with_point[comma] = '.';
        throw InputError(where + ": column " + std::to_string(c + 1) + " ('" + cell + "') is not a number" +
                         (comma != std::string::npos && is_number(with_point)
                              ? " (attn reads a decimal point, not a decimal comma)"
                              : ""));
      }
      rows.value(v, [&] { return where + ": column " + std::to_string(c + 1); });
    }
    rows.end_row([&](const std::string& has, const std::string& first) {
      return where + ": " + has + ", the first row has " + first;
    });
  }
  return std::move(rows).finish(has_token_column ? std::optional(std::move(tokens)) : std::nullopt);
}

Inputs parse_embeddings_npy(const std::string& bytes, const std::string& name) {
  const NpyHeader h = read_npy_header(bytes, name);
  if (h.descr != "<f4" && h.descr != "<f8")
    throw InputError(name + ": a .npy array of dtype '" + h.descr +
                     "'; attn reads float32 ('<f4') or float64 ('<f8'): save with arr.astype(np.float32)");
  if (h.shape.size() != 2) {
    std::string shape = "(";
    for (std::size_t i = 0; i < h.shape.size(); ++i) shape += (i > 0 ? ", " : "") + std::to_string(h.shape[i]);
    shape += h.shape.size() == 1 ? ",)" : ")";
    throw InputError(name + ": a .npy array of shape " + shape +
                     "; attn needs 2 dimensions, (num_tokens, d_in), one row per token");
  }
  const std::size_t n = h.shape[0], d = h.shape[1];
  if (n == 0) throw InputError(name + ": no embeddings (need at least one token)");
  if (d == 0) throw InputError(name + ": row 1 is empty (need at least one dimension)");
  if (n > kMaxTokens)
    throw InputError(name + ": " + std::to_string(n) + " tokens, more than the limit of " + std::to_string(kMaxTokens));
  if (d > kMaxDims)
    throw InputError(name + ": " + std::to_string(d) + " dimensions, more than the limit of " + std::to_string(kMaxDims));
  const std::size_t word = h.descr == "<f4" ? 4 : 8;
  if (bytes.size() - h.data_offset != n * d * word)
    throw InputError(name + ": not a valid .npy file (its header says " + with_commas(n * d * word) +
                     " bytes of data, the file holds " + with_commas(bytes.size() - h.data_offset) + ")");
  // xt::load_npy reads a std::istream: this one reads `bytes` where they are (a std::istringstream would
  // copy the whole file first).
  struct BytesBuffer : std::streambuf {
    explicit BytesBuffer(const std::string& b) {
      char* begin = const_cast<char*>(b.data());  // a get area only: never written through
      setg(begin, begin, begin + b.size());
    }
  } buffer(bytes);
  std::istream stream(&buffer);
  RowBuilder rows(name);
  const auto fill = [&](const auto& array) {  // (num_tokens, d_in), float32 or float64
    for (std::size_t r = 0; r < n; ++r) {
      rows.begin_row();
      for (std::size_t c = 0; c < d; ++c)
        rows.value(static_cast<double>(array(r, c)),
                   [&] { return name + ": row " + std::to_string(r + 1) + ", column " + std::to_string(c + 1); });
      rows.end_row([](const std::string&, const std::string&) { return std::string(); });  // never ragged
    }
  };
  if (word == 4) {
    fill(xt::load_npy<float>(stream));
  } else {
    fill(xt::load_npy<double>(stream));
  }
  return std::move(rows).finish(std::nullopt);
}

InputSource file_source() {
  // The formats' own descriptions and extensions (embeddings_formats()).
  std::vector<std::string> formats;
  std::string extensions;
  for (const EmbeddingsFormat& f : embeddings_formats()) {
    formats.push_back(f.help);
    std::string names;
    for (const std::string& ext : f.extensions) names += (names.empty() ? "" : " ") + ext;
    extensions += (extensions.empty() ? "" : ", ") + names;
  }
  SourceOption input{"--input", "FILE",
                     "Embeddings to use instead of the book's six tokens, one row per token: " + or_list(formats) +
                         "; - reads standard input. The format comes from the extension (" + extensions +
                         "), or else from the content (docs/inputs.md)",
                     &InputOptions::input};
  // An empty name is refused where the option is read, not taken for "the bundled data".
  input.empty = "needs a file name (leave --input out for the book's six tokens)";
  input.default_note = "the bundled journey.json";
  input.rules = {{SourceRule::Exclusive, "--random", ""}};
  return {"file", [](const InputOptions& opt) { return !opt.input.empty(); },
          [](const InputOptions& opt, std::istream& stdin_stream, const CheckMemory& check_memory, const Words&) {
            return load_embeddings(opt.input, stdin_stream, check_memory);
          },
          nullptr,
          {input}};
}

InputSource bundled_source() {
  return {"bundled", [](const InputOptions&) { return true; },
          [](const InputOptions&, std::istream& stdin_stream, const CheckMemory&, const Words&) {
            return load_embeddings(default_embeddings_path(), stdin_stream);
          },
          nullptr,
          {}};
}

}  // namespace attn
