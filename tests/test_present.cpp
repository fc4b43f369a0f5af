// attn present: the slides' layout at every width (nothing cut inside a word or a number, heatmaps that
// fit), the deck's keys, the command line, and the real thing in a real terminal (tmux) at 60, 80 and
// 120 columns: keys, reveal, a resize, each theme's colours, and a clean terminal after quitting.
#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/torch_random.hpp"
#include "inputs/embeddings.hpp"
#include "io/paths.hpp"
#include "cli/options.hpp"
#include "lessons/registry.hpp"
#include "present/deck.hpp"
#include "render/json.hpp"
#include "render/layout.hpp"
#include "render/torch_print.hpp"
#include "core/terminal_text.hpp"
#include "support.hpp"
#include "layout_checks.hpp"
#include "tmux.hpp"

using namespace attn;
using attn_test::quote;
using attn_test::shell;
using attn_test::text_of;
using attn_test::words_kept;

namespace {

const std::string kCount = std::to_string(lessons().size());

Inputs book_inputs() {
  std::istringstream none;
  return load_embeddings(default_embeddings_path(), none);
}

Inputs random_inputs(std::size_t n, std::size_t d) {
  TorchGenerator gen(0);
  Inputs in;
  in.embeddings = gen.rand(n, d);
  for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
  return in;
}

// Every lesson with its book defaults, as attn tour and attn present run them.
Document tour(const Inputs& in) {
  Document doc;
  doc.command = "present";
  for (const Lesson& lesson : lessons()) doc.sections.push_back(lesson.modes.front().run(in, lesson.modes.front().defaults, {}));
  return doc;
}

Document one(const std::string& name, const Inputs& in, LessonConfig cfg) {
  Document doc;
  doc.command = "present";
  for (const Lesson& lesson : lessons())
    if (lesson.info.name == name) doc.sections.push_back(lesson.modes.front().run(in, cfg, {}));
  return doc;
}

LessonConfig defaults_of(const std::string& name) {
  for (const Lesson& lesson : lessons())
    if (lesson.info.name == name) return lesson.modes.front().defaults;
  FAIL("no lesson " << name);
  return {};
}

// mha with `heads` heads and d_out 4, on `batch` copies of the inputs.
LessonConfig mha_config(std::size_t heads, std::size_t batch = 1) {
  LessonConfig cfg = defaults_of("mha");
  cfg.heads = heads;
  cfg.d_out = 4;
  cfg.batch = batch;
  return cfg;
}

// g N Enter: step N of the deck's lesson.
void go_to(Deck& deck, const std::string& step) {
  deck.press(Deck::Key::GoTo);
  for (const char digit : step) deck.press(Deck::Key::Digit, digit);
  deck.press(Deck::Key::Enter);
}

}  // namespace

TEST_CASE("present: at 60, 80, 120 and 200 columns every line fits and no word or number is cut", "[present]") {
  const Document doc = tour(book_inputs());
  for (const std::size_t width : {60, 80, 120, 200}) {
    LayoutOptions o;
    o.width = width;
    for (const Section& t : doc.sections) {
      for (std::size_t i = 0; i < t.steps.size(); ++i) {
        const Step& s = t.steps[i];
        INFO(width << " columns, attn " << t.info.name << " " << s.id);
        const SlideText slide = step_slide(t, i, o);
        for (const auto* part : {&slide.title, &slide.text, &slide.figure, &slide.tensor})
          for (const Line& l : *part) CHECK(line_width(l) <= width);
        const std::string text = text_of(slide.text), tensor = text_of(slide.tensor);
        CHECK(words_kept(visible(s.explanation), text, width));
        CHECK(words_kept(s.code, text, width));
        if (!s.python_float && !s.python_int) CHECK(words_kept(torch_str(s.tensor, s.integer), tensor, width));
      }
      const SlideText intro = lesson_slide(t, 1, doc.sections.size(), o);
      for (const auto* part : {&intro.title, &intro.text})
        for (const Line& l : *part) CHECK(line_width(l) <= width);
    }
  }
}

TEST_CASE("present: a step's heatmap comes first, right under its title, and t puts the printed tensor first", "[present]") {
  const Document doc = tour(book_inputs());
  Deck deck(doc, false);
  std::size_t figures = 0;
  for (std::size_t i = 0; i < deck.slides().size(); ++i, deck.press(Deck::Key::Next)) {
    const Deck::Slide& s = deck.slides()[deck.at()];
    if (!s.step || !doc.sections[s.lesson].steps[*s.step].heatmap) continue;
    const Step& step = doc.sections[s.lesson].steps[*s.step];
    INFO("attn " << doc.sections[s.lesson].info.name << " " << step.id);
    ++figures;
    const auto order = [&] {
      std::vector<std::string> lines;
      for (const Line& l : deck.lines(100, true)) lines.push_back(plain(l));
      const auto at = [&](const std::string& text) {
        for (std::size_t k = 0; k < lines.size(); ++k)
          if (lines[k].find(text) != std::string::npos) return k;
        return lines.size();
      };
      return std::vector<std::size_t>{at("] " + step.id), at("  heatmap: "), at(">>>"), at("  shape: ")};
    };
    const std::vector<std::size_t> first = order();  // title, heatmap, code, tensor
    CHECK(first[0] == 0);
    CHECK(first[1] == 2);  // after one blank line
    CHECK(first[1] < first[2]);
    CHECK(first[2] < first[3]);
    deck.press(Deck::Key::Tensor);
    CHECK(deck.tensor_first());
    const std::vector<std::size_t> second = order();  // as the text view: title, code, tensor, heatmap
    CHECK(second[2] < second[3]);
    CHECK(second[3] < second[1]);
    deck.press(Deck::Key::Tensor);
    CHECK(order() == first);
  }
  CHECK(figures >= 9);  // causal's, dropout's, mha's, kv-cache's weights ...
  // A step without a heatmap keeps its order: text, then tensor.
  deck.press(Deck::Key::First);
  deck.press(Deck::Key::Next);
  const std::string inputs = text_of(deck.lines(100, true));
  CHECK(inputs.find(">>>") < inputs.find("shape: torch.Size([6, 3])"));
}

TEST_CASE("heatmap_lines: a step's heads side by side where they fit, in rows of heads, and one head alone enlarged",
          "[present]") {
  const Document doc = one("mha", book_inputs(), mha_config(4, 2));
  const Section& mha = doc.sections.front();
  const Step& w = mha.step("attn_weights");  // (2, 4, 6, 6)
  const std::vector<HeatMap> maps = heat_maps(w, mha.inputs.tokens);
  REQUIRE(maps.size() == 4);
  // Each head's rows as numbers in cells: "   'journey'  0.48  0.52   ·  ...", the query's label then its numbers.
  const auto row_text = [&](std::size_t head, std::size_t i) {
    std::string r = "  " + std::string(10 - maps[head].labels[i].size(), ' ') + maps[head].labels[i];
    for (std::size_t j = 0; j <= i; ++j) r += " " + std::string(5 - heat_number(maps[head].at(i, j)).size(), ' ') + heat_number(maps[head].at(i, j));
    return r;
  };
  // Where (line, column) each head's last row is drawn.
  const auto places = [&](const std::vector<Line>& lines) {
    std::vector<std::pair<std::size_t, std::size_t>> at;
    for (std::size_t h = 0; h < maps.size(); ++h) {
      at.emplace_back(lines.size(), 0);
      for (std::size_t y = 0; y < lines.size(); ++y) {
        const std::size_t x = plain(lines[y]).find(row_text(h, 5));
        if (x != std::string::npos) {
          at.back() = {y, x};
          break;
        }
      }
    }
    return at;
  };
  LayoutOptions o;
  o.width = 100;  // two heads of 46 columns across: rows of two
  std::vector<Line> lines = heatmap_lines(w, mha.inputs.tokens, o);
  for (const Line& l : lines) CHECK(line_width(l) <= 100);
  auto at = places(lines);
  for (const auto& p : at) CHECK(p.first < lines.size());  // every head drawn, every number of its last row
  CHECK(at[0].first == at[1].first);                        // heads 0 and 1 side by side
  CHECK(at[0].second < at[1].second);
  CHECK(at[2].first == at[3].first);
  CHECK(at[2].first > at[0].first);  // a second row of heads under the first
  CHECK(text_of(lines).find("batch 0 of 2, head 0") != std::string::npos);
  o.width = 200;  // four across
  at = places(heatmap_lines(w, mha.inputs.tokens, o));
  for (std::size_t h = 1; h < 4; ++h) CHECK(at[h].first == at[0].first);
  CHECK(at[1].second - at[0].second == at[2].second - at[1].second);  // in columns of one width
  o.width = 80;  // one across: one under another, as before
  lines = heatmap_lines(w, mha.inputs.tokens, o);
  at = places(lines);
  for (std::size_t h = 1; h < 4; ++h) CHECK(at[h].first > at[h - 1].first);
  for (std::size_t h = 0; h < 4; ++h) CHECK(at[h].second == 0);
  // One head alone: only its map, at the whole width.
  o.width = 100;
  o.head = 2;
  lines = heatmap_lines(w, mha.inputs.tokens, o);
  at = places(lines);
  CHECK(at[2].first < lines.size());
  CHECK(at[0].first == lines.size());  // the other heads are not drawn
  CHECK(at[3].first == lines.size());
  CHECK(text_of(lines).find("head 0") == std::string::npos);

  // 20 tokens, colour-only: two heads across 200 columns, and an enlarged head lists every number.
  const Document big = one("mha", random_inputs(20, 4), mha_config(2));
  const Step& bw = big.sections.front().step("attn_weights");
  LayoutOptions b;
  b.width = 200;
  lines = heatmap_lines(bw, big.sections.front().inputs.tokens, b);
  std::size_t both = 0;
  for (const Line& l : lines) {
    CHECK(line_width(l) <= 200);
    const std::string t = plain(l);
    if (t.find("19 'x20'") != std::string::npos && t.find("19 'x20'", t.find("19 'x20'") + 1) != std::string::npos) ++both;
  }
  CHECK(both == 1);  // the last query's row of both heads on one line
  b.head = 1;
  const std::string alone = text_of(heatmap_lines(bw, big.sections.front().inputs.tokens, b));
  CHECK(alone.find("every number (row: query, then key:value):") != std::string::npos);
  char last[32];
  std::snprintf(last, sizeof last, "19:%.4f", static_cast<double>(heat_maps(bw, big.sections.front().inputs.tokens)[1].at(19, 19)));
  CHECK(alone.find(last) != std::string::npos);
}

TEST_CASE("present: + and - enlarge one head of a step, then every head again", "[present]") {
  const Document doc = one("mha", book_inputs(), defaults_of("mha"));
  Deck deck(doc, false);
  go_to(deck, "29");
  REQUIRE(doc.sections[0].steps[*deck.slides()[deck.at()].step].id == "attn_weights");
  CHECK(deck.heads() == 2);
  CHECK_FALSE(deck.head());
  CHECK(deck.status(200).find("+ - heads") != std::string::npos);
  const auto heads_shown = [&] {
    const std::string t = text_of(deck.lines(100, true));
    return std::to_string(t.find("head 0") != std::string::npos) + std::to_string(t.find("head 1") != std::string::npos);
  };
  CHECK(heads_shown() == "11");
  deck.press(Deck::Key::NextHead);
  CHECK(deck.head() == std::optional<std::size_t>(0));
  CHECK(heads_shown() == "10");
  CHECK(deck.status(200).find("head 0 of 2") != std::string::npos);
  deck.press(Deck::Key::NextHead);
  CHECK(heads_shown() == "01");
  deck.press(Deck::Key::NextHead);  // past the last: every head
  CHECK_FALSE(deck.head());
  CHECK(heads_shown() == "11");
  deck.press(Deck::Key::PrevHead);  // from every head, back: the last
  CHECK(deck.head() == std::optional<std::size_t>(1));
  deck.press(Deck::Key::Next);  // another step (attn_weights_dropout): every head again
  CHECK_FALSE(deck.head());
  deck.press(Deck::Key::Last);  // context_vecs: no heatmap, nothing to enlarge
  CHECK(deck.heads() == 0);
  deck.press(Deck::Key::NextHead);
  CHECK_FALSE(deck.head());
  CHECK(deck.status(200).find("+ - heads") == std::string::npos);
}

namespace {

// An overview step as attn heads makes one (Step::overview): 12 heads of (6, 6) causal weights that put all
// of each row on one key: the previous token (heads 0, 3, ...), the first token (1, 4, ...) or the query
// itself (2, 5, ...), with the words under each head.
Document overview_document() {
  const Inputs in = book_inputs();
  Trace t(LessonInfo{"heads", "ch03", "Every head at a glance", "every head"}, in);
  Step s;
  s.id = "attn_weights_layer_0";
  s.title = "Every head of layer 0";
  s.shape = {12, 6, 6};
  s.tensor = AnyTensor(s.shape);
  const char* const kind[] = {"previous token", "first token", "self"};
  for (std::size_t h = 0; h < 12; ++h) {
    for (std::size_t i = 0; i < 6; ++i) {
      const std::size_t key = h % 3 == 0 ? (i == 0 ? 0 : i - 1) : h % 3 == 1 ? 0 : i;
      for (std::size_t j = 0; j < 6; ++j) s.tensor.data()[(h * 6 + i) * 6 + j] = j == key ? 1.0f : 0.0f;
    }
    s.head_notes.push_back(kind[h % 3]);
  }
  s.computed = true;
  s.show_heatmap(true);
  s.overview = true;
  t.steps.push_back(s);
  Document doc;
  doc.command = "present";
  doc.sections.push_back(t);
  return doc;
}

// Where `text` starts on each line it is on, not followed by a digit ("head 1" is not "head 10"): (line,
// column).
std::vector<std::pair<std::size_t, std::size_t>> where(const std::vector<Line>& lines, const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> at;
  for (std::size_t y = 0; y < lines.size(); ++y) {
    const std::string t = plain(lines[y]);
    for (std::size_t x = t.find(text); x != std::string::npos; x = t.find(text, x + 1))
      if (x + text.size() == t.size() || !std::isdigit(static_cast<unsigned char>(t[x + text.size()]))) at.emplace_back(y, x);
  }
  return at;
}

}  // namespace

TEST_CASE("heatmap_lines: an overview step is a row of small colour-only maps, each head's words under it", "[present]") {
  const Document doc = overview_document();
  const Section& t = doc.sections.front();
  const Step& s = t.steps.front();
  for (const std::size_t width : {60, 100, 200}) {
    INFO(width << " columns");
    LayoutOptions o;
    o.width = width;
    const std::vector<Line> lines = heatmap_lines(s, t.inputs.tokens, o);
    for (const Line& l : lines) CHECK(line_width(l) <= width);
    // Colour only: no number in any map; each head's 21 cells on the scale and 15 masked, plus the legend's.
    std::size_t cells = 0, masked = 0;
    for (const Line& l : lines)
      for (const Span& sp : l) {
        cells += sp.role == Role::Cell ? 1 : 0;
        masked += sp.role == Role::Masked ? 1 : 0;
        if (sp.role == Role::Cell) CHECK(sp.text.find_first_not_of(' ') == std::string::npos);
      }
    CHECK(cells == 12 * 21 + 8);
    CHECK(masked == 12 * 15 + 1);
    // Heads side by side: head 0 and head 1 on one line, and each head's words right under its map, in its
    // column.
    const auto head0 = where(lines, "head 0"), head1 = where(lines, "head 1");
    REQUIRE(head0.size() == 1);
    REQUIRE(head1.size() == 1);
    CHECK(head0[0].first == head1[0].first);
    for (std::size_t h = 0; h < 12; ++h) {
      INFO("head " << h);
      const auto caption = where(lines, "head " + std::to_string(h));
      REQUIRE_FALSE(caption.empty());
      const auto [y, x] = caption.back();
      // The words under it, except the previous-token heads': theirs is the layer's common note, said once.
      const std::string words = h % 3 == 0 ? "previous" : h % 3 == 1 ? "first" : "self";
      bool under = false;
      for (const auto& [wy, wx] : where(lines, words)) under = under || (wx == x && wy == y + 7);  // 6 rows, then it
      CHECK(under == (h % 3 != 0));
      // Where the weight is, the cell is at the top of the palette: the previous token, the first or itself.
      const Line& row = lines[y + 1 + 5];  // the last query's row
      std::vector<const Span*> map;
      std::size_t col = 0;
      for (const Span& sp : row) {
        if ((sp.role == Role::Cell || sp.role == Role::Masked) && col >= x && map.size() < 6) map.push_back(&sp);
        col += display_width(sp.text);
      }
      REQUIRE(map.size() == 6);
      const std::size_t key = h % 3 == 0 ? 4 : h % 3 == 1 ? 0 : 5;
      for (std::size_t j = 0; j < 6; ++j) CHECK(map[j]->shade == Approx(j == key ? 1.0 : 0.0));
    }
    CHECK(text_of(lines).find("tokens: 0='Your' 1='journey'") != std::string::npos);
    CHECK(where(lines, "previous token").size() == 1);
    CHECK(text_of(lines).find("4 of 12 heads: previous token") != std::string::npos);
  }
  // Monochrome: shades, and a legend of only the two it uses.
  LayoutOptions mono;
  mono.width = 100;
  mono.color = false;
  const std::string text = text_of(heatmap_lines(s, t.inputs.tokens, mono));
  CHECK(text.find("lowest") != std::string::npos);
  CHECK(text.find("highest") != std::string::npos);
  CHECK(text.find("middle") == std::string::npos);
  // + in the presenter: one head alone, every number; its words under it.
  Deck deck(doc, false);
  deck.press(Deck::Key::Next);
  CHECK(deck.heads() == 12);
  deck.press(Deck::Key::NextHead);
  deck.press(Deck::Key::NextHead);  // head 1: the first token
  const std::string alone = text_of(deck.lines(100, true));
  CHECK(alone.find("heatmap: head 1") != std::string::npos);
  CHECK(alone.find("head 0") == std::string::npos);
  CHECK(alone.find("first token") != std::string::npos);
  CHECK(alone.find("   'journey'  1.00  0.00   ") != std::string::npos);  // every number, in its cell
  CHECK(deck.status(200).find("head 1 of 12") != std::string::npos);
}

namespace {

// The texts of the spans drawn as the selected head's caption (Role::Selected), in order.
std::vector<std::string> selected_spans(const std::vector<Line>& lines) {
  std::vector<std::string> out;
  for (const Line& l : lines)
    for (const Span& sp : l)
      if (sp.role == Role::Selected) out.push_back(sp.text);
  return out;
}

// overview_document() with these words under its heads (one per head, 12).
Document overview_with_notes(const std::vector<std::string>& notes) {
  Document doc = overview_document();
  doc.sections.front().steps.front().head_notes = notes;
  return doc;
}

}  // namespace

TEST_CASE("present: Tab selects a head of the model view, Enter opens it large, Esc goes back, a second Esc quits",
          "[present]") {
  const Document doc = overview_document();
  Deck deck(doc, false);
  deck.press(Deck::Key::Next);
  REQUIRE(deck.heads() == 12);
  CHECK_FALSE(deck.selected());
  CHECK(selected_spans(deck.lines(100, true)).empty());
  deck.press(Deck::Key::Select);
  CHECK(deck.selected() == std::optional<std::size_t>(0));
  deck.press(Deck::Key::SelectPrev);  // wrapping: from the first to the last
  CHECK(deck.selected() == std::optional<std::size_t>(11));
  for (int i = 0; i < 4; ++i) deck.press(Deck::Key::Select);  // 0, 1, 2, 3
  CHECK(deck.selected() == std::optional<std::size_t>(3));
  std::vector<Line> lines = deck.lines(100, true);
  // Its caption alone in reverse video, across its map's column (6 keys of 2 columns), and a line under the
  // grid that names it: which head, and what it is in the step's value (the layer's id, then the head).
  CHECK(selected_spans(lines) == std::vector<std::string>{"head 3      "});
  std::string text = text_of(lines);
  const std::size_t named = text.find("selected: head 3 of 12, attn_weights_layer_0[3]; Enter opens it, Tab selects the next");
  CHECK(named != std::string::npos);
  CHECK(named < text.find("tokens: 0='Your' 1='journey' 2='starts' 3='with' 4='one' 5='step'"));  // its tokens under it
  CHECK(deck.status(200).find("step 1/1  head 3 of 12 selected (Enter: open)") != std::string::npos);
  CHECK_FALSE(deck.head());

  deck.press(Deck::Key::Enter);  // open: the head alone, at the whole width
  CHECK(deck.head() == std::optional<std::size_t>(3));
  CHECK_FALSE(deck.selected());
  lines = deck.lines(100, true);
  text = text_of(lines);
  CHECK(text.find("heatmap: head 3") != std::string::npos);
  CHECK(text.find("head 4") == std::string::npos);
  CHECK(selected_spans(lines).empty());
  // The token labels over the columns (on two lines: 'journey' is wider than a cell) and on the rows, every
  // number in its cell: head 3 puts each query's weight on the token before it.
  CHECK(std::regex_search(text, std::regex("\n +'Your' +'starts' +'one'\n +'journey' +'with' +'step'\n")));
  CHECK(text.find("\n   'journey'  1.00  0.00   \xc2\xb7     \xc2\xb7     \xc2\xb7     \xc2\xb7  \n") != std::string::npos);
  CHECK(text.find("\n      'step'  0.00  0.00  0.00  0.00  1.00  0.00\n") != std::string::npos);
  // The lines view's reading: each query's strongest keys, with their weights.
  const std::size_t lines_view = text.find("lines view: each query's strongest keys (key, weight)");
  CHECK(lines_view != std::string::npos);
  CHECK(text.find("\n  1 'journey' -> 0 'Your' 1.00, 1 'journey' 0.00\n", lines_view) != std::string::npos);
  CHECK(text.find("\n  5 'step' -> 4 'one' 1.00,", lines_view) != std::string::npos);
  CHECK(deck.status(200).find("head 3 of 12 open (Esc: every head, + -: next)") != std::string::npos);
  deck.press(Deck::Key::Select);  // with a head open, Tab opens the next
  CHECK(deck.head() == std::optional<std::size_t>(4));
  CHECK(text_of(deck.lines(100, true)).find("heatmap: head 4") != std::string::npos);

  deck.press(Deck::Key::Cancel);  // Esc: back to every head, the one that was open selected
  CHECK_FALSE(deck.quit());
  CHECK_FALSE(deck.head());
  CHECK(deck.selected() == std::optional<std::size_t>(4));
  CHECK(selected_spans(deck.lines(100, true)) == std::vector<std::string>{"head 4      "});
  deck.press(Deck::Key::Cancel);  // nothing open: Esc quits
  CHECK(deck.quit());

  // + and - open a head straight from the grid and step through them; past the end, the grid, with the head
  // that was open selected.
  Deck plus(doc, false);
  plus.press(Deck::Key::Next);
  plus.press(Deck::Key::PrevHead);
  CHECK(plus.head() == std::optional<std::size_t>(11));
  plus.press(Deck::Key::NextHead);
  CHECK_FALSE(plus.head());
  CHECK(plus.selected() == std::optional<std::size_t>(11));
  plus.press(Deck::Key::Enter);
  CHECK(plus.head() == std::optional<std::size_t>(11));
  plus.press(Deck::Key::Prev);  // another slide: nothing open, nothing selected
  CHECK_FALSE(plus.head());
  CHECK_FALSE(plus.selected());
  plus.press(Deck::Key::Select);  // the lesson's intro has no heads: nothing to select
  CHECK_FALSE(plus.selected());
}

TEST_CASE("present: a step of several heads side by side, Tab selects one, Enter opens it, Enter without one goes on",
          "[present]") {
  const Document doc = one("mha", book_inputs(), defaults_of("mha"));
  Deck deck(doc, false);
  go_to(deck, "29");
  const auto id = [&] { return doc.sections[0].steps[*deck.slides()[deck.at()].step].id; };
  REQUIRE(id() == "attn_weights");
  deck.press(Deck::Key::Enter);  // none selected: Enter is the next step, as on every slide
  CHECK(id() == "attn_weights_dropout");
  deck.press(Deck::Key::Prev);
  REQUIRE(id() == "attn_weights");
  deck.press(Deck::Key::SelectPrev);
  CHECK(deck.selected() == std::optional<std::size_t>(1));
  const std::vector<Line> lines = deck.lines(100, true);
  // Head 1's caption, both of its lines, marked; the other's not.
  CHECK(selected_spans(lines) ==
        std::vector<std::string>{"  heatmap: rows are queries, columns are keys;", "  batch 0 of 2, head 1"});
  CHECK(text_of(lines).find("selected: head 1 of 2, attn_weights[0, 1]; Enter opens it") != std::string::npos);
  const std::vector<Line> stacked = deck.lines(80, true);  // one head under the other: marked the same way
  CHECK(selected_spans(stacked) == std::vector<std::string>{"  heatmap: rows are queries, columns are keys; batch 0 of 2, head 1"});
  CHECK(text_of(stacked).find("selected: head 1 of 2, attn_weights[0, 1]; Enter opens it") != std::string::npos);
  deck.press(Deck::Key::Enter);
  CHECK(deck.head() == std::optional<std::size_t>(1));
  CHECK(id() == "attn_weights");
  const std::string open = text_of(deck.lines(100, true));
  CHECK(open.find("batch 0 of 2, head 1") != std::string::npos);
  CHECK(open.find("head 0") == std::string::npos);
  CHECK(open.find("lines view: each query's strongest keys (key, weight)") != std::string::npos);
  deck.press(Deck::Key::Cancel);
  CHECK(deck.selected() == std::optional<std::size_t>(1));
  CHECK_FALSE(deck.quit());
}

TEST_CASE("heatmap_lines: a head's note under its map only where it differs from the note the layer's heads share",
          "[present]") {
  LayoutOptions o;
  o.width = 100;
  const auto layout = [&](const Document& doc) {
    const Section& t = doc.sections.front();
    return heatmap_lines(t.steps.front(), t.inputs.tokens, o);
  };
  // Eight heads spread, four say their own (each fits its 12 columns): "spread" said once, under the grid, with
  // how many heads it is.
  std::vector<std::string> notes(12, "spread");
  for (const std::size_t h : {1, 5, 6, 10}) notes[h] = "first (0." + std::to_string(60 + h) + ")";
  std::vector<Line> lines = layout(overview_with_notes(notes));
  CHECK(where(lines, "spread").size() == 1);
  CHECK(text_of(lines).find("\n  8 of 12 heads: spread\n") != std::string::npos);
  for (const std::size_t h : {1, 5, 6, 10}) {
    const auto caption = where(lines, "head " + std::to_string(h));
    const auto note = where(lines, "first (0." + std::to_string(60 + h) + ")");
    REQUIRE(caption.size() == 1);
    REQUIRE(note.size() == 1);
    CHECK(note[0] == std::make_pair(caption[0].first + 7, caption[0].second));  // under its map's 6 rows
  }
  // Every head alike: no words under any map, the layer's once.
  lines = layout(overview_with_notes(std::vector<std::string>(12, "spread")));
  CHECK(where(lines, "spread").size() == 1);
  CHECK(text_of(lines).find("12 of 12 heads: spread") != std::string::npos);
  // No two alike: each head's own, and no common line.
  for (std::size_t h = 0; h < 12; ++h) notes[h] = "self (0." + std::to_string(50 + h) + ")";
  lines = layout(overview_with_notes(notes));
  CHECK(text_of(lines).find(" heads: ") == std::string::npos);
  for (std::size_t h = 0; h < 12; ++h) CHECK(where(lines, notes[h]).size() == 1);
}

TEST_CASE("present in Russian: the model view, the token and key lists, the open head and the scrolled status",
          "[present]") {
  Document doc = overview_document();
  doc.words = Words("ru");
  Deck deck(doc, false);
  deck.press(Deck::Key::Next);
  deck.press(Deck::Key::Select);
  std::vector<Line> lines = deck.lines(100, true);
  // The slide without its title (this test's step has an English one).
  const auto figure = [](const std::vector<Line>& l) { return text_of(std::vector<Line>(l.begin() + 1, l.end())); };
  std::string text = figure(lines);
  CHECK(selected_spans(lines) == std::vector<std::string>{"голова 0    "});
  CHECK(text.find("\n  4 из 12 голов: previous token\n") != std::string::npos);
  CHECK(text.find("\n  выбрана голова 0 из 12, attn_weights_layer_0[0]; Enter открывает её, Tab выбирает следующую\n") !=
        std::string::npos);
  CHECK(text.find("\n  токены: 0='Your' 1='journey' 2='starts'") != std::string::npos);
  const std::string status = deck.status(200);
  CHECK(status.find("выбрана голова 0 из 12 (Enter: открыть)") != std::string::npos);
  for (const char* english : {"tokens:", "heads", "selected", "head ", "those with", "Enter opens"}) {
    INFO(english);
    CHECK(text.find(english) == std::string::npos);
    CHECK(status.find(std::string(english) == "heads" ? "12 heads" : english) == std::string::npos);  // attn heads
  }
  deck.press(Deck::Key::Enter);
  text = figure(deck.lines(100, true));
  CHECK(text.find("тепловая карта: голова 0") != std::string::npos);
  CHECK(text.find("вид линий: самые сильные ключи каждого запроса (ключ, вес)") != std::string::npos);
  CHECK(deck.status(200).find("голова 0 из 12 открыта (Esc: все головы, + -: след.)") != std::string::npos);
  for (const char* english : {"lines view", "heatmap", "head ", "strongest", "every head"}) {
    INFO(english);
    CHECK(text.find(english) == std::string::npos);
    CHECK(deck.status(200).find(english) == std::string::npos);
  }
  // What the status line says of a slide taller than the screen.
  CHECK(deck.scrolled(5) == " [ниже 5, \xe2\x86\x91 \xe2\x86\x93]");  // ↑ ↓
  deck.press(Deck::Key::Down);
  CHECK(deck.scrolled(0) == " [выше 1 конец, \xe2\x86\x91 \xe2\x86\x93]");

  // 20 tokens: colour-only cells, the keys listed under the grid; 70: each query's strongest keys.
  for (const std::size_t n : {20, 70}) {
    INFO(n << " tokens");
    Document mha = one("mha", random_inputs(n, 4), mha_config(2));
    mha.words = Words("ru");
    const Step& w = mha.sections.front().step("attn_weights");
    LayoutOptions o;
    o.width = 100;
    o.words = Words("ru");
    o.head = 0;
    text = text_of(heatmap_lines(w, mha.sections.front().inputs.tokens, o));
    if (n == 20) CHECK(text.find("\n  ключи: 0='x1' 1='x2'") != std::string::npos);
    if (n == 70) CHECK(text.find("\n  70 ключей не помещаются в 100 столбцов; самые сильные ключи каждого запроса:") != std::string::npos);
    for (const char* english : {"keys:", "keys do not fit", "strongest", "lines view"}) {
      INFO(english);
      CHECK(text.find(english) == std::string::npos);
    }
  }
}

TEST_CASE("present: heatmaps with every number to 16 keys, colour-only cells to 64, a summary beyond", "[present]") {
  LayoutOptions o;
  o.width = 80;
  // The book's six tokens: every number in its cell (causal's masked weights).
  const Document book = one("causal", book_inputs(), defaults_of("causal"));
  const Section& causal = book.sections.front();
  const Step& s = causal.step("causal_attn_weights");
  REQUIRE(s.causal);
  std::vector<Line> map = heatmap_lines(s, causal.inputs.tokens, o);
  std::string text = text_of(map);
  CHECK(text.find("  'journey' ") != std::string::npos);  // a row label, whole
  CHECK(text.find("1.00") != std::string::npos);  // "Your" attends only to itself
  CHECK(text.find("keys:") == std::string::npos);
  std::size_t masked = 0, cells = 0;
  for (const Line& l : map)
    for (const Span& sp : l) {
      masked += sp.role == Role::Masked ? 1 : 0;
      cells += sp.role == Role::Cell ? 1 : 0;
    }
  CHECK(masked == 15 + 1);  // the upper triangle of 6x6, and the legend's mark
  CHECK(cells == 21 + 8);   // the lower triangle, and the legend's ramp

  // 20 and 64 tokens: colour-only cells, positions as column labels, the tokens listed under the grid.
  for (const std::size_t n : {20, 64}) {
    const Document mha = one("mha", random_inputs(n, 4), mha_config(1));
    const Section& t = mha.sections.front();
    const Step& w = t.step("attn_weights");
    for (const std::size_t width : {80, 120, 200}) {
      o.width = width;
      INFO(n << " tokens at " << width << " columns");
      map = heatmap_lines(w, t.inputs.tokens, o);
      text = text_of(map);
      for (const Line& l : map) CHECK(line_width(l) <= width);
      CHECK(text.find("keys: 0='x1'") != std::string::npos);
      CHECK(text.find("  " + std::to_string(n - 1) + " 'x" + std::to_string(n) + "' ") != std::string::npos);  // the last row's label
      for (const Line& l : map)
        for (const Span& sp : l)
          if (sp.role == Role::Cell) CHECK(sp.text.find_first_of("0123456789") == std::string::npos);  // colour only
    }
    // The numbers stay available: every one of them, row by row.
    o.width = 80;
    o.numbers = true;
    text = text_of(heatmap_lines(w, t.inputs.tokens, o));
    char first[32];
    std::snprintf(first, sizeof first, "0:%.4f", static_cast<double>(w.tensor(0, 0, 0, 0)));
    CHECK(text.find(first) != std::string::npos);
    CHECK(text.find(std::to_string(n - 1) + ":masked") != std::string::npos);
    o.numbers = false;
  }
  // 80 tokens: a summary of each query's strongest keys; 64 at 60 columns too.
  const Document big = one("mha", random_inputs(80, 4), mha_config(1));
  const Step& w = big.sections.front().step("attn_weights");
  o.width = 120;
  text = text_of(heatmap_lines(w, big.sections.front().inputs.tokens, o));
  CHECK(text.find("80 keys do not fit in 120 columns; each query's strongest keys:") != std::string::npos);
  CHECK(text.find("  0 'x1' -> 0 'x1' 1.00") != std::string::npos);  // the first query sees only itself
}

TEST_CASE("present: --scale row puts each row's largest weight at the top of the palette, fixed and matrix only the 1.0", "[present]") {
  const Document book = one("causal", book_inputs(), defaults_of("causal"));
  const Section& t = book.sections.front();
  const Step& s = t.step("causal_attn_weights");
  LayoutOptions o;
  o.width = 80;
  for (const HeatScale scale : {HeatScale::Fixed, HeatScale::Matrix, HeatScale::Row}) {
    o.scale = scale;
    const bool per_row = scale == HeatScale::Row;
    const std::vector<Line> map = heatmap_lines(s, t.inputs.tokens, o);
    // Rows of the grid: the lines that start with a label and hold cells.
    std::size_t rows = 0, rows_with_top = 0;
    for (const Line& l : map) {
      if (l.empty() || l.front().role != Role::Label) continue;
      double top = -1.0;
      for (const Span& sp : l)
        if (sp.role == Role::Cell) top = std::max(top, sp.shade);
      if (top < 0) continue;
      ++rows;
      rows_with_top += top == 1.0 ? 1 : 0;
    }
    INFO("scale " << static_cast<int>(scale));
    CHECK(rows == 6);
    CHECK(rows_with_top == (per_row ? 6u : 1u));  // scaled on the matrix, only "Your"'s 1.00 is at the top
  }
}

TEST_CASE("present: the deck's keys move between steps and lessons, reveal, jump, help, blank, quit", "[present]") {
  const Document doc = tour(book_inputs());
  Deck deck(doc, false);
  const auto where = [&] {
    const Deck::Slide& s = deck.slides()[deck.at()];
    return doc.sections[s.lesson].info.name + (s.step ? "/" + doc.sections[s.lesson].steps[*s.step].id : "/intro");
  };
  CHECK(where() == "simple/intro");
  CHECK(deck.status(200).find("step 0/12 intro") != std::string::npos);  // the intro is step 0
  CHECK(text_of(deck.lines(100, true)).find("This is step 0 of 12; steps 1 to 12 follow.") != std::string::npos);
  deck.press(Deck::Key::Next);
  CHECK(where() == "simple/inputs");
  CHECK(deck.status(200).find("step 1/12") != std::string::npos);  // as its [1/12]
  deck.press(Deck::Key::Prev);
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Prev);  // nothing before the first slide
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::GoTo);
  deck.press(Deck::Key::Digit, '3');
  CHECK(deck.status(200).find("go to step: 3_") != std::string::npos);
  deck.press(Deck::Key::Enter);
  CHECK(where() == "simple/" + doc.sections[0].steps[2].id);
  CHECK(deck.status(200).find("step 3/") != std::string::npos);
  CHECK(text_of(deck.lines(100, true)).find("[3/12] " + doc.sections[0].steps[2].id) == 0);
  deck.press(Deck::Key::GoTo);
  deck.press(Deck::Key::Digit, '0');
  deck.press(Deck::Key::Enter);
  CHECK(where() == "simple/intro");  // g 0: the lesson's intro
  deck.press(Deck::Key::NextLesson);
  CHECK(where() == "all-tokens/intro");
  deck.press(Deck::Key::Next);
  deck.press(Deck::Key::PrevLesson);  // inside a lesson: back to its start
  CHECK(where() == "all-tokens/intro");
  deck.press(Deck::Key::PrevLesson);  // at its start: the lesson before
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Last);
  CHECK(where() == doc.sections.back().info.name + "/" + doc.sections.back().steps.back().id);
  deck.press(Deck::Key::Next);  // nothing after the last
  CHECK(where() == doc.sections.back().info.name + "/" + doc.sections.back().steps.back().id);
  deck.press(Deck::Key::First);
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Down);
  deck.press(Deck::Key::Down);
  CHECK(deck.scroll() == 2);
  deck.press(Deck::Key::Up);
  CHECK(deck.scroll() == 1);
  deck.press(Deck::Key::Help);
  CHECK(deck.help());
  deck.press(Deck::Key::Next);  // closes the help, moves nowhere
  CHECK_FALSE(deck.help());
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Blank);
  CHECK(deck.blank());
  deck.press(Deck::Key::Next);
  CHECK_FALSE(deck.blank());
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Numbers);
  CHECK(deck.numbers());
  CHECK_FALSE(deck.quit());
  deck.press(Deck::Key::Cancel);  // Esc
  CHECK(deck.quit());

  // --reveal: a step's code first, its tensor on the next key; coming back, it is shown.
  Deck reveal(doc, true);
  reveal.press(Deck::Key::Next);
  CHECK_FALSE(reveal.revealed());
  std::string text = text_of(reveal.lines(80, true));
  CHECK(text.find(">>>") != std::string::npos);
  CHECK(text.find("shape: torch.Size") == std::string::npos);
  CHECK(text.find("What will it be?") != std::string::npos);
  reveal.press(Deck::Key::Next);
  CHECK(reveal.revealed());
  CHECK(text_of(reveal.lines(80, true)).find("shape: torch.Size([6, 3])") != std::string::npos);
  reveal.press(Deck::Key::Next);
  CHECK_FALSE(reveal.revealed());
  reveal.press(Deck::Key::Prev);
  CHECK(reveal.revealed());
  // The status line fits the width, keys dropped first.
  for (const std::size_t width : {60, 80, 120}) CHECK(reveal.status(width).size() <= width);
  CHECK(reveal.status(60).find("? help") != std::string::npos);
  CHECK(reveal.status(200).find("n numbers") != std::string::npos);
}

TEST_CASE("present: refused before any work without a terminal, for other options and unknown lessons", "[present]") {
  auto r = attn_test::run({"present"});
  CHECK(r.status == 2);
  CHECK(r.err == "attn: attn present draws on a terminal: run it with standard input and output on one (for a pipe or a "
                 "file, use attn tour) (see 'attn present --help')\n");
  r = attn_test::run({"present", "causl"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn: attn present: no lesson 'causl'; did you mean 'causal'?") == 0);
  r = attn_test::run({"present", "lisst"});  // near no lesson, though near attn list
  CHECK(r.err.find("attn: attn present: no lesson 'lisst' (attn list names them)") == 0);
  r = attn_test::run({"present", "--input", "-"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn present reads its keys from standard input, which --input - reads the embeddings from") !=
        std::string::npos);
  r = attn_test::run({"present", "--json"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn present draws on the terminal and does not take --json") != std::string::npos);
  r = attn_test::run({"present", "simple", "--d-out", "4"});  // a lesson option no lesson presented takes
  CHECK(r.status == 2);
  std::string takers;  // in book order: trainable, causal, dropout, mha-wrapper, mha, ...
  for (const Lesson& lesson : lessons())
    if (lesson.modes.front().takes(Opt::DOut)) takers += (takers.empty() ? "" : ", ") + lesson.info.name;
  CHECK(takers.rfind("trainable, causal, dropout, mha-wrapper, mha", 0) == 0);
  CHECK(r.err == "attn: attn present: none of the lessons presented (simple) takes --d-out; the lessons that take it: " +
                     takers + " (see 'attn present --help')\n");
  r = attn_test::run({"present", "--theme", "blue"});
  CHECK(r.status == 2);
  CHECK(r.err.find("expected dark, light or contrast, got 'blue'") != std::string::npos);
  r = attn_test::run({"present", "gqa", "--model", ATTN_TESTS_DIR "/golden/models/tiny-f32"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn present gqa does not take --model") != std::string::npos);
  r = attn_test::run({"present", "--help"});
  CHECK(r.status == 0);
  CHECK(r.out.find("PageDown") != std::string::npos);
  CHECK(r.out.find("--reveal") != std::string::npos);
}

namespace {

// What `attn present ARGS` hands the screen, as run_cli computes it on a terminal: the document and the
// options (cli.hpp's PresentScreen, in place of ncurses).
struct Presented {
  int status = -1;
  std::string err;
  Document doc;
  PresentOptions options;
};
Presented presented(std::vector<std::string> args) {
  args.insert(args.begin(), "present");
  Terminal term;
  term.stdin_tty = term.stdout_tty = true;
  std::ostringstream out, err;
  std::istringstream in;
  Presented p;
  p.status = run_cli(args, out, err, in, term, [&](const Document& doc, const PresentOptions& o) {
    p.doc = doc;
    p.options = o;
  });
  p.err = err.str();
  return p;
}

// A lesson of the deck as `attn LESSON --json` writes it: config, inputs, modules and the steps shown.
std::string json_of(const Presented& p, const std::string& lesson) {
  for (const Section& t : p.doc.sections)
    if (t.info.name == lesson) return dump_json(trace_to_json(t, p.doc));
  FAIL("no lesson " << lesson << " in the deck");
  return {};
}

std::vector<std::string> names_in(const Document& doc) {
  std::vector<std::string> out;
  for (const Section& t : doc.sections) out.push_back(t.info.name);
  return out;
}

}  // namespace

TEST_CASE("present takes the lesson options as the lesson does: each deck lesson is the lesson's run, to the bit",
          "[present][cli]") {
  const std::string tiny = ATTN_TESTS_DIR "/golden/models/tiny-f32";
  struct Case {
    std::string option, value, lesson;
    std::vector<std::string> with;  // what the option needs beside it
  };
  const std::vector<Case> cases{
      {"--seed", "7", "causal", {}},          {"--d-out", "3", "causal", {}},
      {"--heads", "3", "mha-wrapper", {}},    {"--kv-groups", "1", "gqa", {}},
      {"--dropout", "0.2", "causal", {}},     {"--dropout-rng", "mkl", "dropout", {}},
      {"--qkv-bias", "", "trainable", {}},    {"--batch", "1", "mha", {}},
      {"--prompt", "3", "kv-cache", {}},      {"--query", "2", "simple", {}},
      {"--head", "1", "causal", {"--model", tiny}}, {"--emb-dim", "8", "feed-forward", {}},
      {"--drop-rate", "0.5", "block", {}},
      {"--layers", "1", "gpt", {"--emb-dim", "8", "--heads", "2"}},
      {"--context-length", "6", "gpt", {"--emb-dim", "8", "--heads", "2", "--layers", "1"}},
      {"--max-new-tokens", "2", "generate", {"--emb-dim", "8", "--heads", "2", "--layers", "1"}},
  };
  // Every lesson option attn present takes is here.
  for (const OptionSpec* spec : options_in(Scope::Lesson)) {
    if (!present_takes(*spec)) continue;
    INFO(spec->name);
    CHECK(std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.option == spec->spellings().front(); }));
  }
  for (const Case& c : cases) {
    INFO("attn present " << c.lesson << " " << c.option << " " << c.value);
    std::vector<std::string> given{c.option};
    if (!c.value.empty()) given.push_back(c.value);
    given.insert(given.end(), c.with.begin(), c.with.end());
    std::vector<std::string> present_args{c.lesson}, lesson_args{c.lesson, "--json"}, book_args{c.lesson, "--json"};
    present_args.insert(present_args.end(), given.begin(), given.end());
    lesson_args.insert(lesson_args.end(), given.begin(), given.end());
    book_args.insert(book_args.end(), c.with.begin(), c.with.end());
    const Presented p = presented(present_args);
    REQUIRE(p.status == 0);
    const auto lesson = attn_test::run(lesson_args);
    REQUIRE(lesson.status == 0);
    CHECK(json_of(p, c.lesson) == lesson.out);                     // the same numbers and config as the lesson's
    CHECK(json_of(p, c.lesson) != attn_test::run(book_args).out);  // and the option changed them
  }
  // The issue's example: the causal attn_weights of --seed 7.
  const Presented seeded = presented({"causal", "--seed", "7", "--step", "attn_weights"});
  REQUIRE(seeded.status == 0);
  const Step& w = seeded.doc.sections.at(0).step("attn_weights");
  CHECK(w.computed);
  CHECK(torch_str(w.tensor, false).find("tensor([[0.1657, 0.1655, 0.1654, 0.1687, 0.1653, 0.1694],") == 0);
  CHECK(json_of(seeded, "causal") == attn_test::run({"causal", "--seed", "7", "--step", "attn_weights", "--json"}).out);
}

TEST_CASE("present with several lessons: each option applies to the lessons that take it, --step to those that have it",
          "[present][cli]") {
  // --heads: mha's only; --seed: causal's and mha's; simple takes neither and runs as the book does.
  Presented p = presented({"simple", "causal", "mha", "--heads", "1", "--seed", "5", "--no-explain"});
  REQUIRE(p.status == 0);
  CHECK(names_in(p.doc) == std::vector<std::string>{"simple", "causal", "mha"});
  CHECK(json_of(p, "simple") == attn_test::run({"simple", "--json"}).out);
  CHECK(json_of(p, "causal") == attn_test::run({"causal", "--seed", "5", "--json"}).out);
  CHECK(json_of(p, "mha") == attn_test::run({"mha", "--heads", "1", "--seed", "5", "--json"}).out);
  CHECK_FALSE(p.options.explain);
  {  // --no-explain: each slide its title and result, no explanation or code
    Deck deck(p.doc, false, p.options.explain);
    deck.press(Deck::Key::Next);
    const std::string slide = text_of(deck.lines(100, false));
    CHECK(slide.find("[1/12] inputs") != std::string::npos);
    CHECK(slide.find("shape: torch.Size([6, 3])") != std::string::npos);
    CHECK(slide.find(">>>") == std::string::npos);
    CHECK(text_of(Deck(p.doc, false, true).lines(100, false)).find("Lesson 1 of 3") != std::string::npos);
  }
  // --step: only those slides, in the lessons that have the step; the others are left out.
  p = presented({"simple", "causal", "mha", "--step", "attn_weights,context_vecs"});
  REQUIRE(p.status == 0);
  CHECK(names_in(p.doc) == std::vector<std::string>{"causal", "mha"});
  for (const Section& t : p.doc.sections)
    for (const Step& s : t.steps) CHECK(s.computed == (s.id == "attn_weights" || s.id == "context_vecs"));
  Deck deck(p.doc, false);
  CHECK(deck.slides().size() == 6);  // each lesson's intro and its two steps
  CHECK(text_of(deck.lines(100, false)).find("This is step 0 of 18; shown: steps 4 attn_weights, 18 context_vecs.") !=
        std::string::npos);
  deck.press(Deck::Key::Next);
  CHECK(text_of(deck.lines(100, false)).find("[4/18] attn_weights") != std::string::npos);  // numbered as in the lesson
  CHECK(deck.status(200).find("step 4/18") != std::string::npos);
  const auto go = [&](const std::string& n) {
    deck.press(Deck::Key::GoTo);
    for (const char d : n) deck.press(Deck::Key::Digit, d);
    deck.press(Deck::Key::Enter);
    const Deck::Slide& s = deck.slides()[deck.at()];
    return s.step ? p.doc.sections[s.lesson].steps[*s.step].id : std::string("intro");
  };
  CHECK(go("18") == "context_vecs");  // step 18 of causal, as [18/18]
  CHECK(go("10") == "attn_weights");  // not shown: the nearest shown before it
  CHECK(go("0") == "intro");
  // Refused, naming what is wrong.
  p = presented({"simple", "causal", "--step", "attn_weight"});
  CHECK(p.status == 2);
  CHECK(p.err == "attn: --step attn_weight: none of the lessons presented (simple, causal) has such a step; attn LESSON "
                 "--json | jq '.steps[].id' lists a lesson's steps (see 'attn present --help')\n");
  p = presented({"causal", "--step", "attn_weight"});  // one lesson: its own message, with its steps
  CHECK(p.status == 2);
  CHECK(p.err.find("attn: --step attn_weight: attn causal has no such step; its steps are queries, keys,") == 0);
  p = presented({"simple", "all-tokens", "--seed", "1"});
  CHECK(p.status == 2);
  CHECK(p.err.find("attn: attn present: none of the lessons presented (simple, all-tokens) takes --seed; the lessons "
                   "that take it: trainable, causal,") == 0);
  p = presented({"--heads", "4"});  // a lesson's own refusal names the lesson
  CHECK(p.status == 2);
  CHECK(p.err.find("attn: attn mha: --d-out 2 is not divisible by --heads 4") == 0);
  p = presented({"--heads", "4", "--d-out", "4"});
  CHECK(p.status == 0);
  p = presented({"--estimate"});
  CHECK(p.status == 2);
  CHECK(p.err.find("attn: attn present does not take --estimate, which belongs to the report attn kv-cache --estimate "
                   "prints instead of the lesson's steps; run attn kv-cache --estimate") == 0);
  p = presented({"--dtype", "fp16"});
  CHECK(p.status == 2);
  CHECK(p.err.find("attn: attn present does not take --dtype, which belongs to the report attn gqa --kv-cache") == 0);
  p = presented({"simple", "all-tokens", "--emb-dim", "64"});  // feed-forward's, and the reports'
  CHECK(p.status == 2);
  CHECK(p.err == "attn: attn present: none of the lessons presented (simple, all-tokens) takes --emb-dim; the lessons "
                 "that take it: dummy-gpt, feed-forward, block, gpt, generate (see 'attn present --help')\n");
  p = presented({"--format", "html"});
  CHECK(p.status == 2);
  CHECK(p.err.find("attn present draws on the terminal and does not take --format (for a pipe or a file use attn tour "
                   "or attn LESSON; for slides in a browser, attn LESSON --format html)") != std::string::npos);
  p = presented({"causal", "--heads", "2", "--model", ATTN_TESTS_DIR "/golden/models/tiny-f32"});  // the table's rules
  CHECK(p.status == 2);
  CHECK(p.err.find("attn: --heads does not apply with --model") == 0);
}

// ---------------------------------------------------------------------------------------------------------
// In a real terminal: tmux runs attn present in a window of a given size (tests/tmux.hpp).
namespace {


// Every line of the screen at most `width` columns, and none that breaks a number (a line ending in a
// digit and the next starting with one, or a number split as "0.1" / "921").
bool fits(const std::string& screen, std::size_t width) {
  std::istringstream lines(screen);
  std::string line;
  while (std::getline(lines, line))
    if (display_width(line) > width) return false;
  return true;
}

}  // namespace

TEST_CASE("present in tmux at 60, 80 and 120 columns: forward, back, jump, lessons, quit, and the terminal is clean after",
          "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  for (const std::size_t width : {60, 80, 120}) {
    INFO(width << " columns");
    const attn_test::Tmux t(width, 50, quote(ATTN_EXE) + " present");
    REQUIRE(t.ok());
    REQUIRE(t.wait_for("Lesson 1 of " + kCount + ": attn " + lessons()[0].info.name));
    CHECK(t.format("#{alternate_on}") == "1\n");
    CHECK(t.screen().find("step") != std::string::npos);
    t.keys("Right");
    REQUIRE(t.wait_for("[1/12] inputs"));
    t.keys("Space");
    REQUIRE(t.wait_for("[2/12] query"));
    t.keys("PageDown");
    REQUIRE(t.wait_for("[3/12] attn_scores_2"));
    t.keys("Left");
    REQUIRE(t.wait_for("[2/12] query"));
    t.keys("PageUp");
    REQUIRE(t.wait_for("[1/12] inputs"));
    t.keys("BSpace");
    REQUIRE(t.wait_for("Lesson 1 of " + kCount));
    t.keys("g 8 Enter");
    REQUIRE(t.wait_for("[8/12] attn_weights_2_naive"));
    CHECK(fits(t.screen(), width));
    CHECK(t.screen().find("0.1385") != std::string::npos);  // attn_weights_2_naive, whole at every width
    t.keys("]");
    REQUIRE(t.wait_for("Lesson 2 of " + kCount + ": attn " + lessons()[1].info.name));
    t.keys("End");
    REQUIRE(t.wait_for("lesson " + kCount + "/" + kCount));
    t.keys("Home");
    REQUIRE(t.wait_for("Lesson 1 of " + kCount));
    t.keys("?");
    REQUIRE(t.wait_for("Any key closes this help."));
    t.keys("x");
    REQUIRE(t.wait_for("Any key closes this help.", false));
    t.keys("q");
    REQUIRE(t.wait_for("attn-exited-0"));
    // Restored: the normal screen, the cursor shown, echo and line editing back.
    CHECK(t.format("#{alternate_on} #{cursor_flag}") == "0 1\n");
    CHECK(t.wait_for("tty: echo icanon"));
  }
}

TEST_CASE("present in tmux: --reveal shows the code before the tensor, and a resize lays the step out again",
          "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  for (const std::size_t width : {60, 80, 120}) {
  INFO(width << " columns");
  const attn_test::Tmux t(width, 40, quote(ATTN_EXE) + " present causal --reveal");
  REQUIRE(t.ok());
  REQUIRE(t.wait_for("Lesson 1 of 1: attn causal"));
  t.keys("Right");
  REQUIRE(t.wait_for("[1/18] queries"));
  CHECK(t.screen().find("... queries = sa_v2.W_query(inputs)") != std::string::npos);
  CHECK(t.screen().find("What will it be?") != std::string::npos);
  CHECK(t.screen().find("tensor([[") == std::string::npos);
  t.keys("Right");
  REQUIRE(t.wait_for("tensor([[ 0.6600, -0.2047],"));
  // Step 4, attn_weights: its heatmap with every number at 80 columns.
  t.keys("g 4 Enter Right");
  REQUIRE(t.wait_for("0.1921"));
  REQUIRE(t.wait_for("journ"));
  // Narrower than the heatmap with numbers (10 + 6 x 6 = 46 columns fit; 40 do not): colour-only cells and the
  // tokens listed under them, re-laid on the resize without a key.
  t.resize(40, 40);
  REQUIRE(t.wait_for("keys: 0='Your'"));
  CHECK(fits(t.screen(), 40));
  t.resize(120, 40);
  REQUIRE(t.wait_for("keys: 0='Your'", false));
  CHECK(t.screen().find("  'journey'  0.20") != std::string::npos);
  t.keys("C-c");  // Ctrl-C quits as q does
  REQUIRE(t.wait_for("attn-exited-0"));
  CHECK(t.format("#{alternate_on} #{cursor_flag}") == "0 1\n");
  }
}

TEST_CASE("present in tmux: takes --color and --max-memory, which its --help lists", "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  {  // a budget too small: refused before any work, as every other run is
    const attn_test::Tmux t(100, 20, quote(ATTN_EXE) + " present --max-memory 1M");
    REQUIRE(t.ok());
    CHECK(t.wait_for("attn: attn present would need at least 96 MiB of memory (the process itself)"));
    CHECK(t.wait_for("attn-exited-2"));
  }
  {  // --color never: the presenter runs, in monochrome
    const attn_test::Tmux t(100, 30, quote(ATTN_EXE) + " present simple --color never");
    REQUIRE(t.ok());
    CHECK(t.wait_for("Lesson 1 of 1: attn simple"));
    t.keys("End");  // the last step, context_vec_2, with its code and tensor
    REQUIRE(t.wait_for("context_vec_2"));
    const std::string screen = t.screen(true);
    CHECK(screen.find("48;5;") == std::string::npos);  // no 256-colour cell or text
    CHECK(screen.find("38;5;") == std::string::npos);
    CHECK(screen.find("\x1b[7m") != std::string::npos);  // reverse video instead
    t.keys("q");
    CHECK(t.wait_for("attn-exited-0"));
  }
}

TEST_CASE("present in tmux at 100x30: takes --text, --seed and --step as attn causal does", "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  // What the lesson itself prints for the same options: the step's number and its first row.
  const auto lesson = attn_test::run({"causal", "--text", "The cat sat", "--seed", "3", "--step", "attn_weights"});
  REQUIRE(lesson.status == 0);
  const std::string first_row = "tensor([[0.2903, 0.3250, 0.3847],";  // not the book's seed-123 weights
  REQUIRE(lesson.out.find("[8/22] attn_weights") != std::string::npos);
  REQUIRE(lesson.out.find(first_row) != std::string::npos);
  const attn_test::Tmux t(100, 30, quote(ATTN_EXE) + " present causal --text 'The cat sat' --seed 3 --step attn_weights");
  REQUIRE(t.ok());
  REQUIRE(t.wait_for("Lesson 1 of 1: attn causal"));
  CHECK(t.screen().find("'The' '\xe2\x90\xa3" "cat' '\xe2\x90\xa3" "sat'") != std::string::npos);  // as token_repr shows them
  t.keys("Right");
  REQUIRE(t.wait_for("[8/22] attn_weights"));
  CHECK(t.wait_for(first_row));
  CHECK(t.screen().find("step 8/22") != std::string::npos);
  t.keys("Right");  // the only step shown: nothing after it
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(t.screen().find("[8/22] attn_weights") != std::string::npos);
  t.keys("q");
  REQUIRE(t.wait_for("attn-exited-0"));
}

TEST_CASE("present in tmux at 100x30: mha's and causal's attn_weights heatmaps on screen without scrolling, t for the tensor",
          "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  // The last row ('step') of each head's map, every number in its cell.
  const auto last_rows = [](const std::string& screen) {
    std::istringstream lines(screen);
    std::string line;
    std::size_t n = 0, count = 0;
    while (std::getline(lines, line)) {
      ++n;
      for (std::size_t at = line.find("    'step'  0.1"); at != std::string::npos; at = line.find("    'step'  0.1", at + 1)) ++count;
    }
    CHECK(n <= 30);  // what capture-pane gives is the 30 lines on screen
    return count;
  };
  // True once `done` is, within 10 s (as Tmux::wait_for waits for a text).
  const auto until = [](const std::function<bool()>& done) {
    for (int i = 0; i < 200; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  struct Case {
    std::string lesson, jump, title;
    std::size_t heads;
  };
  for (const Case& c : {Case{"mha", "g 2 9 Enter", "[29/33] attn_weights", 2}, Case{"causal", "g 4 Enter", "[4/18] attn_weights", 1}}) {
    INFO("attn present " << c.lesson);
    const attn_test::Tmux t(100, 30, quote(ATTN_EXE) + " present " + c.lesson);
    REQUIRE(t.ok());
    REQUIRE(t.wait_for("Lesson 1 of 1"));
    t.keys(c.jump);
    REQUIRE(t.wait_for(c.title));
    const std::string screen = t.screen();
    CHECK(screen.rfind(c.title, 0) == 0);                          // the title on the first line, not scrolled
    CHECK(screen.find("heatmap: rows are queries") < screen.find(">>>"));  // the heatmap before the code
    CHECK(last_rows(screen) == c.heads);                           // every head's map whole on screen
    if (c.heads == 2) {  // + enlarges head 0 alone; past the last, both again
      t.keys("+");
      REQUIRE(t.wait_for("head 0 of 2"));
      CHECK(t.screen().find("batch 0 of 2, head 1") == std::string::npos);
      CHECK(last_rows(t.screen()) == 1);
      t.keys("+ +");
      // Both heads again once the keys are read: "head 1 of 2" is also absent before the first "+" is read.
      CHECK(until([&] { return last_rows(t.screen()) == 2; }));
    }
    t.keys("t");  // the tensor first, as the text view orders a step
    // The shape line is on the screen before "t" is read too: wait for the order to change.
    CHECK(until([&] {
      const std::string tensor_first = t.screen();
      return tensor_first.find("shape: torch.Size([") < tensor_first.find("heatmap: rows are queries");
    }));
    t.keys("q");
    REQUIRE(t.wait_for("attn-exited-0"));
  }
}

namespace {

// Whether `text`, on a screen captured with its escapes (Tmux::screen(true)), is drawn in reverse video: an
// SGR with 7 among its numbers since the last reset before it.
bool reversed(const std::string& screen, const std::string& text) {
  const std::size_t at = screen.find(text);
  if (at == std::string::npos) return false;
  const std::size_t reset = screen.rfind("\x1b[0m", at), from = reset == std::string::npos ? 0 : reset + 4;
  const std::string before = screen.substr(from, at - from);
  return std::regex_search(before, std::regex("\x1b\\[([0-9;]*;)?7(;[0-9;]*)?m"));
}

}  // namespace

TEST_CASE("present in tmux at 100x30: attn heads --model's model view, a head selected, opened, closed, in English and Russian",
          "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  const std::string tiny = ATTN_TESTS_DIR "/golden/models/tiny-f32", text = "The cat sat on the mat.";
  // Layer 0's head 1 as the lesson computes it: its rows, each query's label then its numbers, as the open head
  // draws them ("      '␣sat'  0.42  0.34  0.24").
  const auto json = attn_test::run({"heads", "--model", tiny, "--text", text, "--step", "attn_weights_layer_0", "--json"});
  REQUIRE(json.status == 0);
  const nlohmann::json weights = nlohmann::json::parse(json.out)["steps"][0]["data"][1];  // (7, 7)
  const std::vector<std::string> labels{"'The'", "'\xe2\x90\xa3" "cat'", "'\xe2\x90\xa3" "sat'", "'\xe2\x90\xa3" "on'",
                                        "'\xe2\x90\xa3" "the'", "'\xe2\x90\xa3" "mat'", "'.'"};
  const auto row = [&](std::size_t i) {
    std::string r = "  " + std::string(10 - display_width(labels[i]), ' ') + labels[i];
    for (std::size_t j = 0; j <= i; ++j) {
      const std::string n = heat_number(weights[i][j].get<float>());
      r += " " + std::string(5 - n.size(), ' ') + n;
    }
    return r;
  };
  std::string tokens;  // "0='The' 1='␣cat' ...", as the grid lists them
  for (std::size_t j = 0; j < labels.size(); ++j) tokens += (j ? " " : "") + std::to_string(j) + "=" + labels[j];
  struct Words {
    std::string lang, banner, common, selected, status_selected, tokens, open, lines_view, status_open, scrolled;
    std::vector<std::string> english;  // none of these on any of its screens
  };
  const Words en{"en", "Lesson 1 of 1: attn heads", "2 of 2 heads: spread",
                 "selected: head 1 of 2, attn_weights_layer_0[1]; Enter opens it, Tab selects the next",
                 "head 1 of 2 selected (Enter: open)", "tokens: " + tokens, "heatmap: head 1",
                 "lines view: each query's strongest keys (key, weight)", "head 1 of 2 open (Esc: every head, + -: next)",
                 " down, Up/Down]", {}};
  const Words ru{"ru", "Урок 1 из 1: attn heads", "2 из 2 голов: рассеянное внимание",
                 "выбрана голова 1 из 2, attn_weights_layer_0[1]; Enter открывает её, Tab выбирает следующую",
                 "выбрана голова 1 из 2 (Enter: открыть)", "токены: " + tokens, "тепловая карта: голова 1",
                 "вид линий: самые сильные ключи каждого запроса (ключ, вес)",
                 "голова 1 из 2 открыта (Esc: все головы, + -: след.)", "\xe2\x86\x91 \xe2\x86\x93]",
                 {"tokens:", "positions:", "keys:", "head ", "selected", "those with", "Enter opens", "Up/Down",
                  "lines view", "every number", "heatmap", "colours", "spread", "scale", "Lesson"}};  // not "masked": code
  for (const Words& w : {en, ru}) {
    INFO("--lang " << w.lang);
    const attn_test::Tmux t(100, 30, quote(ATTN_EXE) + " present heads --lang " + w.lang + " --model " + quote(tiny) +
                                         " --text " + quote(text));
    REQUIRE(t.ok());
    REQUIRE(t.wait_for(w.banner));
    std::vector<std::string> screens;
    t.keys("g 6 Enter");  // layer 0: the model view, its two heads side by side
    REQUIRE(t.wait_for(w.common));
    std::string screen = t.screen();
    CHECK(screen.rfind("[6/8] attn_weights_layer_0", 0) == 0);
    CHECK(screen.find(w.tokens) != std::string::npos);
    CHECK(screen.find(w.selected) == std::string::npos);
    t.keys("BTab");  // Shift-Tab: from none, the last head
    REQUIRE(t.wait_for(w.selected));
    screen = t.screen(true);
    const std::string head0 = w.lang == "en" ? "head 0" : "голова 0", head1 = w.lang == "en" ? "head 1" : "голова 1";
    CHECK(reversed(screen, head1));  // its caption marked, the other's not
    CHECK_FALSE(reversed(screen, head0));
    screen = t.screen();
    screens.push_back(screen);
    CHECK(screen.find(w.status_selected) != std::string::npos);
    CHECK(screen.find(w.selected) < screen.find(w.tokens));  // the tokens listed under it
    t.keys("Enter");  // head 1 alone, large: token labels on rows and columns, every number, the lines view
    REQUIRE(t.wait_for(w.open));
    screen = t.screen();
    screens.push_back(screen);
    CHECK(screen.find(head0) == std::string::npos);
    const std::string over_columns = "\n +'The' +'\xe2\x90\xa3sat' +'\xe2\x90\xa3the' +'\\.'\n +'\xe2\x90\xa3" "cat' +'\xe2\x90\xa3on' +'\xe2\x90\xa3mat'\n";
    CHECK(std::regex_search(screen, std::regex(over_columns)));  // the tokens over the columns, on two lines
    for (std::size_t i = 0; i < 7; ++i) CHECK(screen.find("\n" + row(i)) != std::string::npos);
    CHECK(screen.find(w.lines_view) != std::string::npos);
    CHECK(screen.find("\n  0 'The' -> 0 'The' 1.00\n") != std::string::npos);
    CHECK(screen.find(w.status_open) != std::string::npos);
    CHECK(screen.find(w.scrolled) != std::string::npos);
    t.keys("Escape");  // back to the grid, head 1 still selected
    REQUIRE(t.wait_for(w.common));
    screen = t.screen();
    screens.push_back(screen);
    CHECK(screen.find(w.selected) != std::string::npos);
    CHECK(screen.find(w.open) == std::string::npos);
    t.keys("Escape");  // nothing open: Esc quits
    REQUIRE(t.wait_for("attn-exited-0"));
    for (const std::string& s : screens)
      for (const std::string& english : w.english) {
        INFO(english << " on\n" << s);
        CHECK(s.find(english) == std::string::npos);
      }
  }
}

TEST_CASE("present in tmux: a step taller than the screen scrolls inside itself with Up and Down", "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  const attn_test::Tmux t(80, 16, quote(ATTN_EXE) + " present causal");
  REQUIRE(t.ok());
  REQUIRE(t.wait_for("Lesson 1 of 1"));
  t.keys("g 4 Enter");  // attn_weights: the tensor and its heatmap, about 30 lines
  REQUIRE(t.wait_for("[4/18] attn_weights"));
  CHECK(t.screen().find(" down, Up/Down]") != std::string::npos);
  t.keys("Down Down Down");
  REQUIRE(t.wait_for("[3 up "));
  CHECK(t.screen().find("[4/18] attn_weights") == std::string::npos);  // the title scrolled off the top
  t.keys("Up Up Up");
  REQUIRE(t.wait_for("[4/18] attn_weights"));  // back at its top
  t.keys("Down Right Left");
  REQUIRE(t.wait_for("[4/18] attn_weights"));  // a slide comes back at its top
  t.keys("q");
  REQUIRE(t.wait_for("attn-exited-0"));
}

TEST_CASE("the text view on a terminal of known width: wrapped between numbers, heatmaps fitted, piped unchanged",
          "[present][terminal]") {
  const auto run_on = [](std::size_t columns, const std::vector<std::string>& args) {
    Terminal term;
    term.stdin_tty = term.stdout_tty = true;
    term.term = "xterm-256color";
    term.columns = columns;
    std::ostringstream out, err;
    std::istringstream in;
    const int status = run_cli(args, out, err, in, term);
    REQUIRE(status == 0);
    return out.str();
  };
  const std::vector<std::string> args{"mha", "--random", "20x4", "--d-out", "4", "--heads", "1", "--batch", "1",
                                      "--step", "attn_weights", "--color", "never"};
  for (const std::size_t width : {60, 80, 120}) {
    INFO(width << " columns");
    const std::string out = run_on(width, args);
    CHECK(fits(out, width));
    CHECK(out.find("keys: 0='x1' 1='x2'") != std::string::npos);  // 20 keys: colour-only cells, the tokens listed
    CHECK(out.find("heatmap left out") == std::string::npos);
  }
  // Every number of up to kHeatmapMaxTokens keys: the piped map where it fits, else fitted (issue 29 widened the
  // piped map's cells, and a check still measured the old ones: 10 keys took 82 columns of 80).
  for (const std::size_t width : {60, 80, 100, 120})
    for (std::size_t n = 1; n <= kHeatmapMaxTokens; ++n) {
      INFO(width << " columns, " << n << " tokens");
      CHECK(fits(run_on(width, {"all-tokens", "--random", std::to_string(n) + "x3", "--step", "attn_weights", "--heatmap",
                                "always", "--color", "never"}),
                 width));
    }
  // Not a terminal (or one of unknown width): the output of every other run, whatever the terminal.
  const std::string piped = attn_test::run(std::vector<std::string>(args.begin(), args.end() - 2)).out;
  CHECK(piped.find("keys:") == std::string::npos);
  CHECK(run_on(0, args).find("(heatmap left out: more than 16 tokens)") != std::string::npos);
  // The book's six tokens: at 200 columns exactly the text of a pipe; at 80, the same but for the lines a pipe
  // has that are wider than 80 columns (a long line of code), which are broken at spaces. Every tensor the
  // book prints is unchanged.
  const std::vector<std::string> book{"causal", "--color", "never", "--heatmap", "always"};
  const std::string plain_text = run_on(0, book), at80 = run_on(80, book);
  CHECK(run_on(200, book) == plain_text);
  CHECK(fits(at80, 80));
  std::istringstream want(plain_text), got(at80);
  std::string w, g;
  std::size_t wide = 0;
  while (std::getline(want, w)) {
    if (display_width(w) > 80) {
      ++wide;
      while (std::getline(got, g) && g.find(w.substr(0, 20)) == std::string::npos) {
      }
      continue;  // its pieces follow; the next narrow line must come next after them
    }
    while (std::getline(got, g) && g != w) {
      REQUIRE(display_width(g) <= 80);
    }
    CHECK(g == w);
  }
  CHECK(wide >= 1);  // causal's dropout line of code
  // mha's two heads side by side at 100 columns, one under the other at 80; in a pipe, as always.
  const std::vector<std::string> heads{"mha", "--step", "attn_weights", "--color", "never"};
  const auto same_line = [](const std::string& out) {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line))
      if (line.find("head 0") != std::string::npos) return line.find("head 1") != std::string::npos;
    return false;
  };
  CHECK(same_line(run_on(100, heads)));
  CHECK_FALSE(same_line(run_on(80, heads)));
  CHECK(fits(run_on(100, heads), 100));
  CHECK_FALSE(same_line(attn_test::run({"mha", "--step", "attn_weights", "--heatmap", "always"}).out));
}

TEST_CASE("present in tmux: each theme's colours, viridis or cividis cells, masked cells on a background of their own",
          "[present][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  // Theme: its background, and the top of its palette as the xterm colour of "Your"'s 1.00 in the causal weights.
  struct Case {
    std::string theme, background, top, masked;
  };
  for (const Case& c : {Case{"dark", "48;5;234", "48;5;220", "48;5;240"}, Case{"light", "48;5;231", "48;5;221", "48;5;250"},
                        Case{"contrast", "48;5;16", "48;5;220", "48;5;241"}}) {
    INFO("--theme " << c.theme);
    const attn_test::Tmux t(100, 50, quote(ATTN_EXE) + " present causal --theme " + c.theme);
    REQUIRE(t.ok());
    REQUIRE(t.wait_for("Lesson 1 of 1"));
    t.keys("g 1 1 Enter");  // step 11: causal_attn_weights
    REQUIRE(t.wait_for("causal_attn_weights"));
    const std::string screen = t.screen(true);
    CHECK(screen.find(c.background) != std::string::npos);
    // The "Your" row: 1.00 on the palette's top colour, then masked cells on their own background.
    // The grid's "Your" row: the line that holds "Your" and " 1.00".
    std::istringstream lines(screen);
    std::string line, candidate;
    while (std::getline(lines, candidate))
      if (candidate.find("Your") != std::string::npos && candidate.find(" 1.00") != std::string::npos) line = candidate;
    INFO(line);
    REQUIRE_FALSE(line.empty());
    const std::size_t one = line.find(" 1.00");
    REQUIRE(one != std::string::npos);
    CHECK(line.rfind(c.top, one) != std::string::npos);
    CHECK(line.find(c.masked, one) != std::string::npos);
    t.keys("q");
    REQUIRE(t.wait_for("attn-exited-0"));
  }
  // No colour (NO_COLOR): monochrome, the highlights in reverse video, cells without colour.
  const attn_test::Tmux mono(100, 50, quote(ATTN_EXE) + " present causal", "NO_COLOR=1");
  REQUIRE(mono.ok());
  REQUIRE(mono.wait_for("Lesson 1 of 1"));
  mono.keys("g 1 1 Enter");
  REQUIRE(mono.wait_for("causal_attn_weights"));
  const std::string screen = mono.screen(true);
  CHECK(screen.find("48;5;") == std::string::npos);
  CHECK(screen.find("38;5;") == std::string::npos);
  CHECK(screen.find("\x1b[7m") != std::string::npos);  // the status line, and the step id
  mono.keys("Escape");
  REQUIRE(mono.wait_for("attn-exited-0"));
  // TERM=dumb cannot place the cursor: one line that says so and where to go instead, exit 2, a clean terminal.
  const attn_test::Tmux dumb(200, 10, quote(ATTN_EXE) + " present", "TERM=dumb");
  REQUIRE(dumb.ok());
  REQUIRE(dumb.wait_for("attn-exited-2"));
  CHECK(dumb.screen().find("attn: attn present needs a terminal that can place the cursor, which TERM='dumb' cannot; "
                           "try attn tour --pause") != std::string::npos);
  CHECK(dumb.wait_for("tty: echo icanon"));
}

TEST_CASE("one form of a token: the header and explanations and heatmap labels and html and svg and slides agree",
          "[present][hostile]") {
  // An apostrophe, leading spaces, and an emoji GPT-2 splits into three byte tokens.
  const std::string sentence = "I can't believe it's not butter \xf0\x9f\xa7\x88!";
  const std::string box = "\xe2\x90\xa3", dots = "\xe2\x80\xa6";
  // What Python's repr shows (the space marked): the emoji's pieces as decode_single_token_bytes' bytes.
  const std::vector<std::string> forms{"'I'", "'" + box + "can'", "\"'t\"", "'" + box + "believe'", "'" + box + "it'",
                                       "\"'s\"", "'" + box + "not'", "'" + box + "butter'", "b'" + box + "\\xf0\\x9f'",
                                       "b'\\xa7'", "b'\\x88'", "'!'"};
  std::string listed;
  for (const auto& f : forms) listed += (listed.empty() ? "" : " ") + f;
  // A \x escape is never cut: no \x without its two hex digits, anywhere.
  const std::regex cut_escape(R"(\\x(?![0-9a-f]{2}))");

  // The text view: the header's token list, the query's label and a title and an explanation filled with
  // the token, the heatmap's labels (cut to their columns, with an ellipsis).
  const attn_test::Run text = attn_test::run({"simple", "--text", sentence, "--color", "never"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("\ntokens: " + listed + "\n") != std::string::npos);
  CHECK(text.out.find("\nquery: token 1 '" + box + "can', x^(2) (--query)\n") != std::string::npos);
  CHECK(text.out.find("-- Attention scores of '" + box + "can'\n") != std::string::npos);
  CHECK(text.out.find("These are the attention weights of '" + box + "can'.") != std::string::npos);
  const attn_test::Run map = attn_test::run({"all-tokens", "--text", sentence, "--heatmap", "always", "--color", "never"});
  REQUIRE(map.status == 0);
  CHECK(map.out.find("\n      '" + box + "can'   0.00   0.63") != std::string::npos);       // a row label, whole
  CHECK(map.out.find("\n    b'" + box + "\\xf0" + dots + "   0.00") != std::string::npos);   // cut between escapes
  CHECK(map.out.find("\n     b'\\xa7'   0.00") != std::string::npos);
  // The keys, whole: on two lines, every other key on each, so that each may take two cells.
  CHECK(map.out.find("\n                'I'          \"'t\"         '" + box + "it'        '" + box + "not'  b'" + box +
                     "\\xf0\\x9f'       b'\\x88'\n                    '" + box + "can'    '" + box + "believe'          \"'s\"     '" +
                     box + "butter'       b'\\xa7'           '!'\n") != std::string::npos);
  CHECK(map.out.find("the row of token 1 '" + box + "can', x^(2)") != std::string::npos);
  CHECK_FALSE(std::regex_search(map.out, cut_escape));
  CHECK_FALSE(std::regex_search(text.out, cut_escape));
  // The explanation of the tokenizer's step: each token with its id, the same form (from the JSON, unwrapped).
  const attn_test::Run as_json = attn_test::run({"simple", "--text", sentence, "--json", "--step", "token_ids"});
  REQUIRE(as_json.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(as_json.out);
  const std::string explained = doc.at("steps").at(0).at("explanation");
  CHECK(explained.find("'I' 40, '" + box + "can' 460, \"'t\" 470,") != std::string::npos);
  CHECK(explained.find("b'" + box + "\\xf0\\x9f' 12520, b'\\xa7' 100, b'\\x88' 230, '!' 0.") != std::string::npos);
  // JSON is data: each token's exact string, the split bytes as backslashreplace writes them.
  CHECK(doc.at("inputs").at("tokens") ==
        nlohmann::json({"I", " can", "'t", " believe", " it", "'s", " not", " butter", " \\xf0\\x9f", "\\xa7", "\\x88", "!"}));

  // html and svg: the same forms, escaped by the markup; the svg's cells say which tokens they relate.
  std::vector<std::string> escaped;
  for (const auto& f : forms) {
    std::string e;
    for (const char c : f) e += c == '\'' ? "&#39;" : c == '"' ? "&quot;" : std::string(1, c);
    escaped.push_back(e);
  }
  const attn_test::Run html = attn_test::run({"all-tokens", "--text", sentence, "--format", "html"});
  REQUIRE(html.status == 0);
  std::string html_tokens;
  for (const auto& e : escaped) html_tokens += (html_tokens.empty() ? "" : " ") + ("<code class=\"tok\">" + e + "</code>");
  CHECK(html.out.find("<li>tokens: " + html_tokens + "</li>") != std::string::npos);
  CHECK(html.out.find("Adding up the row of token 1 " + escaped[1] + ", x^(2)") != std::string::npos);
  const attn_test::Run svg = attn_test::run({"all-tokens", "--text", sentence, "--format", "svg", "--step", "attn_weights"});
  REQUIRE(svg.status == 0);
  for (const auto& e : escaped) {
    INFO(e);
    CHECK(svg.out.find("rotate(-45)\">" + e + "</text>") != std::string::npos);  // a key's label
    CHECK(svg.out.find("central\">" + e + "</text>") != std::string::npos);      // a query's label
  }
  CHECK(svg.out.find("<title>query 8 " + escaped[8] + ", key 2 " + escaped[2] + ": ") != std::string::npos);
  CHECK_FALSE(std::regex_search(svg.out, cut_escape));

  // attn present: the lesson's slide lists the tokens, the heatmap labels its rows the same way.
  const Presented p = presented({"all-tokens", "--text", sentence});
  REQUIRE(p.status == 0);
  const Section& t = p.doc.sections.front();
  LayoutOptions o;
  o.width = 200;
  const SlideText first = lesson_slide(t, 1, 1, o);
  const std::string slide = text_of(first.text);
  for (const auto& f : forms) {
    INFO(f);
    CHECK(slide.find(" " + f) != std::string::npos);
  }
  const std::string figure = text_of(heatmap_lines(t.step("attn_weights"), t.inputs.tokens, o));
  CHECK(figure.find("\n    b'" + box + "\\xf0" + dots + "  0.00") != std::string::npos);
  CHECK(figure.find("\n      '" + box + "can'  0.00  0.63") != std::string::npos);
  CHECK_FALSE(std::regex_search(figure, cut_escape));
}
