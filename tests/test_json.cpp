// The --json document: key order, the float32 number format, non-finite values, strict RFC 8259.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "inputs/embeddings.hpp"
#include "lessons/lessons.hpp"
#include "render/json.hpp"

using namespace attn;
using ojson = nlohmann::ordered_json;

TEST_CASE("floats are written as the shortest decimal that reads back as the same float32", "[json]") {
  ojson j = ojson::array({static_cast<double>(0.1f), static_cast<double>(0.4419f), static_cast<double>(1.0f / 3.0f),
                          static_cast<double>(2.0f), static_cast<double>(-1.5e-7f), static_cast<double>(3.4e38f)});
  CHECK(dump_json(j) == "[0.1, 0.4419, 0.33333334, 2, -1.5e-07, 3.4e+38]\n");
}

TEST_CASE("inf, -inf and nan become the strings \"inf\", \"-inf\", \"nan\"", "[json]") {
  const double inf = std::numeric_limits<double>::infinity();
  ojson j = ojson::array({inf, -inf, std::nan(""), -std::nan("")});
  CHECK(dump_json(j) == "[\"inf\", \"-inf\", \"nan\", \"nan\"]\n");
}

TEST_CASE("a negative zero is written as -0.0, which parsers read back as a negative zero, not the integer 0", "[json]") {
  ojson j = ojson::array({-0.0, 0.0, static_cast<double>(-1e-45f)});
  const std::string text = dump_json(j);
  CHECK(text == "[-0.0, 0, -1e-45]\n");
  const auto back = ojson::parse(text);
  CHECK(back[0].is_number_float());
  CHECK(std::signbit(back[0].get<double>()));
  CHECK_FALSE(std::signbit(back[1].get<double>()));
}

TEST_CASE("nested arrays go one row per line, and objects keep their insertion order", "[json]") {
  ojson j;
  j["zeta"] = 1;
  j["alpha"] = ojson::array({ojson::array({1.5, 2.5}), ojson::array({3.5, 4.5})});
  j["empty"] = ojson::array();
  j["text"] = "quote \" and \xff";
  CHECK(dump_json(j) ==
        "{\n"
        "  \"zeta\": 1,\n"
        "  \"alpha\": [\n"
        "    [1.5, 2.5],\n"
        "    [3.5, 4.5]\n"
        "  ],\n"
        "  \"empty\": [],\n"
        "  \"text\": \"quote \\\" and \xEF\xBF\xBD\"\n"
        "}\n");
}

TEST_CASE("a lesson's document has the documented keys in order, and parses back", "[json]") {
  const Inputs in = load_embeddings(default_embeddings_path());
  const Trace t = run_simple(in, {});
  const std::string text = render_json(t);
  const auto doc = ojson::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : doc.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema_version", "lesson", "config", "inputs", "modules", "steps"});
  CHECK(doc["schema_version"] == kJsonSchemaVersion);
  CHECK(doc["lesson"] == "simple");
  CHECK(doc["config"]["query"] == 1);
  CHECK(doc["inputs"]["tokens"][1] == "journey");
  CHECK(static_cast<float>(doc["inputs"]["embeddings"][1][1].get<double>()) == 0.87f);
  REQUIRE(doc["steps"].size() == t.steps.size());
  const auto& scores = doc["steps"][2];
  std::vector<std::string> step_keys;
  for (const auto& [k, v] : scores.items()) step_keys.push_back(k);
  CHECK(step_keys == std::vector<std::string>{"id", "title", "explanation", "code", "shape", "data"});
  CHECK(scores["id"] == "attn_scores_2");
  CHECK(scores["shape"] == ojson::array({6}));
  // Each number reads back as exactly the float32 the lesson computed.
  for (std::size_t i = 0; i < 6; ++i)
    CHECK(static_cast<float>(scores["data"][i].get<double>()) == t.step("attn_scores_2").tensor(i));
  // 0-d tensors are plain numbers with shape [].
  CHECK(doc["steps"][4]["shape"] == ojson::array());
  CHECK(doc["steps"][4]["data"].is_number());
}

TEST_CASE("a step of an integer dtype is written as JSON integers and printed as PyTorch prints int64", "[json]") {
  LessonConfig cfg = book_config("gqa");
  cfg.heads = 12;
  cfg.kv_groups = 4;
  cfg.d_out = 12;
  const Trace t = run_gqa(load_embeddings(default_embeddings_path()), cfg);
  const auto doc = ojson::parse(render_json(t));
  for (const auto& s : doc["steps"]) {
    if (s["id"] != "kv_group_of_head") continue;
    CHECK(s["data"].dump() == "[0,0,0,1,1,1,2,2,2,3,3,3]");
    for (const auto& v : s["data"]) CHECK(v.is_number_integer());
  }
  CHECK(t.step("kv_group_of_head").integer);
  CHECK_FALSE(t.step("keys").integer);
}

TEST_CASE("every JSON attn writes escapes C0, DEL and C1 alike and parses back to the same string", "[json][hostile]") {
  std::string controls;  // U+0000-U+001F, DEL, U+0080-U+009F
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  controls += '\x7f';
  for (int c = 0x80; c < 0xa0; ++c) controls += {'\xc2', static_cast<char>(c)};
  const std::string text = "a" + controls + "\xc3\xa9\xe2\x80\xae" "b";  // then é and U+202E, which JSON keeps
  std::string escaped = "\"a\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r";
  for (int c = 0x0e; c < 0x20; ++c) escaped += "\\u00" + std::string(c < 0x10 ? "0" : "1") + "0123456789abcdef"[c % 16];
  escaped += "\\u007f";
  for (int c = 0x80; c < 0xa0; ++c) escaped += "\\u00" + std::string(c < 0x90 ? "8" : "9") + "0123456789abcdef"[c % 16];
  const std::string controls_escaped = escaped;
  escaped += "\xc3\xa9\xe2\x80\xae" "b\"";
  // --json's strings, and every other document: nlohmann's json and ordered_json, on one line or indented.
  CHECK(dump_json(ojson(text)) == escaped + "\n");
  CHECK(json_text(ojson(text)) == escaped);
  CHECK(json_text(nlohmann::json(text)) == escaped);
  CHECK(json_text(nlohmann::json{{"k", text}}, 1) == "{\n \"k\": " + escaped + "\n}");
  // As ASCII (the live page's data): the same escapes, é and U+202E as \u too.
  CHECK(json_text(nlohmann::json(text), -1, true) == controls_escaped + "\\u00e9\\u202eb\"");
  for (const std::string& written : {json_text(ojson(text)), json_text(nlohmann::json(text), -1, true)})
    CHECK(nlohmann::json::parse(written).get<std::string>() == text);
  // Not UTF-8: U+FFFD, as the JSON format writes a path from outside.
  CHECK(json_text(ojson("x\xff\x7f")) == "\"x\xef\xbf\xbd\\u007f\"");
}
