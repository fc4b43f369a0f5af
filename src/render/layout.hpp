#pragma once
// A step laid out for a screen of a given width, as lines of spans that say what each piece of text is
// (a title, code, a heatmap cell and its place on the palette), never how it looks. Two renderers draw
// them: the presenter (present/presenter.cpp, ncurses, themes) and the text view on a terminal of known
// width (render/text.cpp, ANSI). Both follow the same rules:
// - text is wrapped between words, preformatted lines (code, PyTorch's tensor rows) at spaces only, so no
//   word and no number is ever cut; only a word wider than the whole screen is split;
// - a weight matrix is drawn with every number while it fits (at most 16 keys); from 17 to 64 keys, or
//   when the numbers do not fit, as colour-only cells with abbreviated labels and a legend; beyond that,
//   or where even those do not fit, as a summary (each query's strongest keys). With `numbers` on, every
//   number is listed, row by row, whatever the size.
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "render/heatmap.hpp"
#include "render/style.hpp"
#include "document/document.hpp"

namespace attn {

enum class Role : unsigned char {
  Text,         // plain text
  Heading,      // a lesson's or a step's title line
  StepId,       // the book's variable name
  Code,         // the book's PyTorch code
  Tensor,       // a tensor as PyTorch prints it, the shape line
  Label,        // a heatmap's token labels
  Legend,       // a heatmap's caption and legend
  Cell,         // a heatmap cell: `shade` is its place on the palette, 0 to 1
  Masked,       // a masked (future) cell
  Off,          // a cell off the scale (nan, inf): shown, not coloured
  Selected,     // the caption of the head selected in a grid of heads (LayoutOptions::selected): reverse video
};

struct Span {
  std::string text;
  Role role = Role::Text;
  double shade = 0.0;  // Role::Cell only
  bool diverging = false;  // Role::Cell: on the diverging palette (a signed matrix centred on 0)
};
using Line = std::vector<Span>;

struct LayoutOptions {
  std::size_t width = 80;  // columns
  bool numbers = false;    // list every number of a weight matrix, whatever its size
  HeatScale scale = HeatScale::Fixed;  // where a weight matrix's cells sit on the palette (--scale)
  bool color = true;       // cells are coloured (else shaded with block characters)
  bool explain = true;     // a slide shows its step's explanation and code (--no-explain: not)
  std::string numbers_hint;  // under a heatmap drawn without its numbers, how to see them ("" for none)
  // A step of several heads: draw only this one (counted from 0), at the whole width with every number (the
  // presenter's + and - keys); none: every head, side by side where two or more fit across.
  std::optional<std::size_t> head;
  // A step of several heads drawn together: the head selected among them (the presenter's Tab), its caption
  // marked and a line under the grid naming it; none: no head selected.
  std::optional<std::size_t> selected;
  Words words;  // the document's
};

// The largest number of keys drawn cell by cell (colour-only past kHeatmapMaxTokens).
inline constexpr std::size_t kCompactMaxTokens = 64;

// `text` wrapped between words to `width` columns, every line starting with `indent`.
std::vector<Line> wrap_text(const std::string& text, std::size_t width, const std::string& indent, Role role);
// One preformatted line (code, a tensor row) broken at spaces only when wider than `width`; continuation
// lines are indented by `hang` more columns than the line's own indentation.
std::vector<Line> wrap_preformatted(const std::string& line, std::size_t width, Role role, std::size_t hang = 4);

// The heatmaps of a weight-matrix step (render/heatmap.hpp's heat_maps says which shapes), fitted to
// options.width: a step's heads side by side where two or more fit across (wrapping into rows of heads, each
// head's map at its column's width), else one under another; options.head: that head alone.
std::vector<Line> heatmap_lines(const Step& step, const std::vector<std::string>& tokens, const LayoutOptions& options);
// How many of the step's heads heatmap_lines draws side by side at options.width (1: one under another); an
// overview step that fits: at least 2, as it is never drawn as a stack of maps.
std::size_t heads_across(const Step& step, const std::vector<std::string>& tokens, const LayoutOptions& options);

// A step as a slide, in parts the presenter orders (present/deck.cpp): the title and the text (explanation,
// code) are what --reveal shows first; the figure (the heatmaps) and the tensor (shape, PyTorch's print) are
// the result, the figure drawn first under the title. `index` counts from 0 among trace.steps.
struct SlideText {
  std::vector<Line> title;   // "[k/n] id -- title"; a lesson's heading
  std::vector<Line> text;    // the explanation and the code; a lesson's summary, inputs, notes and modules
  std::vector<Line> figure;  // the heatmaps, where the step has them
  std::vector<Line> tensor;  // the shape line and the tensor as PyTorch prints it
};
SlideText step_slide(const Section& trace, std::size_t index, const LayoutOptions& options);
// A lesson's first slide: its title, inputs, tokens, notes and modules (lesson k of n). It is the lesson's
// step 0, before the steps [1/n] to [n/n], and says which of them follow.
SlideText lesson_slide(const Section& trace, std::size_t k, std::size_t n, const LayoutOptions& options);

// The book's code as a Python prompt echoes it: "  >>> " before the first line, "  ... " before the others.
std::vector<std::string> prompt_lines(const std::string& code);
// What a step's shape line says ("  shape: torch.Size([6, 3])", or that it is a Python float or int), and its
// value as PyTorch prints it. Shared by the text view and the slides.
std::string shape_text(const Step& step, const Words& words = {});
std::string value_text(const Step& step);

// A lesson's notes as lines, with its note table (trace.hpp: NoteTable) laid out among them: two spaces, then
// each column in its width (the first left-aligned, the others right-aligned), two spaces apart.
std::vector<std::string> note_lines(const Section& trace);
// A lesson's header lines in the document's words: "inputs: 6 tokens x 3 dims from SOURCE", "module: mha =
// ..., 24 parameters", and the tour's and the presenter's "Lesson 1 of 10: attn simple -- 3.3.1 TITLE".
std::string inputs_line(const Section& trace, const Words& words, const std::string& source);
std::string module_line(const ModuleInfo& m, const Words& words);
std::string lesson_banner(const Section& trace, std::size_t k, std::size_t n, const Words& words);

// A line's text without roles, and its width in columns.
std::string plain(const Line& line);
std::size_t line_width(const Line& line);

}  // namespace attn
