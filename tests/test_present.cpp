// attn present: the slides' layout at every width (nothing cut inside a word or a number, heatmaps that
// fit), the deck's keys, the command line, and the real thing in a real terminal (tmux) at 60, 80 and
// 120 columns: keys, reveal, a resize, each theme's colours, and a clean terminal after quitting.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <thread>

#include "core/torch_random.hpp"
#include "inputs/embeddings.hpp"
#include "io/paths.hpp"
#include "lessons/registry.hpp"
#include "present/deck.hpp"
#include "render/layout.hpp"
#include "render/torch_print.hpp"
#include "core/terminal_text.hpp"
#include "support.hpp"
#include "tmux.hpp"

using namespace attn;
using attn_test::quote;
using attn_test::shell;

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
  for (const Lesson& lesson : lessons()) doc.traces.push_back(lesson.modes.front().run(in, lesson.modes.front().defaults, {}));
  return doc;
}

Document one(const std::string& name, const Inputs& in, LessonConfig cfg) {
  Document doc;
  doc.command = "present";
  for (const Lesson& lesson : lessons())
    if (lesson.info.name == name) doc.traces.push_back(lesson.modes.front().run(in, cfg, {}));
  return doc;
}

LessonConfig defaults_of(const std::string& name) {
  for (const Lesson& lesson : lessons())
    if (lesson.info.name == name) return lesson.modes.front().defaults;
  FAIL("no lesson " << name);
  return {};
}

std::string text_of(const std::vector<Line>& lines) {
  std::string out;
  for (const Line& l : lines) out += plain(l) + "\n";
  return out;
}

// The words of `s` (split at white space).
std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// True if every word of `source` is a whole word of `laid_out`, in the same order: nothing was cut. Only a
// word too wide for any line of `width` columns (a long line of code without spaces) may be split, into
// pieces that follow each other.
bool words_kept(const std::string& source, const std::string& laid_out, std::size_t width) {
  const std::vector<std::string> want = words(source), got = words(laid_out);
  std::size_t at = 0;
  for (const std::string& w : want) {
    if (display_width(w) > width - 8) {
      std::string joined;
      while (at < got.size() && joined.size() < w.size()) joined += got[at++];
      if (joined.find(w) == std::string::npos) {
        UNSCOPED_INFO("wide word not in consecutive pieces: '" << w << "'");
        return false;
      }
      continue;
    }
    while (at < got.size() && got[at] != w) ++at;
    if (at == got.size()) {
      UNSCOPED_INFO("word cut or missing: '" << w << "'");
      return false;
    }
    ++at;
  }
  return true;
}

}  // namespace

TEST_CASE("present: at 60, 80, 120 and 200 columns every line fits and no word or number is cut", "[present]") {
  const Document doc = tour(book_inputs());
  for (const std::size_t width : {60, 80, 120, 200}) {
    LayoutOptions o;
    o.width = width;
    for (const Trace& t : doc.traces) {
      for (std::size_t i = 0; i < t.steps.size(); ++i) {
        const Step& s = t.steps[i];
        INFO(width << " columns, attn " << t.info.name << " " << s.id);
        const SlideText slide = step_slide(t, i, o);
        for (const auto* part : {&slide.head, &slide.body})
          for (const Line& l : *part) CHECK(line_width(l) <= width);
        const std::string head = text_of(slide.head), body = text_of(slide.body);
        CHECK(words_kept(visible(s.explanation), head, width));
        CHECK(words_kept(s.code, head, width));
        if (!s.python_float && !s.python_int) CHECK(words_kept(torch_str(s.tensor, s.integer), body, width));
      }
      const SlideText intro = lesson_slide(t, 1, doc.traces.size(), o);
      for (const Line& l : intro.head) CHECK(line_width(l) <= width);
    }
  }
}

TEST_CASE("present: heatmaps with every number to 16 keys, colour-only cells to 64, a summary beyond", "[present]") {
  LayoutOptions o;
  o.width = 80;
  // The book's six tokens: every number in its cell (causal's masked weights).
  const Document book = one("causal", book_inputs(), defaults_of("causal"));
  const Trace& causal = book.traces.front();
  const Step& s = causal.step("causal_attn_weights");
  REQUIRE(s.causal);
  std::vector<Line> map = heatmap_lines(s, causal.inputs.tokens, o);
  std::string text = text_of(map);
  CHECK(text.find("journey") != std::string::npos);
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
    LessonConfig cfg = defaults_of("mha");
    cfg.d_out = 4;
    cfg.heads = 1;
    cfg.batch = 1;
    const Document mha = one("mha", random_inputs(n, 4), cfg);
    const Trace& t = mha.traces.front();
    const Step& w = t.step("attn_weights");
    for (const std::size_t width : {80, 120, 200}) {
      o.width = width;
      INFO(n << " tokens at " << width << " columns");
      map = heatmap_lines(w, t.inputs.tokens, o);
      text = text_of(map);
      for (const Line& l : map) CHECK(line_width(l) <= width);
      CHECK(text.find("keys: 0='x1'") != std::string::npos);
      CHECK(text.find("  " + std::to_string(n - 1) + " x" + std::to_string(n)) != std::string::npos);  // the last row's label
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
  LessonConfig cfg = defaults_of("mha");
  cfg.d_out = 4;
  cfg.heads = 1;
  cfg.batch = 1;
  const Document big = one("mha", random_inputs(80, 4), cfg);
  const Step& w = big.traces.front().step("attn_weights");
  o.width = 120;
  text = text_of(heatmap_lines(w, big.traces.front().inputs.tokens, o));
  CHECK(text.find("80 keys do not fit in 120 columns; each query's strongest keys:") != std::string::npos);
  CHECK(text.find("  0 'x1' -> 0 'x1' 1.00") != std::string::npos);  // the first query sees only itself
}

TEST_CASE("present: --scale row puts each row's largest weight at the top of the palette, fixed and matrix only the 1.0", "[present]") {
  const Document book = one("causal", book_inputs(), defaults_of("causal"));
  const Trace& t = book.traces.front();
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
    return doc.traces[s.lesson].info.name + (s.step ? "/" + doc.traces[s.lesson].steps[*s.step].id : "/intro");
  };
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Next);
  CHECK(where() == "simple/inputs");
  deck.press(Deck::Key::Prev);
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Prev);  // nothing before the first slide
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::GoTo);
  deck.press(Deck::Key::Digit, '3');
  CHECK(deck.status(200).find("go to step: 3_") != std::string::npos);
  deck.press(Deck::Key::Enter);
  CHECK(where() == "simple/" + doc.traces[0].steps[2].id);
  CHECK(deck.status(200).find("step 3/") != std::string::npos);
  deck.press(Deck::Key::NextLesson);
  CHECK(where() == "all-tokens/intro");
  deck.press(Deck::Key::Next);
  deck.press(Deck::Key::PrevLesson);  // inside a lesson: back to its start
  CHECK(where() == "all-tokens/intro");
  deck.press(Deck::Key::PrevLesson);  // at its start: the lesson before
  CHECK(where() == "simple/intro");
  deck.press(Deck::Key::Last);
  CHECK(where() == doc.traces.back().info.name + "/" + doc.traces.back().steps.back().id);
  deck.press(Deck::Key::Next);  // nothing after the last
  CHECK(where() == doc.traces.back().info.name + "/" + doc.traces.back().steps.back().id);
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
  r = attn_test::run({"present", "lst"});  // near no lesson, though near attn list
  CHECK(r.err.find("attn: attn present: no lesson 'lst' (attn list names them)") == 0);
  r = attn_test::run({"present", "--input", "-"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn present reads its keys from standard input, which --input - reads the embeddings from") !=
        std::string::npos);
  r = attn_test::run({"present", "--json"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn present draws on the terminal and does not take --json") != std::string::npos);
  r = attn_test::run({"present", "--d-out", "4"});
  CHECK(r.status == 2);
  CHECK(r.err.find("attn present runs each lesson with the book's values and does not take --d-out") != std::string::npos);
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
  CHECK(t.screen().find("  journey  0.20") != std::string::npos);
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
    CHECK(t.wait_for("attn: attn present would need an estimated"));
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
