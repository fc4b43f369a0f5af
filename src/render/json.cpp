#include "render/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/cancel.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"

namespace attn {

namespace {

using ojson = nlohmann::ordered_json;

// Row-major data of `t` from element `offset`, as nested arrays following `t`'s shape from `dim` on.
// With `integer`, the values are written as JSON integers (a tensor of the book's integer dtype).
ojson nest(const AnyTensor& t, std::size_t dim, std::size_t& offset, bool integer) {
  if (dim == t.dimension()) {
    const float v = t.data()[offset++];
    return integer ? ojson(static_cast<long long>(v)) : ojson(static_cast<double>(v));
  }
  check_cancelled();  // attn serve's time limit and stop (core/cancel.hpp), once an array: at most a row apart
  ojson arr = ojson::array();
  for (std::size_t i = 0; i < t.shape()[dim]; ++i) arr.push_back(nest(t, dim + 1, offset, integer));
  return arr;
}

ojson tensor_data(const AnyTensor& t, bool integer = false) {
  std::size_t offset = 0;
  return nest(t, 0, offset, integer);
}

void write_float(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "\"nan\"";
  } else if (std::isinf(value)) {
    out += value > 0 ? "\"inf\"" : "\"-inf\"";
  } else if (value == 0.0 && std::signbit(value)) {
    out += "-0.0";  // to_chars' "-0" reads back as the integer 0 in most parsers (Python's json, nlohmann)
  } else {
    out += exact_number(static_cast<float>(value));
  }
}

// JSON text as nlohmann wrote it (valid UTF-8), with each DEL and C1 control as \u007f..\u009f. Outside
// its strings JSON text is ASCII without DEL, so every one of them is inside a string.
std::string controls_escaped(const std::string& dumped) {
  std::string out;
  out.reserve(dumped.size());
  for (std::size_t i = 0; i < dumped.size(); ++i) {
    const auto c = static_cast<unsigned char>(dumped[i]);
    const auto next = i + 1 < dumped.size() ? static_cast<unsigned char>(dumped[i + 1]) : 0;
    char buf[8];
    if (c == 0x7f) {
      out += "\\u007f";
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // U+0080-U+009F in UTF-8
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(next));
      out += buf;
      ++i;
    } else {
      out += dumped[i];
    }
  }
  return out;
}

bool is_scalar_array(const ojson& j) {
  for (const auto& e : j)
    if (e.is_structured()) return false;
  return true;
}

void write(std::string& out, const ojson& j, int depth) {
  const std::string pad(static_cast<std::size_t>(2 * (depth + 1)), ' ');
  const std::string close_pad(static_cast<std::size_t>(2 * depth), ' ');
  switch (j.type()) {
    case ojson::value_t::object: {
      if (j.empty()) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (const auto& [key, value] : j.items()) {
        if (!first) out += ",\n";
        first = false;
        out += pad + json_text(ojson(key)) + ": ";
        write(out, value, depth + 1);
      }
      out += "\n" + close_pad + "}";
      return;
    }
    case ojson::value_t::array: {
      check_cancelled();  // as in nest()
      const bool inline_array = is_scalar_array(j);
      out += "[";
      bool first = true;
      for (const auto& e : j) {
        if (!first) out += inline_array ? ", " : ",";
        first = false;
        if (!inline_array) out += "\n" + pad;
        write(out, e, depth + 1);
      }
      if (!inline_array && !j.empty()) out += "\n" + close_pad;
      out += "]";
      return;
    }
    case ojson::value_t::number_float:
      write_float(out, j.get<double>());
      return;
    case ojson::value_t::string:
      out += json_text(j);
      return;
    default:
      // Integers, booleans, null.
      out += j.dump();
      return;
  }
}

// The input embeddings are written unless --step picked steps: then the document holds those steps only
// (and the tokens, to label them).
bool writes_embeddings(const Document& doc) { return doc.only.empty(); }

}  // namespace

ojson trace_to_json(const Section& trace) { return trace_to_json(trace, Document{trace.info.name, {}, {}, {}}); }

ojson trace_to_json(const Section& trace, const Document& shown) {
  ojson doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["lesson"] = trace.info.name;
  doc["config"] = trace.config;
  // Data, not display: each token's exact string (a --text token that is not whole UTF-8, a piece of a
  // character split over tokens, as Python's bytes.decode("utf-8", "backslashreplace") gives it: "\\xf0\\x9f").
  ojson& tokens = doc["inputs"]["tokens"] = ojson::array();
  for (const std::string& token : trace.inputs.tokens) tokens.push_back(backslash_replaced(token));
  if (!trace.inputs.token_ids.empty()) doc["inputs"]["token_ids"] = trace.inputs.token_ids;  // --text
  if (writes_embeddings(shown)) doc["inputs"]["embeddings"] = tensor_data(AnyTensor(trace.inputs.embeddings));
  doc["modules"] = ojson::array();
  for (const auto& m : trace.modules)
    doc["modules"].push_back(ojson{{"name", m.name}, {"code", m.code}, {"num_params", m.num_params}});
  if (!trace.report.is_null()) doc["report"] = trace.report;
  ojson steps = ojson::array();
  for (const auto& s : trace.steps) {
    if (!shown.shows(s)) continue;
    ojson step;
    step["id"] = s.id;
    step["title"] = s.title;
    step["explanation"] = s.explanation;
    step["code"] = s.code;
    step["shape"] = ojson(s.shape);
    step["data"] = s.python_float ? ojson(*s.python_float)
                   : s.python_int ? ojson(*s.python_int)
                                  : tensor_data(s.tensor, s.integer);
    if (!s.head_notes.empty()) step["head_notes"] = s.head_notes;  // attn heads: one per head
    steps.push_back(std::move(step));
  }
  doc["steps"] = std::move(steps);
  return doc;
}

std::string json_text(const nlohmann::json& j, int indent, bool ascii) {
  return controls_escaped(j.dump(indent, ' ', ascii, nlohmann::json::error_handler_t::replace));
}
std::string json_text(const ojson& j, int indent, bool ascii) {
  return controls_escaped(j.dump(indent, ' ', ascii, ojson::error_handler_t::replace));
}

std::string dump_json(const ojson& doc) {
  std::string out;
  write(out, doc, 0);
  out += "\n";
  return out;
}

namespace {

class JsonRenderer : public Renderer {
 public:
  // Every number the document would write.
  static std::size_t numbers_in(const Document& doc) {
    std::size_t numbers = 0;
    for (const auto& t : doc.sections) {
      if (writes_embeddings(doc)) numbers += t.inputs.embeddings.size();
      for (const auto& s : t.steps)
        if (doc.shows(s)) numbers += std::min(s.numel(), kMaxJsonNumbers + 1);  // numel saturates
    }
    return numbers;
  }

  // The document is built as an nlohmann::ordered_json tree (a 16-byte value per number, in arrays that
  // grow by doubling), then written as text (up to 16 characters a number); kJsonBytesPerNumber is
  // measured with a margin (docs/performance.md).
  std::size_t working_bytes(const Document& doc) const override {
    return saturating_product({numbers_in(doc), kJsonBytesPerNumber});
  }

  void check(const Document& doc) const override {
    const std::size_t numbers = numbers_in(doc);
    if (numbers > kMaxJsonNumbers)
      throw UsageError("the JSON would hold " + with_commas(numbers) + " numbers, more than the limit of " +
                       with_commas(kMaxJsonNumbers) + "; pick steps with --step, or use the text view, which summarises large tensors");
  }

  std::vector<Chunk> render(const Document& doc) const override {
    if (!doc.is_tour()) return one_chunk(dump_json(trace_to_json(doc.sections.front(), doc)));
    // The tour: one document holding each lesson's.
    ojson all;
    all["schema_version"] = kJsonSchemaVersion;
    all["lesson"] = doc.command;
    all["lessons"] = ojson::array();
    for (const auto& t : doc.sections) all["lessons"].push_back(trace_to_json(t, doc));
    return one_chunk(dump_json(all));
  }
};

}  // namespace

std::unique_ptr<Renderer> make_json_renderer(const RenderOptions&) { return std::make_unique<JsonRenderer>(); }

}  // namespace attn
