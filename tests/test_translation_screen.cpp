// The terminal in Russian (--lang ru): the presenter's slides at 60 and 80 columns fit and cut no word,
// the status line and key help speak Russian and fit, the text view's header and heatmap words are the
// Russian content's, and attn list gives the lessons' Russian titles. What the English tests check of the
// layout, checked again on Cyrillic text (two bytes a letter, one column).
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/terminal_text.hpp"
#include "inputs/embeddings.hpp"
#include "io/paths.hpp"
#include "lessons/registry.hpp"
#include "present/deck.hpp"
#include "render/layout.hpp"
#include "text/words.hpp"
#include "support.hpp"
#include "layout_checks.hpp"
#include "tmux.hpp"

using namespace attn;
using attn_test::has_cyrillic;
using attn_test::text_of;
using attn_test::words_kept;

namespace {

// Every lesson with its book defaults, in Russian, as attn present --lang ru runs them.
Document russian_tour() {
  std::istringstream none;
  const Inputs in = load_embeddings(default_embeddings_path(), none);
  Document doc;
  doc.command = "present";
  doc.words = Words("ru");
  for (const Lesson& lesson : lessons()) {
    Selection sel;
    sel.words = Words("ru");
    doc.sections.push_back(lesson.modes.front().run(in, lesson.modes.front().defaults, sel));
  }
  return doc;
}

}  // namespace

TEST_CASE("present in Russian: at 60 and 80 columns every line fits and no Russian word is cut", "[translation]") {
  const Document doc = russian_tour();
  for (const std::size_t width : {60, 80}) {
    LayoutOptions o;
    o.width = width;
    o.words = Words("ru");
    for (const Section& t : doc.sections) {
      REQUIRE(has_cyrillic(t.info.title));
      for (std::size_t i = 0; i < t.steps.size(); ++i) {
        const Step& s = t.steps[i];
        INFO(width << " columns, attn " << t.info.name << " --lang ru, " << s.id);
        const SlideText slide = step_slide(t, i, o);
        for (const auto* part : {&slide.title, &slide.text, &slide.figure, &slide.tensor})
          for (const Line& l : *part) CHECK(line_width(l) <= width);
        CHECK(words_kept(visible(s.explanation), text_of(slide.text), width));
        CHECK(words_kept(visible(s.title), text_of(slide.title), width));
        if (s.heatmap && !slide.figure.empty()) {  // the figure's words are the Russian content's
          const std::string figure = text_of(slide.figure);
          CHECK(has_cyrillic(figure));
          CHECK(figure.find("heatmap:") == std::string::npos);
          CHECK(figure.find("colours:") == std::string::npos);
        }
      }
      const SlideText intro = lesson_slide(t, 1, doc.sections.size(), o);
      for (const auto* part : {&intro.title, &intro.text})
        for (const Line& l : *part) CHECK(line_width(l) <= width);
      const std::string intro_text = text_of(intro.title) + text_of(intro.text);
      CHECK(intro_text.find("Урок 1 из " + std::to_string(doc.sections.size())) != std::string::npos);
      CHECK(intro_text.find("Это шаг 0 из") != std::string::npos);
      CHECK(intro_text.find("Lesson") == std::string::npos);
    }
  }
}

TEST_CASE("present in Russian: the status line fits by columns and the key help speaks Russian", "[translation]") {
  const Document doc = russian_tour();
  Deck deck(doc, false, true);
  for (const std::size_t width : {60, 80, 120}) {  // narrower, the presenter clips it, as in English
    const std::string status = deck.status(width);
    INFO(width << " columns: " << status);
    CHECK(display_width(status) <= width);
    CHECK(status.find("урок 1/") != std::string::npos);
    if (width >= 80) CHECK(status.find("справка") != std::string::npos);  // the keys, as many as fit
  }
  const std::vector<std::string> help = Deck::help_lines(Words("ru"));
  REQUIRE(help.size() == Deck::help_lines(Words()).size());  // the same lines, line for line
  CHECK(help.front() == "Клавиши");
  std::size_t english_widest = 0;  // the box the presenter draws is as wide as the widest line
  for (const std::string& line : Deck::help_lines(Words())) english_widest = std::max(english_widest, display_width(line));
  for (const std::string& line : help) CHECK(display_width(line) <= english_widest);
}

TEST_CASE("the text view in Russian: header lines, heatmap words and attn list", "[translation]") {
  const attn_test::Run ru = attn_test::run({"mha", "--lang", "ru", "--heatmap", "always", "--color", "never"});
  REQUIRE(ru.status == 0);
  CHECK(ru.out.find("входы: 6 токенов x 3 измерения, источник: ") != std::string::npos);
  CHECK(ru.out.find("токены: 'Your' 'journey'") != std::string::npos);
  CHECK(ru.out.find("модуль: mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2), 24 параметра") !=
        std::string::npos);
  CHECK(ru.out.find("тепловая карта: строки — запросы, столбцы — ключи; последовательность 0 из 2 в батче, голова 0") != std::string::npos);
  CHECK(ru.out.find("цвета: от 0 до 1   · замаскировано (более поздний токен)") != std::string::npos);
  for (const char* english : {"inputs:", "tokens:", "module:", "heatmap:", "colours:", "(a later token)", " parameters"}) {
    INFO(english);
    CHECK(ru.out.find(english) == std::string::npos);
  }
  // The tour's banners, and more tokens than the header lists.
  const attn_test::Run tour = attn_test::run({"tour", "--lang", "ru", "--random", "15x3"});
  REQUIRE(tour.status == 0);
  CHECK(tour.out.find("Урок 1 из " + std::to_string(lessons().size()) + ": attn simple -- 3.3.1 ") != std::string::npos);
  CHECK(tour.out.find("... (и ещё 3)") != std::string::npos);

  const attn_test::Run list = attn_test::run({"list", "--lang", "ru"});
  REQUIRE(list.status == 0);
  CHECK(list.out.rfind("Уроки главы 3", 0) == 0);
  const attn_test::Run list_json = attn_test::run({"list", "--json", "--lang", "ru"});
  REQUIRE(list_json.status == 0);
  const auto parsed = nlohmann::json::parse(list_json.out);
  REQUIRE(parsed.size() == lessons().size());
  for (const auto& entry : parsed) {
    INFO(entry.dump());
    CHECK(has_cyrillic(entry.at("title").get<std::string>()));
    CHECK(has_cyrillic(entry.at("summary").get<std::string>()));
  }
  CHECK(attn_test::run({"list"}).out.rfind("The lessons of chapter 3", 0) == 0);
}

TEST_CASE("present in tmux at 80 columns in Russian: the slides, the status line and the help", "[translation][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  const attn_test::Tmux t(80, 40, attn_test::quote(ATTN_EXE) + " present --lang ru");
  REQUIRE(t.ok());
  REQUIRE(t.wait_for("Урок 1 из " + std::to_string(lessons().size()) + ": attn simple"));
  CHECK(t.screen().find("урок 1/") != std::string::npos);
  t.keys("Right");
  REQUIRE(t.wait_for("[1/12] inputs"));
  CHECK(t.screen().find("Входные эмбеддинги") != std::string::npos);
  t.keys("?");
  REQUIRE(t.wait_for("Любая клавиша закрывает справку."));
  t.keys("x");
  t.keys("q");
  REQUIRE(t.wait_for("attn-exited-0"));
  std::istringstream lines(t.screen());
  for (std::string line; std::getline(lines, line);) CHECK(display_width(line) <= 80);
}
