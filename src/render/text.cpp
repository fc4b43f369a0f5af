#include "render/text.hpp"

#include <algorithm>
#include <cctype>

#include <sstream>

#include "core/strings.hpp"
#include "core/limits.hpp"
#include "render/figure.hpp"
#include "core/terminal_text.hpp"
#include "render/heatmap.hpp"
#include "render/layout.hpp"
#include "text/words.hpp"
#include "render/torch_print.hpp"

namespace attn {

namespace {

constexpr std::size_t kWidth = 80;

// Everything the text view prints goes through visible() (core/terminal_text.hpp): titles, explanations,
// notes and code hold token text and file names, which come from outside.

// `text` wrapped to kWidth columns (fewer on a narrower terminal), each line starting with `indent`.
std::string wrap(const std::string& text, const std::string& indent, std::size_t width) {
  std::string out;
  for (const auto& line : wrap_words(visible(text), std::max<std::size_t>(width, indent.size() + 1) - indent.size()))
    out += indent + line + "\n";
  return out;
}

// On a terminal of known width: each line of `block` that is wider broken at spaces (render/layout.hpp),
// so the terminal never wraps it inside a number or a word. Elsewhere `block` as it is.
std::string fit(const std::string& block, const TextStyle& style, Role role) {
  if (style.width == 0) return block;
  std::istringstream lines(block);
  std::string line, out;
  while (std::getline(lines, line))
    for (const Line& l : wrap_preformatted(line, style.width, role)) out += plain(l) + "\n";
  return out;
}

// The style for text that follows `used` columns already on its line (its first line only has less room;
// fit() wraps at the same width throughout, which is what the continuation lines get).
TextStyle narrowed_by(TextStyle style, std::size_t used) {
  if (style.width != 0) style.width = style.width > used + 20 ? style.width - used : 20;
  return style;
}

// A laid-out line in ANSI: heatmap cells on their colour.
std::string ansi(const Line& line, const TextStyle& style) {
  const Paint paint{style.color};
  std::string out;
  for (const Span& s : line) {
    switch (s.role) {
      case Role::Cell: out += ansi_cell(s.text, s.shade, style, s.diverging); break;
      case Role::StepId:
      case Role::Heading: out += paint.bold(s.text); break;
      default: out += s.text;
    }
  }
  return out;
}

// The book's code as a Python prompt would echo it (render/layout.hpp), as a block of lines.
std::string prompt(const std::string& code) {
  std::string out;
  for (const auto& line : prompt_lines(code)) out += line + "\n";
  return out;
}

std::string token_list(const std::vector<std::string>& tokens, const Words& words) {
  constexpr std::size_t kShown = 12;
  // Each token as Python's repr shows it, its spaces as ␣ (token_repr), so the list shows where each ends.
  std::string out;
  for (std::size_t i = 0; i < tokens.size() && i < kShown; ++i) out += (i ? " " : "") + token_repr(tokens[i]);
  if (tokens.size() > kShown)
    out += " " + words.screen("more_tokens", {{"n", std::to_string(tokens.size() - kShown)}});
  return out;
}

}  // namespace

namespace {

// One lesson: its header (no pause after it), then one piece per step shown.
void lesson_chunks(const Section& trace, const Document& doc, const TextStyle& style, std::vector<Chunk>& chunks) {
  const Paint paint{style.color};
  std::string head;
  if (!style.quiet) {
    const std::string name = "attn " + trace.info.name;
    head += paint.bold(name) + fit(" -- " + trace.info.section + " " + trace.info.title + "\n",
                                   narrowed_by(style, name.size()), Role::Text);
    std::string about;  // wrapped at spaces on a narrow terminal
    if (trace.show_inputs) {
      about += inputs_line(trace, style.words, visible(trace.inputs.shown_source())) + "\n";
      about += style.words.screen("tokens") + " " + token_list(trace.inputs.tokens, style.words) + "\n";
    }
    for (const auto& note : note_lines(trace)) about += visible(note) + "\n";
    for (const auto& m : trace.modules)
      about += module_line(m, style.words) + "\n";
    head += fit(about, style, Role::Text);
  }
  chunks.push_back({head, false});

  // Steps keep their number in the lesson ("[3/10]") when --step shows only some.
  const std::size_t total = trace.steps.size();
  std::size_t shown = 0;
  for (std::size_t i = 0; i < total; ++i) {
    const Step& s = trace.steps[i];
    if (!doc.shows(s)) continue;
    std::string out;
    if (style.quiet) {
      out += (shown ? "\n" : "") + s.id + "\n";
    } else {
      const std::string number = "[" + std::to_string(i + 1) + "/" + std::to_string(total) + "]";
      // Nothing essential is dim, and no colour is needed to read it: on a white background dim code and a
      // cyan id all but vanish. The id is bold; code is marked by its >>> prompt.
      out += "\n" + number + " " + paint.bold(s.id);
      if (style.width != 0 && display_width(number + " " + s.id + " -- " + visible(s.title)) > style.width) {
        out += "\n" + wrap(s.title, "  ", style.width);  // a narrow terminal: the title on lines of its own
      } else {
        out += " -- " + visible(s.title) + "\n";
      }
      if (style.explain) {
        out += wrap(s.explanation, "  ", style.width != 0 ? std::min(style.width, kWidth) : kWidth);
        out += fit(prompt(s.code), style, Role::Code);
      }
      out += shape_text(s, style.words) + "\n";
    }
    out += fit(value_text(s) + "\n", style, Role::Tensor);
    if (style.heatmaps && s.heatmap && !style.quiet) {
      // Every number in its cell where that fits: the same heatmap as in a pipe.
      const std::size_t keys = s.tensor.dimension() >= 2 ? s.tensor.shape().back() : 0;
      LayoutOptions layout;
      layout.words = style.words;
      layout.width = style.width;
      layout.color = style.color;
      layout.scale = style.scale;
      if (style.width == 0 || (keys <= kHeatmapMaxTokens && heatmap_width(keys) <= style.width &&
                               heads_across(s, trace.inputs.tokens, layout) < 2)) {
        out += heatmaps(s, trace.inputs.tokens, style);
      } else {  // fitted to the terminal: heads side by side where they fit, every number up to 16 keys that fit,
                // colour-only cells to 64, a summary beyond
        for (const Line& l : heatmap_lines(s, trace.inputs.tokens, layout))
          out += ansi(l, style) + "\n";
      }
    }
    chunks.push_back({out, true});
    ++shown;
  }
}

class TextRenderer : public Renderer {
 public:
  explicit TextRenderer(const RenderOptions& options) : style_(options.style) {}

  // Each shown tensor printed (printed_tensor_bytes, and its title and explanation), and each
  // heatmap cell with its colour codes (at most 48 bytes) up to 16 keys in a pipe and 64 on a terminal
  // (past them, a one-line summary);
  // built up as strings, then joined: twice that.
  std::size_t working_bytes(const Document& doc) const override {
    std::size_t bytes = 64 << 10;
    for (const Section& t : doc.sections)
      for (const Step& s : t.steps) {
        if (!doc.shows(s)) continue;
        bytes = saturating_sum(bytes, printed_tensor_bytes(s) + 4096);
        const std::size_t most_keys = style_.width == 0 ? kHeatmapMaxTokens : kFigureMaxKeys;  // as lesson_chunks draws
        if (style_.heatmaps && s.heatmap && !s.shape.empty() && s.shape.back() <= most_keys)
          bytes = saturating_sum(bytes, saturating_product({s.numel(), 48}));
      }
    return saturating_product({bytes, 2});
  }

  std::vector<Chunk> render(const Document& doc) const override {
    TextStyle style_ = this->style_;  // the document's words
    style_.words = doc.words;
    std::vector<Chunk> chunks;
    if (!doc.is_tour()) {
      for (const Section& t : doc.sections) lesson_chunks(t, doc, style_, chunks);
      return chunks;
    }
    // The tour: a banner before each lesson.
    const Paint paint{style_.color};
    const std::string rule(style_.width != 0 ? std::min<std::size_t>(78, style_.width) : 78, '=');
    for (std::size_t k = 0; k < doc.sections.size(); ++k) {
      const Section& t = doc.sections[k];
      std::string banner = fit(lesson_banner(t, k + 1, doc.sections.size(), style_.words) + "\n", style_, Role::Text);
      banner.pop_back();  // each line bold on its own
      std::string bold;
      std::istringstream lines(banner);
      for (std::string line; std::getline(lines, line);) bold += paint.bold(line) + "\n";
      chunks.push_back({(k ? "\n" : "") + paint.bold(rule) + "\n" + bold + paint.bold(rule) + "\n", false});
      lesson_chunks(t, doc, style_, chunks);
    }
    return chunks;
  }

 private:
  TextStyle style_;
};

}  // namespace

std::unique_ptr<Renderer> make_text_renderer(const RenderOptions& options) {
  return std::make_unique<TextRenderer>(options);
}

std::string render_text(const Section& trace, const TextStyle& style) {
  Document doc{trace.info.name, {trace}, {}, {}};
  return join(TextRenderer({style}).render(doc));
}

}  // namespace attn
