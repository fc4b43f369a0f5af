// The lessons' words as content (data/lessons, src/text/content.hpp): every step a lesson adds has its
// text, every piece of text is used and its placeholders are given, the sources keep no prose, the docs
// pages name the content's steps, and translations fall back and say when they are stale.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "core/errors.hpp"
#include "inputs/sources.hpp"
#include "run/run.hpp"
#include "text/words.hpp"
#include "lessons/registry.hpp"
#include "support.hpp"

using namespace attn;
using json = nlohmann::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every C++ string literal token of a source (comments and character literals skipped; a raw string
// R"d(...)d" is one token), as written between its quotes.
std::vector<std::string> string_literals(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) break;
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i) + 2;
    } else if (s.compare(i, 2, "R\"") == 0 && (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1])))) {
      const std::size_t open = s.find('(', i);
      const std::string end = ")" + s.substr(i + 2, open - i - 2) + "\"";
      const std::size_t close = s.find(end, open);
      out.push_back(s.substr(open + 1, close - open - 1));
      i = close + end.size();
    } else if (s[i] == '"' || s[i] == '\'') {
      const char quote = s[i];
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != quote) j += s[j] == '\\' ? 2 : 1;
      if (quote == '"') out.push_back(s.substr(i + 1, j - i - 1));
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

std::size_t words(const std::string& s) {
  std::istringstream in(s);
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// The string literals of 8 or more words in a folder's .cpp files: how many, and each with its file.
std::pair<std::size_t, std::string> long_literals(const std::string& folder) {
  std::size_t long_ones = 0;
  std::string which;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    if (e.path().extension() != ".cpp") continue;
    for (const auto& lit : string_literals(read_file(e.path().string())))
      if (words(lit) >= 8) {
        ++long_ones;
        which += e.path().filename().string() + ": \"" + lit + "\"\n";
      }
  }
  return {long_ones, which};
}

// A step id pattern ("queries_{at}", "{path}.weight") as a regex of the ids it makes.
std::regex id_regex(const std::string& pattern) {
  std::string re;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{') {
      i = pattern.find('}', i);
      re += "[A-Za-z0-9_.]+";
    } else if (std::isalnum(static_cast<unsigned char>(pattern[i])) || pattern[i] == '_') {
      re += pattern[i];
    } else {
      re += std::string("\\") + pattern[i];
    }
  }
  return std::regex(re);
}

bool matches_any(const std::string& id, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns)
    if (std::regex_match(id, id_regex(p))) return true;
  return false;
}

// The runs that reach every step and every variant of the text: every golden configuration (seeds, --query,
// --qkv-bias, --text, --model, --kv-groups, --prompt, dropout, ...) and each lesson's other modes.
// The ids of the steps the input source of a run's arguments makes (--text, --model), loaded as the run
// loads them.
std::set<std::string> input_step_ids(const std::vector<std::string>& args) {
  InputOptions opt;
  for (std::size_t i = 1; i + 1 < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string& v = args[i + 1];
    if (a == "--text") opt.text = v;
    if (a == "--d-in") opt.d_in = std::stoul(v);
    if (a == "--embedding-seed") opt.embedding_seed = std::stoull(v);
    if (a == "--model") opt.model = v;
    if (a == "--layer") opt.layer = std::stoul(v);
  }
  std::set<std::string> ids;
  if (!opt.text && opt.model.empty()) return ids;
  std::istringstream no_input;
  for (const InputStep& s : load_inputs(opt, no_input, [](std::size_t) {}).steps) ids.insert(s.id);
  REQUIRE(!ids.empty());
  return ids;
}

std::vector<std::vector<std::string>> every_kind_of_run() {
  std::vector<std::vector<std::string>> runs;
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons/index.json");
  REQUIRE(in.good());
  const json index = json::parse(in);
  for (const auto& c : index.at("cases")) {
    std::vector<std::string> args{c.at("lesson").get<std::string>(), "--json"};
    for (const auto& a : c.at("args")) {
      std::string arg = a;
      if (arg.rfind("inputs/", 0) == 0 || arg.rfind("models/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      args.push_back(arg);
    }
    runs.push_back(args);
  }
  // The input steps' clauses only some texts need (data/lessons/inputs.json): past 12 tokens, and a
  // character split into bytes.
  runs.push_back({"simple", "--text", "a b c d e f g h i j k l \xf0\x9f\xa4\x96", "--json"});
  runs.push_back({"kv-cache", "--estimate", "--json"});
  runs.push_back({"gqa", "--kv-cache", "--json"});
  runs.push_back({"kv-cache", "--estimate"});  // the text view, which lays out its table
  runs.push_back({"heads", "--model", ATTN_TESTS_DIR "/golden/models/tiny-f32", "--layer", "2", "--json"});  // one block
  // The notebook's own words (render/notebook.cpp): a lesson, the tour, both dropout notes and --model's cells.
  runs.push_back({"tour", "--format", "ipynb"});
  runs.push_back({"dropout", "--format", "py"});
  runs.push_back({"dropout", "--dropout-rng", "mkl", "--format", "py"});
  runs.push_back({"simple", "--model", ATTN_TESTS_DIR "/golden/models/tiny-f32", "--format", "py"});
  return runs;
}

}  // namespace

TEST_CASE("input steps' text: at most 41 string literals of 8 or more words stay in src/inputs/*.cpp", "[content]") {
  // Those left are option help, error messages (English in every language) and Python in the notebook's
  // code; an input step's title and explanation are data/lessons/inputs.json's, so a new one written here
  // in C++ shows up as one more.
  const auto [long_ones, which] = long_literals(ATTN_SOURCE_DIR "/src/inputs");
  INFO(which);
  CHECK(long_ones <= 41);
  CHECK(long_ones >= 30);  // the counter reads the folder (it held 41 when the words moved out)
}

TEST_CASE("lesson text: at most 15 string literals of 8 or more words stay in src/lessons/*.cpp", "[content]") {
  const auto [long_ones, which] = long_literals(ATTN_SOURCE_DIR "/src/lessons");
  INFO(which);
  CHECK(long_ones <= 15);
  // The counter counts: a literal of eight words, one of seven, one in a comment, one raw.
  CHECK(string_literals("f(\"a b c d e f g h\", \"a b c d e f g\"); // \"x y\"\nR\"(r s)\"").size() == 3);
  CHECK(words("a b c d e f g h") == 8);
}

TEST_CASE("lesson text: every step a lesson adds has text, and every piece of text is used", "[content]") {
  std::map<std::string, std::set<std::string>> ids;  // lesson -> the step ids its runs added
  // Only this case's runs count as uses (the cache is the process's: other cases use pieces too).
  lesson_content("shared").forget_used();
  lesson_content("inputs").forget_used();
  for (const Lesson& lesson : lessons()) lesson_content(lesson.info.name).forget_used();
  (void)make_lessons();  // the registry's entries read their option help and titles
  for (const auto& args : every_kind_of_run()) {
    const attn_test::Run r = attn_test::run(args);
    INFO("attn " << args[0] << " ... : " << r.err);
    // A placeholder the lesson does not give, or a step with no text, stops the lesson with an error.
    REQUIRE(r.status == 0);
    if (args.back() != "--json" && args[1] != "--json") continue;
    // The steps that made the inputs (--text, --model) are the input source's, with text of their own
    // (data/lessons/inputs.json, checked below): not the lesson's content.
    const std::set<std::string> made_inputs = input_step_ids(args);
    const json doc = json::parse(r.out);
    for (const auto& step : doc.at("steps")) {
      const std::string id = step.at("id").get<std::string>();
      if (made_inputs.count(id) == 0) ids[args[0]].insert(id);
    }
  }
  // The lesson's errors are content too: the runs that meet them.
  CHECK_THAT(attn_test::run({"kv-cache", "--random", "1x4"}).err, Catch::Contains("needs at least 2 tokens"));
  CHECK_THAT(attn_test::run({"kv-cache", "--prompt", "6"}).err, Catch::Contains("leaves no token to decode"));
  const Content& shared = lesson_content("shared");
  for (const Lesson& lesson : lessons()) {
    const Content& own = lesson_content(lesson.info.name);
    std::vector<std::string> patterns = own.step_patterns();
    patterns.insert(patterns.end(), shared.step_patterns().begin(), shared.step_patterns().end());
    for (const auto& id : ids[lesson.info.name]) {
      INFO(lesson.info.name << ": step " << id << " has no text in " << own.path());
      CHECK(matches_any(id, patterns));
    }
    for (const auto& path : own.paths()) {
      INFO(own.path() << ": " << path << " is used by no run of the lesson (a step it no longer adds?)");
      CHECK(own.used().count(path) == 1);
    }
  }
  for (const auto& path : shared.paths()) {
    INFO(shared.path() << ": " << path << " is used by no lesson");
    CHECK(shared.used().count(path) == 1);
  }
  // The input steps' words: each title, explanation and phrase (their code is the input source's).
  const Content& made = lesson_content("inputs");
  for (const auto& path : made.translatable_paths()) {
    INFO(made.path() << ": " << path << " is used by no run (a step no input source makes?)");
    CHECK(made.used().count(path) == 1);
  }
}

TEST_CASE("lesson text: a placeholder the lesson does not give, or a malformed one, is an error", "[content]") {
  CHECK(fill("Scores of {who}", {{"who", "\"journey\""}}, "x") == "Scores of \"journey\"");
  CHECK(fill("{{literal}} {n}", {{"n", "3"}}, "x") == "{literal} 3");
  CHECK_THROWS_WITH(fill("Scores of {whom}", {{"who", "a"}}, "steps/x/title"),
                    Catch::Contains("steps/x/title uses {whom}, which the lesson does not give"));
  CHECK_THROWS_AS(placeholders("a {who"), std::invalid_argument);
  CHECK_THROWS_AS(placeholders("a who}"), std::invalid_argument);
  CHECK_THROWS_AS(placeholders("a {}"), std::invalid_argument);
  CHECK_THROWS_AS(placeholders("a {n:>4}"), std::invalid_argument);
  CHECK(placeholders("{a} {{b}} {c_2}") == std::vector<std::string>{"a", "c_2"});
  // In a content file, each is the file's InputError, naming the piece.
  const auto malformed = [](const std::string& text) {
    CHECK_THROWS_WITH(Content("x.json", text), Catch::Contains("x.json: malformed lesson content"));
  };
  malformed(R"({"steps": {"s": {"title": "T {who", "explanation": "", "code": ""}}})");
  malformed(R"({"steps": {"s": {"title": "T", "explanation": ""}}})");  // no code
  malformed(R"({"steps": {"s": {"title": "T", "explanation": "", "code": [1]}}})");
  malformed(R"({"steps": {"s": {"title": "T", "explanation": "", "code": "", "note": ""}}})");
  malformed(R"({"chapter": {}})");
  malformed("not json");
  // A piece the lesson asks for and the content lacks, or a variant it does not name.
  const Content c("x.json", R"({"steps": {"s": {"title": {"a": "A", "b": "B"}, "explanation": "", "code": ""}}})");
  CHECK(c.piece("steps/s/title", "b") == "B");
  CHECK_THROWS_AS(c.piece("steps/s/title", ""), std::logic_error);
  CHECK_THROWS_AS(c.piece("steps/s/title", "c"), std::logic_error);
  CHECK_THROWS_AS(c.piece("steps/t/title", ""), std::logic_error);
}

TEST_CASE("lesson text: a translation is one more file, falls back to English, and says what is stale",
          "[content]") {
  // The fixture: tests/data/content/lessons/fixture.json and its ru/ translation, found as bundled data.
  REQUIRE(::setenv("ATTN_DATA_DIR", ATTN_TESTS_DIR "/data/content", 1) == 0);
  const auto english = load_lesson_content("fixture", "");
  const auto ru = load_lesson_content("fixture", "ru");
  const auto missing = load_lesson_content("fixture", "xx");  // no such language: English
  ::unsetenv("ATTN_DATA_DIR");
  CHECK(english->piece("steps/scores/title", "") == "Scores of {who}");
  CHECK(ru->piece("steps/scores/title", "") == "Оценки {who}");                  // translated
  CHECK(ru->piece("steps/scores/explanation", "") == "One score per token.");    // not translated: English
  CHECK(ru->piece("steps/weights/explanation", "b") == "The second way.");
  CHECK(missing->piece("steps/scores/title", "") == "Scores of {who}");
  // The entry of variant "a" was translated from English that has changed since; the title's has not.
  CHECK(ru->stale_entries() == std::vector<std::string>{"steps/weights/explanation/a"});
  CHECK(english->stale_entries().empty());
  CHECK(text_hash("Scores of {who}") == "24d1336d50a148e1");  // FNV-1a 64, as the fixture records it
  CHECK(text_hash("") == "cbf29ce484222325");
  CHECK_THROWS_WITH(Content("e.json", "{}", "t.json", R"({"entries": {"k": {"text": "x"}}})"),
                    Catch::Contains("t.json: malformed translation"));

  // Every translation shipped with attn (data/lessons/<language>/) is up to date.
  for (const auto& dir : std::filesystem::directory_iterator(ATTN_SOURCE_DIR "/data/lessons")) {
    if (!dir.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      const std::string name = file.path().stem().string(), language = dir.path().filename().string();
      const auto translated = load_lesson_content(name, language);
      INFO(file.path().string() << ": entries whose English has changed since they were translated");
      CHECK(translated->stale_entries().empty());
    }
  }
}

TEST_CASE("lesson text: each docs/lessons page names the steps of its lesson's content", "[content]") {
  const std::vector<std::string>& shared = lesson_content("shared").step_patterns();
  for (const Lesson& lesson : lessons()) {
    std::string page = read_file(ATTN_SOURCE_DIR "/docs/lessons/" + lesson.info.name + ".md");
    for (std::size_t fence; (fence = page.find("```")) != std::string::npos;) page.erase(fence, 3);
    page = std::regex_replace(page, std::regex("<[a-z]+>"), "N");  // head_<h>_context_vec as head_N_context_vec
    std::set<std::string> named;  // every `code span` of the page
    const std::regex span("`([^`\n]+)`");
    for (auto it = std::sregex_iterator(page.begin(), page.end(), span); it != std::sregex_iterator(); ++it)
      named.insert((*it)[1]);
    const Content& own = lesson_content(lesson.info.name);
    // Each step of the content is named on the page (a pattern's placeholder as the page writes it: queries_P).
    for (const auto& pattern : own.step_patterns()) {
      INFO("docs/lessons/" << lesson.info.name << ".md does not name the step " << pattern);
      CHECK(std::any_of(named.begin(), named.end(),
                        [&](const std::string& n) { return std::regex_match(n, id_regex(pattern)); }));
    }
    // Each id in the first column of the page's table of steps is a step of the content.
    const std::size_t steps = page.find("\n| id | shape |");
    REQUIRE(steps != std::string::npos);
    std::istringstream table(page.substr(steps));
    std::string line;
    std::getline(table, line);
    std::getline(table, line);
    std::size_t rows = 0;
    while (std::getline(table, line) && line.rfind("| ", 0) == 0) {
      if (line.rfind("| `", 0) != 0) continue;
      const std::string first = line.substr(2, line.find(" |", 2) - 2);
      for (auto it = std::sregex_iterator(first.begin(), first.end(), span); it != std::sregex_iterator(); ++it) {
        const std::string id = (*it)[1];
        // Code, an option or a suffix (`.bias`), not an id.
        if (id.find(' ') != std::string::npos || id.find('-') == 0 || id.find('.') == 0) continue;
        ++rows;
        INFO("docs/lessons/" << lesson.info.name << ".md lists " << id << ", a step the content does not have");
        CHECK((matches_any(id, own.step_patterns()) || matches_any(id, shared)));
      }
    }
    CHECK(rows > 0);
  }
}

TEST_CASE("a run's language reaches the lessons' words: a translated entry replaces the English, the rest stays",
          "[content][run]") {
  // A translation of one title of simple, found as bundled data is ($ATTN_DATA_DIR first).
  const attn_test::Scratch dir;
  const std::string english = lesson_content("simple").english("steps/attn_weights_2/title");
  const std::string fixture_language = "xx-test";
  std::filesystem::create_directories(dir.dir + "/lessons/" + fixture_language);
  dir.file("lessons/" + fixture_language + "/simple.json",
           json({{"language", fixture_language},
                 {"entries", {{"steps/attn_weights_2/title", {{"source", text_hash(english)}, {"text", "Gewichte"}}}}}})
               .dump());
  const char* old = std::getenv("ATTN_DATA_DIR");
  const std::string saved = old ? old : "";
  ::setenv("ATTN_DATA_DIR", dir.dir.c_str(), 1);
  const Lesson& simple = *find_lesson("simple");
  Request request{"simple", {LessonRun{&simple, &simple.modes.front(), simple.modes.front().defaults}}, {}, {},
                  Words(fixture_language)};
  const auto renderer = find_format("json")->make(RenderOptions{});
  std::istringstream in;
  std::ostringstream err;
  const Document translated = run(request, *renderer, RunStreams{in, err, false});
  request.words = Words();
  const Document plain = run(request, *renderer, RunStreams{in, err, false});
  if (old) ::setenv("ATTN_DATA_DIR", saved.c_str(), 1); else ::unsetenv("ATTN_DATA_DIR");
  CHECK(translated.sections.at(0).step("attn_weights_2").title == "Gewichte");
  CHECK(plain.sections.at(0).step("attn_weights_2").title != "Gewichte");
  CHECK(plain.sections.at(0).step("attn_weights_2").title.find("weights") != std::string::npos);
  // Every other step is English in both.
  CHECK(translated.sections.at(0).step("attn_scores_2").title == plain.sections.at(0).step("attn_scores_2").title);
  CHECK(translated.sections.at(0).step("attn_weights_2").tensor.size() == 6);
}

// Every step's code is Python, as the book's is: a student pastes it. The runs are those above, which reach
// every step and every variant of the text (so every code line the content has, filled as each option fills
// it: --heads, --qkv-bias, --text, --model, --kv-groups, --prompt, ...), then the tour, which takes its
// lessons from the registry. Python's own parser judges (ast.parse, the JSON's code as a script gets it; the
// text view only puts ">>>" and "..." before its lines). A docs-tier case: it runs python3.
TEST_CASE("lesson text: every step's code of every lesson parses as Python (ast.parse)", "[docs]") {
  std::vector<std::vector<std::string>> runs;
  for (const auto& args : every_kind_of_run())
    if (std::find(args.begin(), args.end(), "--json") != args.end()) runs.push_back(args);
  runs.push_back({"tour", "--json"});
  json blocks = json::array();  // {"where": "attn ... | step", "code": "..."}, one per distinct code of a run
  std::set<std::string> lessons_seen;
  for (const auto& args : runs) {
    const attn_test::Run r = attn_test::run(args);
    std::string where = "attn";
    for (const auto& a : args) where += " " + a;
    INFO(where << ": " << r.err);
    REQUIRE(r.status == 0);
    const json doc = json::parse(r.out);
    const json traces = doc.contains("lessons") ? doc.at("lessons") : json::array({doc});
    std::set<std::string> codes;
    for (const auto& trace : traces) {
      lessons_seen.insert(trace.at("lesson").get<std::string>());
      for (const auto& step : trace.at("steps")) {
        const std::string code = step.at("code").get<std::string>();
        if (codes.insert(code).second)
          blocks.push_back(json{{"where", where + " | " + step.at("id").get<std::string>()}, {"code", code}});
      }
    }
  }
  // Every lesson of the registry was run, and the tour ran them all.
  for (const auto& name : attn_test::lesson_names()) {
    INFO(name);
    CHECK(lessons_seen.count(name) == 1);
  }
  // The parser is asked something it must refuse first, the line issue 29 found in mha-wrapper, so a
  // script that parses nothing cannot pass.
  const json refusal_block = {{"where", "the refusal it must give"}, {"code", "print(mha.heads.0.W_query.weight)"}};
  blocks.insert(blocks.begin(), refusal_block);
  const attn_test::Scratch scratch;
  const std::string file = scratch.file("code.json", blocks.dump());
  const std::string script =
      "import ast, json, sys\n"
      "blocks = json.load(open(sys.argv[1]))\n"
      "parsed = 0\n"
      "for b in blocks:\n"
      "    try:\n"
      "        ast.parse(b['code'])\n"
      "        parsed += 1\n"
      "    except SyntaxError as e:\n"
      "        print('%s: %r: %s' % (b['where'], b['code'], e.msg))\n"
      "print('parsed', parsed)\n";
  const attn_test::Run r = attn_test::shell("/usr/bin/python3 -c " + attn_test::quote(script) + " " + file);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const std::string refusal = "the refusal it must give: 'print(mha.heads.0.W_query.weight)'";
  CHECK(r.out.rfind(refusal, 0) == 0);  // refused, and first
  const std::size_t lines = static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '\n'));
  CHECK(lines == 2);  // the refusal, then the count: no code of any lesson was refused
  CHECK_THAT(r.out, Catch::EndsWith("parsed " + std::to_string(blocks.size() - 1) + "\n"));
  CHECK(blocks.size() > 3000u);  // 3,704 on 2026-11-26 (the refusal and 3,703 distinct codes of a run)
}

namespace {

// Each lesson mode's arguments: the lesson, and the mode's selector flag for a mode after the first.
std::vector<std::vector<std::string>> every_mode() {
  std::vector<std::vector<std::string>> out;
  for (const Lesson& lesson : lessons())
    for (const LessonMode& mode : lesson.modes) {
      std::vector<std::string> args{lesson.info.name};
      if (mode.selector) args.push_back(lesson_option(*mode.selector).name);
      args.push_back("--color");
      args.push_back("never");
      out.push_back(args);
    }
  return out;
}

// The lesson options of `args`' mode that count something from 1 (their range starts at 1: "1 to 64").
std::vector<std::string> counts_from_one(const std::vector<std::string>& args) {
  const Lesson& lesson = *find_lesson(args[0]);
  const LessonMode* mode = &lesson.modes.front();
  for (const LessonMode& m : lesson.modes)
    if (m.selector && std::find(args.begin(), args.end(), lesson_option(*m.selector).name) != args.end()) mode = &m;
  std::vector<std::string> out;
  for (const OptionUse& use : mode->options) {
    const OptionSpec& spec = lesson_option(use.opt);
    if (!spec.is_flag() && spec.range.rfind("1 to ", 0) == 0) out.push_back(spec.spellings().front());
  }
  return out;
}

}  // namespace

TEST_CASE("lesson text: with one of anything no sentence says \"1 tokens\" (every lesson's output at its smallest)",
          "[content]") {
  // The plural nouns: every word that follows a count of 2 or more in any lesson's book output, and the
  // last word of every plural's last form in the content ({n|token|tokens}).
  std::set<std::string> plural_nouns;
  const std::regex counted(R"((?:^|[^\w.,])(?:[2-9]|[1-9]\d+) ([a-z][a-z_-]*s)\b)");
  const auto collect = [&](const std::string& text) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), counted); it != std::sregex_iterator(); ++it)
      plural_nouns.insert((*it)[1]);
  };
  for (const auto& args : every_mode()) {
    const attn_test::Run r = attn_test::run(args);
    REQUIRE(r.status == 0);
    collect(r.out);
  }
  std::vector<const Content*> contents{&lesson_content("shared")};
  for (const Lesson& lesson : lessons()) contents.push_back(&lesson_content(lesson.info.name));
  std::size_t content_plurals = 0;
  for (const Content* c : contents)
    for (const auto& path : c->paths())
      for (const Plural& p : plurals(c->english(path))) {
        ++content_plurals;
        const std::string& other = p.forms.back();
        const std::size_t word = other.find_last_of(' ');
        plural_nouns.insert(word == std::string::npos ? other : other.substr(word + 1));
      }
  CHECK(content_plurals >= 5);
  // The check can fail: the nouns it looks for include the book's own counts.
  for (const char* noun : {"tokens", "dims", "heads"}) {
    INFO(noun);
    CHECK(plural_nouns.count(noun) == 1);
  }

  // Every mode at its smallest input (one token, or two for kv-cache, which needs one to decode), from
  // --random and from --text, then with each option that counts from 1 set to 1, and with all of them.
  const std::regex one_of(R"((?:^|[^\w.,-])1 ([a-z][a-z_-]*)\b)");
  std::size_t checked = 0;
  for (const auto& mode_args : every_mode()) {
    for (const std::vector<std::string>& one : {std::vector<std::string>{"--random", "1x3"},
                                                std::vector<std::string>{"--text", "Hi"}}) {
      std::vector<std::string> base = mode_args;
      base.insert(base.end(), one.begin(), one.end());
      if (attn_test::run(base).status != 0) {  // a lesson that needs two tokens, or takes no input
        base = mode_args;
        if (one.front() == "--random") base.insert(base.end(), {"--random", "2x3"});
        else if (attn_test::run(mode_args).out.find("inputs:") != std::string::npos)
          base.insert(base.end(), {"--text", "Hi there"});
      }
      std::vector<std::vector<std::string>> runs{base};
      std::vector<std::string> all = base;
      for (const std::string& option : counts_from_one(mode_args)) {
        std::vector<std::string> with = base;
        with.insert(with.end(), {option, "1"});
        runs.push_back(with);
        all.insert(all.end(), {option, "1"});
      }
      runs.push_back(all);
      for (const auto& args : runs) {
        const attn_test::Run r = attn_test::run(args);
        std::string line;
        for (const auto& a : args) line += " " + a;
        if (r.status != 0) {  // a combination the lesson refuses (--heads 1 with gqa's --kv-groups 2) says so
          INFO("attn" << line << ": " << r.err);
          CHECK(r.status == 2);
          continue;
        }
        ++checked;
        for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), one_of); it != std::sregex_iterator(); ++it) {
          INFO("attn" << line << " says \"" << it->str() << "\"");
          CHECK(plural_nouns.count((*it)[1]) == 0);
        }
      }
    }
  }
  CHECK(checked >= 2 * every_mode().size());
}

TEST_CASE("lesson text: in Russian a count agrees with its noun (1 токен, 2 токена, 5 токенов) in every lesson's output",
          "[content]") {
  // The nouns: every form of every plural of the Russian content (data/lessons/ru/*.json) that follows its
  // count, with its category: a form of one word ({n|токен|токена|токенов}, after "{n} "), or the word after
  // the count in a form "всех # голов", each keyed with the word before the count too, because a case changes
  // the noun after it ("всех 3 голов" and "до 3 токенов" are right where "3 головы" and "3 токена" are). A (word before, noun) that two categories
  // share is left out: it says nothing.
  const PluralRule& rule = *plural_rule("ru");
  std::map<std::pair<std::string, std::string>, std::set<std::size_t>> categories;
  for (const auto& file : std::filesystem::directory_iterator(ATTN_SOURCE_DIR "/data/lessons")) {
    if (!file.is_regular_file() || file.path().extension() != ".json") continue;
    const auto c = load_lesson_content(file.path().stem().string(), "ru");
    for (const std::string& path : c->translatable_paths()) {
      const auto text = c->fresh_translation(path);
      if (!text) continue;
      for (const Plural& p : plurals(*text))
        for (std::size_t i = 0; i < p.forms.size(); ++i) {
          const std::string& form = p.forms[i];
          const auto hash = form.find('#');
          if (hash == std::string::npos) {
            // "{n} {n|токен|...}": the word before "{n}" in the text sets the case ("до {end} {end|токена|...").
            const std::string count = "{" + p.name + "} {" + p.name + "|";
            const auto at = text->find(count);
            std::string previous;
            if (at != std::string::npos && at > 0 && (*text)[at - 1] == ' ') {
              const auto start = text->find_last_of(' ', at - 2);
              previous = text->substr(start == std::string::npos ? 0 : start + 1, at - 1 - (start == std::string::npos ? 0 : start + 1));
              if (previous.find_first_of("{}") != std::string::npos) previous.clear();
            }
            if (form.find(' ') == std::string::npos && !form.empty()) categories[{previous, form}].insert(i);
            continue;
          }
          const std::string before = form.substr(0, hash), after = form.substr(hash + 1);
          if (after.empty() || after[0] != ' ') continue;
          const std::string word = after.substr(1, after.find(' ', 1) == std::string::npos ? std::string::npos : after.find(' ', 1) - 1);
          std::string previous = before;
          while (!previous.empty() && previous.back() == ' ') previous.pop_back();
          previous = previous.substr(previous.find_last_of(' ') == std::string::npos ? 0 : previous.find_last_of(' ') + 1);
          categories[{previous, word}].insert(i);
        }
    }
  }
  std::map<std::pair<std::string, std::string>, std::size_t> noun;
  for (const auto& [key, cats] : categories)
    if (cats.size() == 1) noun[key] = *cats.begin();
  INFO("Russian plural nouns found: " << noun.size());
  // The check can fail: the commonest noun is among them, in each of its forms.
  for (const char* form : {"токен", "токена", "токенов"}) REQUIRE(noun.count({"", form}) == 1);

  // A count (not part of a decimal or a shape), the word before it and the word after it.
  // The noun is looked ahead at, not taken, so it can be the next count's word before ("с 1 до 2 токенов").
  const std::regex counted(R"((?:^|([^\s\d.,]+) |[^\w.,])(\d+)(?= ([^\s,.;:()\[\]]+)))");
  std::size_t checked = 0, agreements = 0;
  for (const auto& mode_args : every_mode()) {
    for (const char* tokens : {"1x3", "2x3", "5x3", "21x3"}) {
      std::vector<std::vector<std::string>> runs;
      std::vector<std::string> base = mode_args;
      base.insert(base.end(), {"--lang", "ru", "--random", tokens});
      runs.push_back(base);
      for (const std::string& option : counts_from_one(mode_args))
        for (const char* n : {"1", "2", "5"}) {
          std::vector<std::string> with = base;
          with.insert(with.end(), {option, n});
          runs.push_back(with);
        }
      for (const auto& args : runs) {
        const attn_test::Run r = attn_test::run(args);
        if (r.status != 0) continue;  // a combination the lesson refuses; the English test checks the refusals
        ++checked;
        std::string line;
        for (const auto& a : args) line += " " + a;
        for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), counted); it != std::sregex_iterator(); ++it) {
          if ((*it)[2].length() > 18) continue;
          const std::pair<std::string, std::string> in_case{(*it)[1], (*it)[3]};
          const auto found = noun.find(categories.count(in_case) ? in_case : std::make_pair(std::string(), in_case.second));
          if (found == noun.end()) continue;
          ++agreements;
          INFO("attn" << line << " says \"" << it->str() << "\"");
          CHECK(rule.form(std::stoull((*it)[2])) == found->second);
        }
      }
    }
  }
  CHECK(agreements > 100);
  CHECK(checked >= 4 * every_mode().size());
}

TEST_CASE("lesson text: a plural has one form per category of the language and the count picks it", "[content]") {
  CHECK(placeholders("all {n} {n|token|tokens}") == std::vector<std::string>{"n", "n"});
  REQUIRE(plurals("{n|the one head|all # heads} of {m}").size() == 1);
  CHECK(plurals("{n|the one head|all # heads}").front().forms == std::vector<std::string>{"the one head", "all # heads"});
  for (const auto& [n, text] : std::vector<std::pair<std::string, std::string>>{
           {"0", "0 tokens, all 0 heads"}, {"1", "1 token, the one head"}, {"2", "2 tokens, all 2 heads"},
           {"21", "21 tokens, all 21 heads"}}) {
    CHECK(fill("{n} {n|token|tokens}, {n|the one head|all # heads}", {{"n", n}}, "x") == text);
  }
  CHECK_THROWS_WITH(fill("{n|token|tokens}", {{"n", "1,024"}}, "steps/x/title"),
                    Catch::Contains("steps/x/title: the plural {n|...} is given \"1,024\", not a whole number"));
  CHECK_THROWS_WITH(fill("{n|token|tokens}", {}, "x"), Catch::Contains("uses {n}"));
  // Russian's three forms: 1, 21 (one); 2-4, 22 (few); 0, 5-20, 11-14, 25 (many).
  const PluralRule* ru = plural_rule("ru");
  REQUIRE(ru != nullptr);
  CHECK(ru->categories.size() == 3);
  for (const auto& [n, form] : std::vector<std::pair<unsigned long long, std::size_t>>{
           {1, 0}, {21, 0}, {101, 0}, {2, 1}, {4, 1}, {22, 1}, {0, 2}, {5, 2}, {11, 2}, {12, 2}, {14, 2}, {25, 2}, {111, 2}})
    CHECK(ru->form(n) == form);
  CHECK(fill("{n} {n|токен|токена|токенов}", {{"n", "3"}}, "x", "ru") == "3 токена");
  CHECK(plural_rule("en")->form(1) == 0);
  CHECK(plural_rule("en")->form(0) == 1);
  CHECK(plural_rule("xx") == nullptr);
  // Checked when the content loads: English has two forms, a translation its language's number.
  const auto malformed = [](const std::string& text, const std::string& says) {
    CHECK_THROWS_WITH(Content("x.json", text), Catch::Contains("x.json: malformed lesson content") && Catch::Contains(says));
  };
  malformed(R"({"phrases": {"p": "{n|token}"}})", "phrases/p: the plural {n|...} has 1 form; en has 2 (one, other)");
  malformed(R"({"phrases": {"p": "{n|a|b|c}"}})", "has 3 forms; en has 2");
  malformed(R"({"phrases": {"p": "{n|a{b}|c}"}})", "a '{' inside a placeholder");
  CHECK_NOTHROW(Content("x.json", R"({"phrases": {"p": "{n|token|tokens}"}})"));
  const std::string english = R"({"phrases": {"p": "{n} {n|token|tokens}"}})";
  const auto translated = [&](const std::string& language, const std::string& text) {
    return json({{"language", language}, {"entries", {{"phrases/p", {{"source", text_hash("{n} {n|token|tokens}")}, {"text", text}}}}}}).dump();
  };
  const Content ru_content("x.json", english, "ru.json", translated("ru", "{n} {n|токен|токена|токенов}"));
  CHECK(ru_content.language("phrases/p", "") == "ru");
  CHECK(fill(ru_content.piece("phrases/p", ""), {{"n", "5"}}, "x", ru_content.language("phrases/p", "")) == "5 токенов");
  CHECK_THROWS_WITH(Content("x.json", english, "ru.json", translated("ru", "{n} {n|токен|токенов}")),
                    Catch::Contains("ru.json: malformed translation") && Catch::Contains("has 2 forms; ru has 3"));
  CHECK_THROWS_WITH(Content("x.json", english, "xx.json", translated("xx", "{n} {n|a|b}")),
                    Catch::Contains("xx.json: malformed translation: phrases/p: no plural rule for \"xx\""));
}
