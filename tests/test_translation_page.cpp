// The page in Russian (--lang ru): every lesson's html page and the svg figures carry the Russian words and
// none of the English ones, with <html lang="ru">; in Chromium no text of a Russian figure runs past its
// figure and no page is wider than the window; and attn serve's live page switches to Russian from its bar.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/front_end.hpp"
#include "cli/options.hpp"
#include "core/terminal_text.hpp"
#include "text/words.hpp"
#include "lessons/registry.hpp"
#include "render/figure.hpp"
#include "render/live_page.hpp"
#include "support.hpp"

using attn_test::quote;
using attn_test::run;
using attn_test::Run;
using attn_test::Scratch;
using attn_test::shell;
using nlohmann::json;

namespace {

// The Latin-script words a reader of a Russian page sees that are not code (docs/languages.md: code, ids,
// option names and numbers stay as they are; everything else is Russian). What a reader sees: the text
// between tags, the attributes title, placeholder, aria-label and alt, and the words the page's script
// shows (#attn-words's data-*). Code, left out, is:
//   1. what is inside <code>, <pre>, <script> or <style>: the book's PyTorch, step ids, the tokens, the live
//      bar's option names (a lesson's notes, <pre class="notes">, are prose);
//   2. a word whose form is code's: an option (--heads), a word with a digit, an underscore or a dot
//      (attn_scores_2, nn.Linear, GPT-2, 3.3.1, 1024x768), a class's name (CausalAttention), a call
//      (exp(-inf)), a one-letter word (a variable, b or h; a key, t), a token as Python's repr() shows it
//      ('journey'), a placeholder the script fills ({lesson});
//   3. a word of the page's own code (1.), in any case, so that the prose may name view or Softmax; not of
//      its comments or strings (highlighted as such), which are English words like any other; and not in a
//      figure's svg text (an axis, a legend, a head's name), which names nothing in the code;
//   4. the lessons' names, tour and attn, and the languages' codes (--lang's en, ru);
//   5. a control's title that is its option's --help line, which stays English (docs/languages.md);
//   6. kNotProse: names and keys, each with why.
const char* const kNotProse[] = {
    "Tab", "Enter", "Escape",                                 // keys, as the keyboard names them
    "PyTorch", "Python", "bertviz", "BPE", "GQA", "KV", "MKL", // names of software and of the methods' acronyms,
    "GELU", "ReLU", "AVX2",                                    // the activations' and the instruction set's
    "default",                                                 // --dropout-rng's value, in a lesson's notes
    "None", "False", "True",                                   // Python's constants, as explanations name them
    "LayerNorm", "wte", "wpe", "int", "float", "Wq",           // identifiers no code on the page shows: nn.LayerNorm,
                                                               // GPT-2's weights, Python's types, figure 3.26's Wq,
    "eps", "scale", "shift",                                   // and the book's LayerNorm's attributes
    "Every effort moves you", "Every day holds a",             // the book's texts (4.1's batch), quoted,
    "effort moves you", "you moves effort",                    // and its words in another order
    "Hello, I am",                                             // 4.7's start context, quoted
    "multi-head attention", "annotated transformer", "model view", "GPT-2 small",  // others' names, as phrases
};

std::string decoded(std::string text) {
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
           {"&#39;", "'"}, {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", " "}, {"&amp;", "&"}})
    for (std::size_t at; (at = text.find(entity)) != std::string::npos;) text.replace(at, entity.size(), c);
  return text;
}

bool latin(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

std::string lower(std::string w) {
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return w;
}

std::set<std::string> latin_words(const std::string& page) {
  std::string seen, code, figure;  // figure: the svg figures' texts, whose words no code exempts (3.)
  const std::regex shown_attribute(R"re( (?:title|placeholder|aria-label|alt)="([^"]*)")re");
  const std::regex data_attribute(R"re( data-[a-z-]+="([^"]*)")re");
  std::set<std::string> help;  // 5.
  for (const attn::OptionSpec& spec : attn::option_table()) help.insert(attn::html_escape(spec.help));
  for (std::size_t i = 0; i < page.size();) {
    if (page[i] != '<') {
      const std::size_t next = std::min(page.find('<', i), page.size());
      seen += page.substr(i, next - i);
      i = next;
      continue;
    }
    const std::size_t close = page.find('>', i);
    REQUIRE(close != std::string::npos);
    const std::string tag = page.substr(i, close + 1 - i);
    std::size_t name_end = 1;
    while (name_end < tag.size() && std::isalnum(static_cast<unsigned char>(tag[name_end]))) ++name_end;
    const std::string name = tag.substr(1, name_end - 1);
    if (name == "text") {  // an svg text: an axis, a legend, a head's name
      const std::size_t end = page.find("</text>", close);
      REQUIRE(end != std::string::npos);
      figure += " " + page.substr(close + 1, end - close - 1) + " ";
      i = end + 7;
      continue;
    }
    const bool notes = tag.find("class=\"notes\"") != std::string::npos;  // a lesson's notes: prose in a <pre>
    if (!notes && (name == "code" || name == "pre" || name == "script" || name == "style")) {  // 1.
      const std::size_t end = page.find("</" + name + ">", close);
      REQUIRE(end != std::string::npos);
      if (name == "code" || name == "pre") code += page.substr(close + 1, end - close - 1) + " ";  // for 3.
      i = end + name.size() + 3;
      continue;
    }
    seen += " ";
    const bool takes_option = tag.find(" data-takers=") != std::string::npos;
    for (auto it = std::sregex_iterator(tag.begin(), tag.end(), shown_attribute); it != std::sregex_iterator(); ++it)
      if (!(takes_option && help.count((*it)[1]) != 0)) seen += " " + (*it)[1].str() + " ";
    if (tag.rfind("<div id=\"attn-words\"", 0) == 0)
      for (auto it = std::sregex_iterator(tag.begin(), tag.end(), data_attribute); it != std::sregex_iterator(); ++it)
        seen += " " + (*it)[1].str() + " ";
    i = close + 1;
  }
  seen = " " + std::regex_replace(decoded(seen), std::regex("\\{[a-z_]+\\}"), " ") + " ";  // 2., a placeholder
  for (const char* phrase : kNotProse)  // 6., the phrases
    if (std::strchr(phrase, ' ') != nullptr)
      for (std::size_t at; (at = seen.find(phrase)) != std::string::npos;) seen.replace(at, std::strlen(phrase), " ");
  std::set<std::string> code_words;  // 3., the code's own: its comments and strings are words like any other
  const std::string code_text = decoded(std::regex_replace(
      std::regex_replace(code, std::regex("<span class=\"[cs]\">[^<]*</span>"), " "), std::regex("<[^>]*>"), " "));
  for (std::size_t i = 0; i < code_text.size();) {
    std::size_t j = i;
    while (j < code_text.size() && (latin(code_text[j]) || std::isdigit(static_cast<unsigned char>(code_text[j])) || code_text[j] == '_')) ++j;
    if (j > i) code_words.insert(lower(code_text.substr(i, j - i)));
    i = j + 1;
  }
  std::set<std::string> names{"attn", "tour"};  // 4.
  for (const attn::Lesson& l : attn::lessons()) names.insert(l.info.name);
  for (const std::string& language : attn::supported_languages()) names.insert(language);
  for (const char* word : kNotProse) names.insert(word);
  std::set<std::string> found;
  static const std::regex kCall("[A-Za-z]\\("), kClassName("[a-z][A-Z]");  // made once: every word is tried
  // The words of `text` no rule above makes code; `code_exempt`: nor any word the page's code has (3.).
  const auto collect = [&](const std::string& text, bool code_exempt) {
    std::istringstream chunks(text);
    for (std::string chunk; chunks >> chunk;) {
      while (!chunk.empty() && std::strchr("([{\",;:!?", chunk.front()) != nullptr) chunk.erase(0, 1);
      while (!chunk.empty() && std::strchr(")]}\",;:!?.", chunk.back()) != nullptr) chunk.pop_back();
      if (chunk.rfind("--", 0) == 0 || chunk.find_first_of("0123456789_.") != std::string::npos) continue;  // 2.
      if (names.count(chunk) != 0) continue;  // 4. (mha-wrapper whole)
      if (chunk.size() > 1 && chunk.front() == '\'' && chunk.back() == '\'') continue;
      if (std::regex_search(chunk, kCall)) continue;        // a call
      if (std::regex_search(chunk, kClassName)) continue;   // a class's name (CausalAttention)
      for (std::size_t i = 0; i < chunk.size();) {  // the runs of Latin letters ("KV" of "KV-кэш")
        std::size_t j = i;
        while (j < chunk.size() && latin(chunk[j])) ++j;
        const std::string word = chunk.substr(i, j - i);
        if (word.size() > 1 && names.count(word) == 0 && !(code_exempt && code_words.count(lower(word)) != 0)) found.insert(word);
        i = j + 1;
      }
    }
  };
  collect(seen, true);
  collect(" " + decoded(figure) + " ", false);  // a figure's "keys →" is English, whatever the code names keys
  return found;
}

std::string joined(const std::set<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

TEST_CASE("html in Russian: every lesson's page has lang ru, the Russian words and none of the English", "[translation]") {
  for (const attn::Lesson& lesson : attn::lessons()) {
    const std::string name = lesson.info.name;
    INFO("attn " << name << " --lang ru --format html");
    const Run ru = run({name, "--lang", "ru", "--format", "html"});
    REQUIRE(ru.status == 0);
    CHECK(ru.out.find("<html lang=\"ru\">") != std::string::npos);
    for (const char* word : {"Содержание", ">Слайды<", ">Тёмная тема<", ">Тензор (t)<", "data-counter=\"{lesson} — шаг {k} из {n}\""})
      CHECK(ru.out.find(word) != std::string::npos);
    CHECK(joined(latin_words(ru.out)) == "");
    const Run en = run({name, "--format", "html"});
    REQUIRE(en.status == 0);
    CHECK(en.out.find("<html lang=\"en\">") != std::string::npos);
    CHECK(en.out.find(">Contents<") != std::string::npos);
    // The same look at the English page finds its words: the page's own, and the lesson's.
    const std::set<std::string> english = latin_words(en.out);
    for (const char* word : {"Contents", "Slides", "Dark", "theme"}) {
      INFO(word);
      CHECK(english.count(word) == 1);
    }
  }
  const Run tour = run({"tour", "--lang", "ru", "--format", "html"});
  REQUIRE(tour.status == 0);
  CHECK(joined(latin_words(tour.out)) == "");
  // English left in a Russian page is found, though the code's comments hold the same words ("# each head
  // ..."): in prose (but for words the code itself names, 3.), in a figure's text, in a lesson's notes.
  std::string planted = tour.out;
  planted.insert(planted.find("</main>"), "<p>head 3: rows are queries</p><svg><text>keys</text></svg><pre class=\"notes\">each sentence</pre>");
  CHECK(joined(latin_words(planted)) == "are each head keys sentence");  // rows and queries: the code's names (3.)
  CHECK(tour.out.find("<title>attn tour: механизмы внимания главы 3 шаг за шагом</title>") != std::string::npos);
  CHECK(tour.out.find("Урок 1 из " + std::to_string(attn::lessons().size()) + ": ") != std::string::npos);
}

TEST_CASE("live page in Russian: the bar's own words are Russian, with and without a model, and no Latin word but code",
          "[translation][live]") {
  for (const bool model : {false, true}) {
    INFO((model ? "attn serve --model tiny-f32" : "attn serve") << ", /?lesson=mha&lang=ru");
    std::vector<std::string> args{"mha", "--lang", "ru", "--format", "html"};
    if (model) args.insert(args.end(), {"--model", ATTN_TESTS_DIR "/golden/models/tiny-f32"});
    const Run ru = run(args);
    REQUIRE(ru.status == 0);
    const std::string live = attn::live_page(ru.out, attn::live_bar(attn::command_line_front_end(), "mha", {{"lang", "ru"}}, "", model));
    CHECK(joined(latin_words(live)) == "");
    CHECK(live.find(" aria-label=\"Пересчитать урок\"") != std::string::npos);
    CHECK(live.find("<button type=\"submit\" title=\"Или Enter в поле; при вводе пересчёт идёт сам, как только вы "
                    "остановитесь\">Пересчитать</button>") != std::string::npos);
    CHECK(live.find("<option value=\"\">из окружения</option>") != std::string::npos);
    // The seed's default in words (mha takes --seed without a model); with a model --heads is refused, its
    // title in Russian.
    if (!model) CHECK(live.find(" placeholder=\"как в книге\"") != std::string::npos);
    CHECK((live.find(" title=\"--heads не применяется с --model, с которым запущен этот сервер\"") != std::string::npos) == model);
  }
  // The English bar, which the same look finds English words in.
  const Run en = run({"mha", "--format", "html"});
  REQUIRE(en.status == 0);
  const std::string live = attn::live_page(en.out, attn::live_bar(attn::command_line_front_end(), "mha", {}, "", false));
  CHECK(live.find(">Recompute</button>") != std::string::npos);
  CHECK(live.find(" placeholder=\"the book&#39;s\"") != std::string::npos);
  const std::set<std::string> english = latin_words(live);
  for (const char* word : {"Recompute", "book", "environment"}) {
    INFO(word);
    CHECK(english.count(word) == 1);
  }
}

TEST_CASE("svg in Russian: the figure's words are Russian and its legend fits the width it declares", "[translation]") {
  // Every text that starts at x (text-anchor start) ends within the figure, at 7 px a column (figure.cpp's
  // kCharWidth), as the English legend does.
  const std::regex svg_width(R"re(<svg[^>]* width="([0-9.]+)")re");
  const std::regex start_text(R"re(<text(?: class="[^"]*")? x="([0-9.]+)" y="[0-9.]+"(?: data-at="0")?[^>]*>([^<]*)</text>)re");
  for (const auto& [lesson, step] : std::vector<std::pair<std::string, std::string>>{
           {"causal", "masked_simple"}, {"mha", "attn_weights"}, {"all-tokens", "attn_scores"}, {"simple", "attn_scores_2"}}) {
    for (const char* scale : {"fixed", "row"}) {
      INFO("attn " << lesson << " --lang ru --format svg --step " << step << " --scale " << scale);
      const Run r = run({lesson, "--lang", "ru", "--format", "svg", "--step", step, "--scale", scale});
      REQUIRE(r.status == 0);
      std::smatch m;
      REQUIRE(std::regex_search(r.out, m, svg_width));
      const double width = std::stod(m[1]);
      if (r.out.find("class=\"legend\"") != std::string::npos) {
        CHECK(r.out.find("ключи \xe2\x86\x92") != std::string::npos);
        CHECK(r.out.find("цвета: ") != std::string::npos);
      } else {
        CHECK(r.out.find("форма (") != std::string::npos);
      }
      for (const char* english : {"colours:", "keys \xe2\x86\x92", "masked (a future key)", ">shape ", "query 0"}) {
        INFO(english);
        CHECK(r.out.find(english) == std::string::npos);
      }
      std::size_t checked = 0;
      for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), start_text); it != std::sregex_iterator(); ++it) {
        std::string text = (*it)[2];
        for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
                 {"&#39;", "'"}, {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
          for (std::size_t at; (at = text.find(entity)) != std::string::npos;) text.replace(at, entity.size(), c);
        if (it->str().find("text-anchor") != std::string::npos) continue;
        INFO(text);
        const double column = it->str().find("font-size=\"14\"") != std::string::npos ? 8.4 : 7.0;  // the title's, else 11.5 px
        CHECK(std::stod((*it)[1]) + static_cast<double>(attn::display_width(text)) * column <= width + 0.5);
        ++checked;
      }
      CHECK(checked >= 2);
    }
  }
}

TEST_CASE("html in Chromium in Russian: no figure's text runs past it and no page is wider than the window",
          "[translation][browser]") {
  attn_test::need_program("/usr/bin/chromium", "chromium");
  attn_test::need_program("/usr/bin/chromedriver", "chromium-driver");
  Scratch s;
  json actions = json::array();
  const std::vector<std::string> lessons{"causal", "mha", "heads", "kv-cache"};
  // Every svg text's box, as Chromium lays it out, within its svg's viewBox; the page no wider than its window;
  // every button's text within its button.
  const std::string check =
      "(function () {"
      " var bad = [];"
      " document.querySelectorAll('svg').forEach(function (svg) {"
      "  var vb = svg.viewBox && svg.viewBox.baseVal; if (!vb || !vb.width) return;"
      "  svg.querySelectorAll('text').forEach(function (t) {"
      "   var b = t.getBBox(); if (b.width === 0) return;"
      "   if (b.x < vb.x - 1 || b.x + b.width > vb.x + vb.width + 1) bad.push(t.textContent + ' ' + Math.round(b.x + b.width) + '>' + vb.width);"
      "  });"
      " });"
      " document.querySelectorAll('button').forEach(function (b) {"
      "  if (b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1) bad.push('button ' + b.textContent);"
      " });"
      " if (document.documentElement.scrollWidth > window.innerWidth + 1) bad.push('page ' + document.documentElement.scrollWidth);"
      " return [document.documentElement.lang, bad.slice(0, 10), document.querySelectorAll('svg text').length];"
      "})()";
  for (const std::string& lesson : lessons) {
    const Run r = run({lesson, "--lang", "ru", "--format", "html"});
    REQUIRE(r.status == 0);
    s.file(lesson + ".html", r.out);
    actions.push_back({{"do", "load"}, {"url", "file://" + s.dir + "/" + lesson + ".html"}});
    actions.push_back({{"do", "eval"}, {"js", check}});
  }
  const std::string request = s.file("request.json", actions.dump());
  const Run r = shell("/usr/bin/python3 " + quote(ATTN_TESTS_DIR "/browser/drive.py") + " " + quote(request));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const json out = json::parse(r.out);
  REQUIRE(out.size() == actions.size());
  for (std::size_t k = 0; k < lessons.size(); ++k) {
    INFO("attn " << lessons[k] << " --lang ru --format html: " << out[2 * k + 1].dump());
    CHECK(out[2 * k + 1][0] == "ru");
    CHECK(out[2 * k + 1][1] == json::array());
    CHECK(out[2 * k + 1][2].get<int>() > 10);
  }
}
