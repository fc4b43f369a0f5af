#include "io/embeddings.hpp"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <cstdint>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/limits.hpp"
#include "core/strings.hpp"
#include "io/paths.hpp"

namespace attn {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, not an embeddings file");
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > kMaxFileBytes)
    throw InputError(path + ": " + std::to_string(st.st_size >> 20) + " MiB, more than the limit of " +
                     std::to_string(kMaxFileBytes >> 20) + " MiB for an embeddings file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  // Read in chunks so that a pipe or device (no size known up front) is held to the same limit.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      throw InputError(path + ": more than the limit of " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  }
  if (in.bad()) throw InputError(path + ": read error");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(path + ": the file is empty");
  return text;
}

// True if `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string strip_bom(const std::string& text) {
  return text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text;
}

// Rows of doubles -> the (num_tokens, d_in) float32 matrix, as torch.tensor(rows) rounds them. `tokens`:
// what the file names, or nothing when it names none (the tokens are then x1..xN).
Inputs make_inputs(const std::vector<std::vector<double>>& rows, std::optional<std::vector<std::string>> tokens,
                   const std::string& name) {
  if (rows.empty()) throw InputError(name + ": no embeddings (need at least one token)");
  const std::size_t d_in = rows.front().size();
  if (d_in == 0) throw InputError(name + ": row 1 is empty (need at least one dimension)");
  if (rows.size() > kMaxTokens)
    throw InputError(name + ": " + std::to_string(rows.size()) + " tokens, more than the limit of " +
                     std::to_string(kMaxTokens));
  if (d_in > kMaxDims)
    throw InputError(name + ": " + std::to_string(d_in) + " dimensions, more than the limit of " +
                     std::to_string(kMaxDims));
  Inputs in;
  in.source = name;
  in.embeddings = xt::empty<float>({rows.size(), d_in});  // (num_tokens, d_in)
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != d_in)
      throw InputError(name + ": row " + std::to_string(r + 1) + " has " + std::to_string(rows[r].size()) +
                       " values, row 1 has " + std::to_string(d_in));
    for (std::size_t c = 0; c < d_in; ++c) {
      const float v = static_cast<float>(rows[r][c]);
      if (!std::isfinite(v))
        throw InputError(name + ": row " + std::to_string(r + 1) + ", column " + std::to_string(c + 1) +
                         ": value is not a finite float32 number");
      in.embeddings(r, c) = v;
    }
  }
  if (!tokens) {
    tokens.emplace();
    for (std::size_t r = 0; r < rows.size(); ++r) tokens->push_back("x" + std::to_string(r + 1));
  } else if (tokens->size() != rows.size()) {
    throw InputError(name + ": " + count_of(tokens->size(), "token") + " but " +
                     count_of(rows.size(), "embedding row"));
  }
  in.tokens = std::move(*tokens);
  return in;
}

// Splits one CSV line into fields, honouring double quotes ("" inside quotes is a quote).
std::vector<std::string> split_csv_line(const std::string& line, const std::string& where) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
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
      quoted = true;
    } else if (ch == ',') {
      fields.push_back(field);
      field.clear();
    } else {
      field += ch;
    }
  }
  if (quoted) throw InputError(where + ": unterminated quoted field");
  fields.push_back(field);
  return fields;
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

}  // namespace

std::string default_embeddings_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ATTN_DATA_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  if (const std::string exe = executable_dir(); !exe.empty()) dirs.push_back(exe + "/../share/attn");
  dirs.emplace_back(ATTN_INSTALL_DATADIR);
  dirs.emplace_back(ATTN_SOURCE_DATADIR);
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/journey.json";
    if (!is_regular_file(candidate)) continue;
    char resolved[PATH_MAX];  // shown to the user: /usr/local/share/attn/..., not .../bin/../share/...
    return ::realpath(candidate.c_str(), resolved) != nullptr ? std::string(resolved) : candidate;
  }
  throw InputError("cannot find the bundled journey.json (looked in $ATTN_DATA_DIR, ../share/attn next to the "
                   "executable, " ATTN_INSTALL_DATADIR " and " ATTN_SOURCE_DATADIR "); pass --input FILE");
}

Inputs load_embeddings(const std::string& path) {
  const std::string text = read_file(path);
  return ends_with(path, ".csv") || ends_with(path, ".CSV") ? parse_embeddings_csv(text, path)
                                                             : parse_embeddings_json(text, path);
}

Inputs parse_embeddings_json(const std::string& raw, const std::string& name) {
  const std::string text = strip_bom(raw);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message reads "[json.exception...] parse error at line 2, column 7: syntax error while parsing
    // value - unexpected ']'; expected '[', '{', or a literal"; keep what follows the last " - ".
    std::string reason = e.what();
    const auto dash = reason.rfind(" - ");
    reason = dash == std::string::npos ? std::string("syntax error") : reason.substr(dash + 3);
    reason = reason.substr(0, reason.find("; last read"));  // it would echo the offending bytes
    // e.byte is the 1-based offset where parsing stopped; turn it into a line and column.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw InputError(name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": invalid JSON: " + reason);
  } catch (const nlohmann::json::out_of_range&) {
    // Thrown for a number beyond any double, e.g. 1e999999 (found by the fuzzer).
    throw InputError(name + ": a number is too large to be a float32 value");
  }
  const nlohmann::json* rows_json = &doc;
  std::optional<std::vector<std::string>> tokens;  // none when the file has no "tokens"
  if (doc.is_object()) {
    if (!doc.contains("embeddings"))
      throw InputError(name + ": expected a key \"embeddings\" holding an array of rows");
    rows_json = &doc["embeddings"];
    if (doc.contains("tokens")) {
      const auto& tj = doc["tokens"];
      if (!tj.is_array()) throw InputError(name + ": \"tokens\" must be an array of strings");
      tokens.emplace();
      for (std::size_t i = 0; i < tj.size(); ++i) {
        if (!tj[i].is_string())
          throw InputError(name + ": tokens[" + std::to_string(i) + "] is not a string");
        tokens->push_back(tj[i].get<std::string>());
      }
    }
  }
  if (!rows_json->is_array())
    throw InputError(name + ": \"embeddings\" must be an array of rows of numbers");
  std::vector<std::vector<double>> rows;
  for (std::size_t r = 0; r < rows_json->size(); ++r) {
    const auto& row = (*rows_json)[r];
    if (!row.is_array())
      throw InputError(name + ": embeddings[" + std::to_string(r) + "] is not an array of numbers");
    std::vector<double> values;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (!row[c].is_number())
        throw InputError(name + ": embeddings[" + std::to_string(r) + "][" + std::to_string(c) + "] is not a number");
      values.push_back(row[c].get<double>());
    }
    rows.push_back(std::move(values));
  }
  return make_inputs(rows, std::move(tokens), name);
}

Inputs parse_embeddings_csv(const std::string& raw, const std::string& name) {
  const std::string text = strip_bom(raw);
  std::vector<std::vector<double>> rows;
  std::vector<std::string> tokens;
  bool has_token_column = false;
  std::istringstream lines(text);
  std::string line;
  for (std::size_t line_no = 1; std::getline(lines, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    const std::string where = name + ":" + std::to_string(line_no);
    std::vector<std::string> fields = split_csv_line(line, where);
    if (rows.empty()) {
      double ignored = 0;
      has_token_column = !parse_number(fields.front(), ignored);
    }
    std::size_t first = 0;
    if (has_token_column) {
      if (!valid_utf8(fields.front())) throw InputError(where + ": the token text is not valid UTF-8");
      tokens.push_back(trim(fields.front()));
      first = 1;
    }
    std::vector<double> values;
    for (std::size_t c = first; c < fields.size(); ++c) {
      double v = 0;
      if (!parse_number(fields[c], v))
        throw InputError(where + ": column " + std::to_string(c + 1) + " ('" + trim(fields[c]) +
                         "') is not a number");
      values.push_back(v);
    }
    if (!rows.empty() && values.size() != rows.front().size())
      throw InputError(where + ": " + std::to_string(values.size()) + " values, the first row has " +
                       std::to_string(rows.front().size()));
    rows.push_back(std::move(values));
  }
  return make_inputs(rows, has_token_column ? std::optional(std::move(tokens)) : std::nullopt, name);
}

}  // namespace attn
