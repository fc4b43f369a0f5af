#include "io/embeddings.hpp"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace attn {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string executable_dir() {
  std::string buf(4096, '\0');
  const ssize_t len = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (len <= 0) return {};
  buf.resize(static_cast<std::size_t>(len));
  const auto slash = buf.rfind('/');
  return slash == std::string::npos ? std::string{} : buf.substr(0, slash);
}

std::string read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, not an embeddings file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return ss.str();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string strip_bom(const std::string& text) {
  return text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text;
}

// Rows of doubles -> the (num_tokens, d_in) float32 matrix, as torch.tensor(rows) rounds them.
Inputs make_inputs(const std::vector<std::vector<double>>& rows, std::vector<std::string> tokens,
                   const std::string& name) {
  if (rows.empty()) throw InputError(name + ": no embeddings (need at least one token)");
  const std::size_t d_in = rows.front().size();
  if (d_in == 0) throw InputError(name + ": row 1 is empty (need at least one dimension)");
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
  if (tokens.empty()) {
    for (std::size_t r = 0; r < rows.size(); ++r) tokens.push_back("x" + std::to_string(r + 1));
  } else if (tokens.size() != rows.size()) {
    throw InputError(name + ": " + std::to_string(tokens.size()) + " tokens but " + std::to_string(rows.size()) +
                     " embedding rows");
  }
  in.tokens = std::move(tokens);
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
    throw InputError(name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": invalid JSON");
  }
  const nlohmann::json* rows_json = &doc;
  std::vector<std::string> tokens;
  if (doc.is_object()) {
    if (!doc.contains("embeddings"))
      throw InputError(name + ": expected a key \"embeddings\" holding an array of rows");
    rows_json = &doc["embeddings"];
    if (doc.contains("tokens")) {
      const auto& tj = doc["tokens"];
      if (!tj.is_array()) throw InputError(name + ": \"tokens\" must be an array of strings");
      for (std::size_t i = 0; i < tj.size(); ++i) {
        if (!tj[i].is_string())
          throw InputError(name + ": tokens[" + std::to_string(i) + "] is not a string");
        tokens.push_back(tj[i].get<std::string>());
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
  return make_inputs(rows, std::move(tokens), name);
}

}  // namespace attn
