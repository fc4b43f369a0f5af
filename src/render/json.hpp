#pragma once
// The JSON renderer: one RFC 8259 document per run (schema in docs/json.md), and the number format every
// JSON document of attn uses (the lessons', `attn list --json`, `attn bench --json`).
#include <string>

#include <nlohmann/json.hpp>

#include "render/renderer.hpp"

namespace attn {

inline constexpr int kJsonSchemaVersion = 1;

std::unique_ptr<Renderer> make_json_renderer(const RenderOptions& options);

// One lesson's document as a value, with the steps `doc` shows. Tensor data are nested arrays of float32
// values (held as doubles).
nlohmann::ordered_json trace_to_json(const Section& trace, const Document& doc);
nlohmann::ordered_json trace_to_json(const Section& trace);  // every step

// Serialises a document: every floating-point number as the shortest decimal that reads back to the
// same float32 (std::to_chars), the non-finite ones as the strings "inf", "-inf" and "nan" (JSON has
// no such numbers), arrays of scalars on one line, everything else indented by two spaces.
std::string dump_json(const nlohmann::ordered_json& doc);

inline std::string render_json(const Section& trace) { return dump_json(trace_to_json(trace)); }

// `j` as nlohmann writes it (`indent` spaces a level, or one line for -1; RFC 8259's escapes, and with `ascii`
// every character past ASCII as \uXXXX; invalid UTF-8 as U+FFFD rather than thrown), with DEL and the C1
// controls U+0080-U+009F escaped too (\u007f, \u009b): RFC 8259 allows any character as \uXXXX, and these
// would act on a terminal the document is printed on. Every JSON attn writes goes through it (dump_json's
// strings, the notebook, the live page's data, attn serve's errors); a parser reads back the same strings.
std::string json_text(const nlohmann::json& j, int indent = -1, bool ascii = false);
std::string json_text(const nlohmann::ordered_json& j, int indent = -1, bool ascii = false);

}  // namespace attn
