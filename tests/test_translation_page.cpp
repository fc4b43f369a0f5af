// The page in Russian (--lang ru): every lesson's html page and the svg figures carry the Russian words and
// none of the English ones, with <html lang="ru">; in Chromium no text of a Russian figure runs past its
// figure and no page is wider than the window; and attn serve's live page switches to Russian from its bar.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/terminal_text.hpp"
#include "lessons/registry.hpp"
#include "support.hpp"

using attn_test::quote;
using attn_test::run;
using attn_test::Run;
using attn_test::Scratch;
using attn_test::shell;
using nlohmann::json;

namespace {

// The page's own words, English, that a Russian page must not show (its code, ids and numbers aside).
const char* const kEnglishWords[] = {">Contents<", ">Slides<", ">Dark theme<", ">Tensor (t)<", ">Lines (l)<",
                                     ">Fixed<", ">Each row<", "colours:", "keys \xe2\x86\x92", "queries \xe2\x86\x93",
                                     "masked (a future key)", "<li>inputs:", "<li>tokens:", "<li>module:",
                                     "On a heatmap, point", "Lesson 1 of", "rows are queries"};

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
    for (const char* english : kEnglishWords) {
      INFO(english);
      CHECK(ru.out.find(english) == std::string::npos);
    }
    const Run en = run({name, "--format", "html"});
    REQUIRE(en.status == 0);
    CHECK(en.out.find("<html lang=\"en\">") != std::string::npos);
    CHECK(en.out.find(">Contents<") != std::string::npos);
  }
  const Run tour = run({"tour", "--lang", "ru", "--format", "html"});
  REQUIRE(tour.status == 0);
  CHECK(tour.out.find("<title>attn tour: механизмы внимания главы 3 шаг за шагом</title>") != std::string::npos);
  CHECK(tour.out.find("Урок 1 из " + std::to_string(attn::lessons().size()) + ": ") != std::string::npos);
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
