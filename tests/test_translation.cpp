// The translations (data/lessons/<language>/, docs/architecture.md "Lesson text"): complete and up to date,
// really in their language, chosen by --lang or the environment as gettext reads it, and changing the words
// only: the numbers, shapes and code of every lesson are the same in each language.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "text/words.hpp"
#include "layout_checks.hpp"
#include "support.hpp"

using namespace attn;
using json = nlohmann::json;

namespace {

namespace fs = std::filesystem;

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every content file's name: data/lessons/<name>.json.
std::vector<std::string> content_names() {
  std::vector<std::string> names;
  for (const auto& file : fs::directory_iterator(ATTN_SOURCE_DIR "/data/lessons"))
    if (file.is_regular_file() && file.path().extension() == ".json") names.push_back(file.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Whether `text` has a letter of `language`'s script (Cyrillic for ru): a translation left in English has none.
bool in_script(const std::string& text, const std::string& language) {
  return language != "ru" || attn_test::has_cyrillic(text);
}

// Whether English text says something in words: two plain words in a row outside its placeholders. A piece
// that is a formula around placeholders ("num_heads = {h}: {sharing}", "## attn {lesson}: {title}") may read
// the same in every language.
bool has_prose(const std::string& english) {
  const std::string bare = std::regex_replace(english, std::regex(R"(\{[^{}]*\})"), " ");
  return std::regex_search(bare, std::regex(R"((^|\s)[A-Za-z]+[,.;:]?\s+[A-Za-z]+[,.;:]?(\s|$))"));
}

// The words of `text` that mix Cyrillic and Latin letters ("однoголовых" typed with a Latin o): a reader's
// search for the word finds nothing, and a screen reader stumbles.
std::vector<std::string> mixed_words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  bool latin = false, cyrillic = false;
  const auto end_word = [&] {
    if (latin && cyrillic) out.push_back(word);
    word.clear();
    latin = cyrillic = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (std::isalpha(b)) {
      latin = true;
      word += text[i];
    } else if ((b == 0xD0 || b == 0xD1) && i + 1 < text.size()) {
      cyrillic = true;
      word += text.substr(i, 2);
      ++i;
    } else {
      end_word();
    }
  }
  end_word();
  return out;
}

std::string run_json(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = run_cli(args, out, err);
  INFO(err.str());
  REQUIRE(status == 0);
  return out.str();
}

// The document without its words: every "title" and "explanation" taken out, wherever they are, and attn
// heads' "head_notes" (words too: "previous token (0.62)").
json without_words(json j) {
  if (j.is_object()) {
    j.erase("title");
    j.erase("explanation");
    j.erase("head_notes");
    for (auto& [k, v] : j.items()) v = without_words(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = without_words(v);
  }
  return j;
}

// Every "title" and "explanation" of a document, with where it is.
void words_of(const json& j, const std::string& where, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    const std::string id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>() : "";
    for (const char* key : {"title", "explanation"})
      if (j.contains(key) && j[key].is_string()) out.emplace_back(where + "/" + id + "/" + key, j[key].get<std::string>());
    for (const auto& [k, v] : j.items()) words_of(v, where + "/" + k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) words_of(j[i], where, out);
  }
}

}  // namespace

TEST_CASE("translations: every piece of English text has a fresh translation in each language", "[translation]") {
  for (const std::string& language : supported_languages()) {
    if (language == "en") continue;
    REQUIRE(plural_rule(language) != nullptr);
    for (const std::string& name : content_names()) {
      const std::string file = std::string(ATTN_SOURCE_DIR "/data/lessons/") + language + "/" + name + ".json";
      INFO(file << " (attn-docgen translation " << language << " data/lessons/" << name << ".json " << file
                << " lists what is missing or stale)");
      REQUIRE(fs::is_regular_file(file));
      const auto content = load_lesson_content(name, language);
      CHECK(content->stale_entries().empty());
      std::size_t checked = 0;
      for (const std::string& path : content->translatable_paths()) {
        INFO(path << ": " << content->english(path));
        const auto text = content->fresh_translation(path);
        REQUIRE(text.has_value());
        if (has_prose(content->english(path))) CHECK(in_script(*text, language));
        CHECK(mixed_words(*text).empty());
        // An English plural that says the count only past one ("{h|its one head|all # heads}") is a switch
        // between one and many, which a language whose "one" holds 21 too (Russian) cannot make: its first
        // form must say the count ("# голова"), or 21 heads would read "its only head".
        if (plural_rule(language)->form(21) == 0) {
          const std::vector<Plural> english = plurals(content->english(path)), translated = plurals(*text);
          for (const Plural& e : english) {
            if (e.forms.front().find('#') != std::string::npos || e.forms.back().find('#') == std::string::npos) continue;
            const bool count_before = text->find("{" + e.name + "} {" + e.name + "|") != std::string::npos;  // "{h} {h|голова|..."
            for (const Plural& t : translated)
              if (t.name == e.name && !count_before) CHECK(t.forms.front().find('#') != std::string::npos);
          }
        }
        // The spaces a piece starts or ends with are where it joins others ("  |  keys", "Lesson 1 of 2: "): kept.
        const auto edges = [](const std::string& t) {
          const auto first = t.find_first_not_of(' '), last = t.find_last_not_of(' ');
          return first == std::string::npos ? std::make_pair(t.size(), std::size_t{0})
                                            : std::make_pair(first, t.size() - 1 - last);
        };
        if (!text->empty()) CHECK(edges(*text) == edges(content->english(path)));
        ++checked;
      }
      CHECK(checked > 0);
      // No entry for a piece that is not translated (code, option help, errors) or no longer exists.
      const json doc = json::parse(read_text_file(file));
      for (const auto& [path, entry] : doc.at("entries").items()) {
        INFO(path);
        const auto all = content->paths();
        REQUIRE(std::find(all.begin(), all.end(), path) != all.end());
        CHECK(content->translatable(path));
      }
    }
  }
}

TEST_CASE("translations: the English of a pure code or help piece is never asked for", "[translation]") {
  const auto content = load_lesson_content("mha", "");
  CHECK_FALSE(content->translatable("steps/context_vecs/code"));
  CHECK_FALSE(content->translatable("phrases/help_d_out"));
  CHECK_FALSE(content->translatable("phrases/notebook_module"));
  CHECK(content->translatable("steps/context_vecs/title"));
  CHECK(content->translatable("lesson/title"));
}

TEST_CASE("translations: the language comes from --lang, else the environment as gettext reads it", "[translation]") {
  const auto language = [](std::map<std::string, std::string> vars) {
    return language_of_environment([&vars](const char* name) { return vars.count(name) ? vars.at(name) : ""; });
  };
  CHECK(language({{"LANG", "ru_RU.UTF-8"}}) == "ru");
  CHECK(language({{"LANG", "ru"}}) == "ru");
  CHECK(language({{"LC_MESSAGES", "ru_UA.UTF-8@euro"}}) == "ru");
  CHECK(language({{"LANG", "en_US.UTF-8"}}).empty());
  CHECK(language({{"LANG", "de_DE.UTF-8"}}).empty());  // a language attn does not speak: English, quietly
  CHECK(language({}).empty());
  // LC_ALL before LC_MESSAGES before LANG.
  CHECK(language({{"LC_ALL", "en_GB.UTF-8"}, {"LANG", "ru_RU.UTF-8"}}).empty());
  CHECK(language({{"LC_ALL", "ru_RU.UTF-8"}, {"LC_MESSAGES", "en_US.UTF-8"}}) == "ru");
  CHECK(language({{"LC_MESSAGES", "ru_RU.UTF-8"}, {"LANG", "en_US.UTF-8"}}) == "ru");
  // LANGUAGE's list first, its first language attn speaks, but only when the locale is not C.
  CHECK(language({{"LANGUAGE", "de:ru:en"}, {"LANG", "en_US.UTF-8"}}) == "ru");
  CHECK(language({{"LANGUAGE", "en:ru"}, {"LANG", "ru_RU.UTF-8"}}).empty());
  CHECK(language({{"LANGUAGE", "ru"}, {"LANG", "C"}}).empty());
  CHECK(language({{"LANGUAGE", "ru"}, {"LC_ALL", "C.UTF-8"}}).empty());
  CHECK(language({{"LANGUAGE", "ru"}}).empty());  // no locale at all is C's
  CHECK(language({{"LANGUAGE", "fr:de"}, {"LANG", "ru_RU.UTF-8"}}).empty());  // only the list counts: English

  // The environment's language speaks when --lang is not given; --lang wins.
  const auto title = [](const Terminal& term, std::vector<std::string> args) {
    std::ostringstream out, err;
    std::istringstream in;
    REQUIRE(run_cli(args, out, err, in, term) == 0);
    return json::parse(out.str()).at("steps").at(2).at("title").get<std::string>();
  };
  Terminal russian;
  russian.locale["LANG"] = "ru_RU.UTF-8";
  const std::string ru = title(russian, {"simple", "--json"});
  CHECK(in_script(ru, "ru"));
  CHECK(title(Terminal{}, {"simple", "--json", "--lang", "ru"}) == ru);
  CHECK_FALSE(in_script(title(russian, {"simple", "--json", "--lang", "en"}), "ru"));
  CHECK_FALSE(in_script(title(Terminal{}, {"simple", "--json"}), "ru"));

  std::ostringstream out, err;
  CHECK(run_cli({"simple", "--lang", "xx"}, out, err) == 2);
  CHECK(err.str() == "attn: --lang: expected en or ru, got 'xx' (see 'attn simple --help')\n");
  CHECK(out.str().empty());
}

TEST_CASE("translations: attn tour --lang ru --json has every title and explanation in Russian, and the same data",
          "[translation]") {
  const json en = json::parse(run_json({"tour", "--json"}));
  const json ru = json::parse(run_json({"tour", "--json", "--lang", "ru"}));
  std::vector<std::pair<std::string, std::string>> words;
  words_of(ru, "", words);
  REQUIRE(words.size() > 100);
  for (const auto& [where, text] : words) {
    INFO(where << ": " << text);
    CHECK((text.empty() || in_script(text, "ru")));
  }
  // Numbers, shapes, code, config, tokens: byte for byte the English document's.
  CHECK(without_words(ru).dump() == without_words(en).dump());
}

TEST_CASE("translations: LANG=ru_RU.UTF-8 attn simple speaks Russian with the numbers of English", "[translation][e2e]") {
  // The process's own environment, as a shell gives it (the test runner sets LC_ALL=C.UTF-8: unset here).
  const std::string attn = attn_test::quote(ATTN_EXE);
  const attn_test::Run ru = attn_test::shell("env -u LC_ALL -u LANGUAGE LANG=ru_RU.UTF-8 " + attn + " simple");
  const attn_test::Run en = attn_test::shell("env -u LC_ALL -u LANGUAGE LANG=en_US.UTF-8 " + attn + " simple");
  const attn_test::Run c = attn_test::shell("env LC_ALL=C LANGUAGE=ru LANG=ru_RU.UTF-8 " + attn + " simple");
  REQUIRE(ru.status == 0);
  REQUIRE(en.status == 0);
  CHECK(in_script(ru.out, "ru"));
  CHECK_FALSE(in_script(en.out, "ru"));
  CHECK(c.out == en.out);  // LC_ALL=C wins over LANG, and LANGUAGE is not read in the C locale
  // The tensors, line for line: every line that prints numbers ("tensor(...)" and its rows) is the same.
  const auto numbers = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find("tensor(") != std::string::npos || line.rfind("        [", 0) == 0 || line.rfind("         ", 0) == 0)
        lines.push_back(line);
    return lines;
  };
  CHECK(numbers(ru.out).size() > 10);
  CHECK(numbers(ru.out) == numbers(en.out));
}
