// --format html: one self-contained page for a lesson or the tour (docs/html.md). Every step as the text
// view shows it (title, explanation, the book's code highlighted, the shape, the tensor in PyTorch's print
// format, the same characters), weight matrices as SVG heatmaps (render/figure.hpp: a grid of heads, a
// lines view, an overview step's small maps), a table of contents, a scrolling document or slides (one step
// per screen, the figure first and sized to the window, #slide=ID in the address), light and dark themes
// and a print stylesheet for handouts. Nothing is fetched: the style and the script (data/web/page.css and page.js,
// render/web_assets.hpp) are written inline, and the page's Content-Security-Policy forbids every request. Every text from outside goes through markup().
#include <algorithm>
#include <cctype>
#include <cstring>
#include <tuple>

#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "render/figure.hpp"
#include "render/heatmap.hpp"
#include "render/highlight.hpp"
#include "render/layout.hpp"
#include "render/live_page.hpp"
#include "render/renderer.hpp"
#include "render/web_assets.hpp"
#include "text/words.hpp"

namespace attn {

namespace {

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a);
}

// Lesson names and step ids are attn's own (the book's variable names), escaped all the same.
std::string step_anchor(const Section& t, const Step& s) { return html_escape("step-" + t.info.name + "-" + s.id); }

// Where the inputs came from, without the folders of a local path: the page is handed out, and
// "/home/teacher/data/journey.json" says nothing a student needs ("journey.json" does).
std::string short_source(const std::string& source) {
  std::string out;
  std::size_t from = 0;
  while (from <= source.size()) {
    std::size_t end = source.find(' ', from);
    if (end == std::string::npos) end = source.size();
    std::string word = source.substr(from, end - from);
    std::string tail;
    while (!word.empty() && (word.back() == ':' || word.back() == ',' || word.back() == '/')) {
      if (word.back() != '/') tail.insert(tail.begin(), word.back());
      word.pop_back();
    }
    const std::size_t slash = word.rfind('/');
    if (slash != std::string::npos && word.find('(') == std::string::npos) word = word.substr(slash + 1);
    out += (from ? " " : "") + word + tail;
    from = end + 1;
  }
  return out;
}

// A figure's <svg> marked for the slides' fitting (the page's script sizes every svg.fit to the window).
std::string fitted(std::string svg, const std::string& more = "") {
  const std::string cls = "class=\"figure\"";
  const std::size_t at = svg.find(cls);
  if (at != std::string::npos) svg.replace(at, cls.size(), "class=\"figure fit" + more + "\"");
  return svg;
}

// `text` (the page's words, with "{lines}" and "{tensor}" left where the two buttons' names go) as markup,
// the names in <strong>.
std::string strong_words(const std::string& text, const std::string& lines, const std::string& tensor) {
  std::string out = markup(text);
  for (const auto& [mark, name] : {std::pair<std::string, std::string>{"{lines}", lines}, {"{tensor}", tensor}}) {
    const auto at = out.find(mark);
    if (at != std::string::npos) out.replace(at, mark.size(), "<strong>" + markup(name) + "</strong>");
  }
  return out;
}

// "light_theme" -> "light-theme": a data attribute's name.
std::string dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::string token_list(const std::vector<std::string>& tokens, const Words& words) {
  constexpr std::size_t kShown = 64;
  std::string out;
  for (std::size_t i = 0; i < tokens.size() && i < kShown; ++i) out += (i ? " " : "") + ("<code class=\"tok\">" + markup(token_repr(tokens[i])) + "</code>");
  if (tokens.size() > kShown)
    out += " " + markup(words.screen("more_tokens", {{"n", std::to_string(tokens.size() - kShown)}}));
  return out;
}

class HtmlRenderer : public Renderer {
 public:
  explicit HtmlRenderer(const RenderOptions& options) : style_(options.style) {}

  std::size_t working_bytes(const Document& doc) const override {
    // The page: each printed tensor (summarised by PyTorch's format past 1,000 numbers), and about 900
    // bytes per heatmap cell drawn (600 for the cell with its number, 160 for its line in the lines view),
    // and an overview step's cells again in the model view, drawn with the first of them (its small map, its
    // map drawn in full and its lines view: 600 a cell more; measured on 512 layers of 2 heads, the page is
    // 1,270 bytes a cell of both).
    std::size_t bytes = 64 << 10;
    for (const Section& t : doc.sections)
      for (const Step& s : t.steps) {
        if (!doc.shows(s)) continue;
        bytes = saturating_sum(bytes, printed_tensor_bytes(s) + 1024);
        if (s.heatmap && s.shape.size() >= 2 && s.shape.back() <= kFigureMaxKeys) {
          const std::size_t heads = s.shape.size() == 4 ? s.shape[1] : s.overview && s.shape.size() == 3 ? s.shape[0] : 1;
          bytes = saturating_sum(bytes, saturating_product({heads, s.shape.back(), s.shape[s.shape.size() - 2],
                                                            s.overview ? std::size_t{900 + 600} : std::size_t{900}}));
        }
      }
    // Built up as one string: while it grows, its old buffer and the new one twice its size (three times
    // the page at most); then moved out whole.
    return saturating_product({bytes, 3});
  }

  std::vector<Chunk> render(const Document& doc) const override {
    const auto say = [&](const char* name, const TextValues& values = {}) { return doc.words.page(name, values); };
    std::string title = doc.is_tour() ? say("tour_title")
                                      : doc.sections.empty() ? "attn"
                                                           : "attn " + doc.sections.front().info.name + " \xe2\x80\x94 " +
                                                                 doc.sections.front().info.section + " " +
                                                                 doc.sections.front().info.title;
    std::string page;
    page += "<!DOCTYPE html>\n<html lang=\"" + std::string(doc.words.english() ? "en" : doc.words.language()) +
            "\">\n<head>\n<meta charset=\"utf-8\">\n";
    page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    // Nothing may be fetched: no network, no file, no font. The style and the script are the page's own.
    page += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + kPagePolicy + "\">\n";
    page += "<meta name=\"generator\" content=\"attn\">\n";
    page += "<title>" + markup(title) + "</title>\n<style>\n" + web_asset("page.css") + "</style>\n</head>\n<body" +
            (doc.is_tour() ? " data-tour=\"1\"" : "") + ">\n";
    page += "<header class=\"bar\"><span class=\"doc\">" + markup(title) +
            "</span><span id=\"counter\" aria-live=\"polite\"></span>"
            "<button id=\"mode\" type=\"button\" aria-pressed=\"false\" title=\"" + markup(say("slides_title")) + "\">" +
            markup(say("slides")) + "</button><button id=\"theme\" type=\"button\">" + markup(say("dark_theme")) +
            "</button></header>\n<main>\n";
    // The words the script writes (buttons, the counter, the readout), in the page's language.
    page += "<div id=\"attn-words\" hidden";
    for (const char* name : {"slides", "document", "light_theme", "dark_theme", "lines_button", "heatmap_button"})
      page += std::string(" data-") + dashed(name) + "=\"" + html_escape(say(name)) + "\"";
    page += " data-counter=\"" + html_escape(say("counter", {{"lesson", "{lesson}"}, {"k", "{k}"}, {"n", "{n}"}})) + "\"";
    page += " data-lines-only=\"" + html_escape(say("lines_only", {{"token", "{token}"}})) + "\"></div>\n";
    page += contents(doc);
    std::size_t figure = 0;
    for (std::size_t k = 0; k < doc.sections.size(); ++k) page += lesson(doc, k, figure);
    page += "</main>\n<script>\n" + web_asset("page.js") + "</script>\n</body>\n</html>\n";
    return one_chunk(std::move(page));
  }

 private:
  std::string contents(const Document& doc) const {
    const std::string title = markup(doc.words.page("contents"));
    std::string out = "<nav class=\"toc\" aria-label=\"" + title + "\">\n<h2>" + title + "</h2>\n<ol>\n";
    for (const Section& t : doc.sections) {
      out += "<li><a href=\"#lesson-" + t.info.name + "\">attn " + t.info.name + "</a> \xe2\x80\x94 " +
             markup(t.info.section + " " + t.info.title) + "\n";
      std::string steps;
      for (const Step& s : t.steps)
        if (doc.shows(s))
          steps += "<li><a href=\"#" + step_anchor(t, s) + "\"><code>" + html_escape(s.id) + "</code></a> " + markup(s.title) + "</li>\n";
      out += (steps.empty() ? "" : "<ol>\n" + steps + "</ol>") + "</li>\n";
    }
    return out + "</ol>\n</nav>\n";
  }

  std::string lesson(const Document& doc, std::size_t k, std::size_t& figure) const {
    const Section& t = doc.sections[k];
    const auto say = [&](const char* name, const TextValues& values = {}) { return doc.words.page(name, values); };
    // The lesson's first slide is its step 0; its steps are numbered as [k/n] numbers them (docs/html.md).
    std::string out = "<section class=\"slide lesson\" id=\"lesson-" + t.info.name + "\" data-lesson=\"" + t.info.name +
                      "\" data-step=\"0\" data-k=\"0\" data-n=\"" + std::to_string(t.steps.size()) + "\">\n";
    out += "<h2>" + (doc.is_tour() ? markup(say("lesson_of", {{"k", std::to_string(k + 1)}, {"n", std::to_string(doc.sections.size())}}))
                                   : std::string()) +
           "<code>attn " + t.info.name + "</code> \xe2\x80\x94 " + markup(t.info.section + " " + t.info.title) + "</h2>\n";
    out += "<p class=\"where\">" + markup(t.info.summary + " (" + book_place(t.info, doc.words) + ")") + "</p>\n";
    std::string facts;
    if (t.show_inputs) {
      facts += "<li>" +
               markup(doc.words.screen("inputs", {{"n", std::to_string(t.inputs.num_tokens())}, {"d", std::to_string(t.inputs.d_in())},
                                     {"source", short_source(t.inputs.shown_source())}})) +
               "</li>\n<li>" + markup(doc.words.screen("tokens")) + " " + token_list(t.inputs.tokens, doc.words) + "</li>\n";
    }
    for (const auto& m : t.modules)
      facts += "<li>" + markup(say("module")) + " <code>" + markup(m.name + " = " + m.code) + "</code>, " +
               markup(say("parameters", {{"count", doc.words.number(m.num_params)}, {"p", std::to_string(m.num_params)}})) +
               "</li>\n";
    if (!facts.empty()) out += "<ul class=\"facts\">\n" + facts + "</ul>\n";
    // The notes as the text view prints them: some are tables aligned in columns (kv-cache --estimate).
    if (!t.notes.empty() || t.note_table) {
      out += "<pre class=\"notes\">";
      for (const auto& note : note_lines(t)) out += markup(note) + "\n";
      out += "</pre>\n";
    }
    bool figures = false;
    for (const Step& s : t.steps) figures = figures || (doc.shows(s) && s.heatmap && s.computed);
    // Said once, here, rather than under every figure.
    if (figures)
      out += "<p class=\"hint\">" +
             strong_words(say("hint", {{"lines", "{lines}"}, {"tensor", "{tensor}"}}), say("lines"), say("tensor")) + "</p>\n";
    out += "</section>\n";
    const std::size_t total = t.steps.size();
    for (std::size_t i = 0; i < total; ++i) {
      const Step& s = t.steps[i];
      if (!doc.shows(s)) continue;
      check_cancelled();  // attn serve's time limit and stop (core/cancel.hpp): each step, and each head below
      // Consecutive overview steps (attn heads: one per layer) make one model view, drawn with the first.
      std::vector<const Step*> run;
      if (is_overview(s) && (i == 0 || !is_overview(t.steps[i - 1]) || !doc.shows(t.steps[i - 1])))
        for (std::size_t j = i; j < total && is_overview(t.steps[j]) && doc.shows(t.steps[j]); ++j) run.push_back(&t.steps[j]);
      out += step(t, s, i, total, figure, run);
    }
    return out;
  }

  static bool is_overview(const Step& s) { return s.overview && s.heatmap && s.computed && s.tensor.dimension() == 3; }

  std::string step(const Section& t, const Step& s, std::size_t i, std::size_t total, std::size_t& figure,
                   const std::vector<const Step*>& model) const {
    const std::string anchor = step_anchor(t, s);
    const std::string drawn = s.heatmap && s.computed ? heatmaps(t, s, figure, model) : "";
    std::string out = "<section class=\"slide step" + std::string(drawn.find("<figure") != std::string::npos ? " has-figure" : "") +
                      "\" id=\"" + anchor + "\" data-lesson=\"" + t.info.name + "\" data-step=\"" + html_escape(s.id) +
                      "\" data-k=\"" + std::to_string(i + 1) + "\" data-n=\"" + std::to_string(total) + "\" aria-labelledby=\"" +
                      anchor + "-h\">\n";
    out += "<h3 id=\"" + anchor + "-h\"><span class=\"num\">[" + std::to_string(i + 1) + "/" + std::to_string(total) +
           "]</span> <code class=\"id\">" + html_escape(s.id) + "</code> <span class=\"title\">" + markup(s.title) + "</span></h3>\n";
    // The figure first: on a slide it fills the left of the screen, the words beside it, and the printed
    // tensor comes up with the Tensor button (key t); the document shows everything, in this order.
    out += "<div class=\"words\">\n";
    if (style_.explain && !style_.quiet) {
      out += "<p class=\"explanation\">" + markup(s.explanation) + "</p>\n";
      out += "<pre class=\"code\"><code>" + highlight_python(s.code) + "</code></pre>\n";
    }
    out += "<button type=\"button\" class=\"tensor\" aria-expanded=\"false\" aria-controls=\"" + anchor + "-t\">" +
           markup(t.words.page("tensor_button")) + "</button>\n</div>\n";
    out += drawn;
    out += "<div class=\"printed\" id=\"" + anchor + "-t\">\n<p class=\"shape\">" + markup(trim(shape_text(s, t.words))) + "</p>\n";
    out += "<pre class=\"tensor\">" + markup_lines(value_text(s)) + "</pre>\n</div>\n";
    return out + "</section>\n";
  }

  // A weight matrix's figure: its heatmaps (a grid of heads for a multi-head step or one layer's overview
  // step, each head named and enlarged on a click, one legend), its lines view, and the readout; the first
  // of consecutive overview steps: the model view (overview()).
  std::string heatmaps(const Section& t, const Step& s, std::size_t& figure, const std::vector<const Step*>& model) const {
    const Words& words = t.words;
    const auto say = [&](const char* name, const TextValues& values = {}) { return words.page(name, values); };
    const std::size_t keys = s.tensor.dimension() >= 2 ? s.tensor.shape().back() : 0;
    if (keys > kFigureMaxKeys)
      return "<p class=\"note\">" +
             markup(say("too_many_keys", {{"keys", std::to_string(keys)}, {"most", std::to_string(kFigureMaxKeys)}})) +
             "</p>\n";
    if (is_overview(s) && model.size() >= 2) return overview(t, figure, model);  // one layer: a grid of its heads
    const std::vector<HeatMap> maps = heat_maps(s, t.inputs.tokens, words);
    if (maps.empty()) return "";
    const std::string uid = "f" + std::to_string(++figure);
    // The figure's buttons sit before it (beside it on a slide); each names its figure. The scale buttons:
    // weights on the fixed 0..1 scale (the default: what a probability is), the matrix's own min..max, or each
    // row's own (softmax rows can differ much: a causal row 0 is all on one key), so small differences are
    // told apart -- each stated in the legend. Then the lines view and, for several heads, its head toggles.
    std::string out = "<div class=\"tools\" data-figure=\"" + uid + "\"><span class=\"scales\" role=\"group\" aria-label=\"" +
                      markup(say("colour_scale")) + "\">";
    for (const auto& [name, label, scale] : {std::tuple<const char*, const char*, HeatScale>{"fixed", "scale_fixed", HeatScale::Fixed},
                                             {"matrix", "scale_matrix", HeatScale::Matrix},
                                             {"row", "scale_row", HeatScale::Row}})
      out += std::string("<button type=\"button\" class=\"scale\" data-scale=\"") + name + "\" aria-pressed=\"" +
             (scale == style_.scale ? "true" : "false") + "\">" + markup(say(label)) + "</button>";
    out += "</span>";
    FigureOptions line_options;
    line_options.uid = uid + "l";
    const Figure lines = svg_lines(maps, line_options);
    if (!lines.svg.empty()) {
      out += " <button type=\"button\" class=\"view\" aria-pressed=\"false\">" + markup(say("lines_button")) + "</button>";
      if (maps.size() > 1)
        for (std::size_t h = 0; h < maps.size(); ++h)
          out += " <button type=\"button\" class=\"head-toggle\" hidden aria-pressed=\"true\" data-head=\"" + std::to_string(h) +
                 "\" style=\"border-color:" + head_colour(h) + "\">" + markup(words.screen("head", {{"h", std::to_string(h)}})) + "</button>";
    }
    const bool grid = maps.size() > 1;
    out += "</div>\n<figure class=\"heatmaps" + std::string(grid ? " grid" : "") + "\" id=\"" + uid + "\" data-heads=\"" +
           std::to_string(maps.size()) + "\">\n";
    // A grid of heads says once what they have in common, and the note most of them share; each head has its
    // name over it ("head 1") and its own note under it where it differs; one legend under them all.
    const CommonNote common = common_note(maps);
    if (grid)
      out += "<p class=\"common\">" +
             markup(maps.front().common + (common.note.empty() ? "" : " \xe2\x80\x94 " + common.said(maps.size(), words))) +
             "</p>\n";
    out += "<div class=\"heads" + std::string(grid ? "" : " one") + "\">\n";
    for (std::size_t h = 0; h < maps.size(); ++h) {
      check_cancelled();
      FigureOptions o;
      o.scale = style_.scale;
      o.scale_choices = true;
      o.in_grid = grid;
      o.uid = uid + "h" + std::to_string(h);
      const std::string svg = fitted(svg_heatmap(maps[h], o).svg);
      if (!grid) {
        out += "<div class=\"head\">" + svg + "</div>\n";
        continue;
      }
      out += "<div class=\"head\" tabindex=\"0\" role=\"button\" aria-expanded=\"false\" aria-label=\"" +
             markup(say("enlarge_head", {{"h", std::to_string(h)}})) + "\" data-head=\"" + std::to_string(h) +
             "\"><div class=\"name\">" + markup(maps[h].name) +
             // its words beside its name once it is opened large, whether they are its own or its layer's
             (maps[h].note.empty() ? "" : "<span class=\"said\">: " + markup(maps[h].note) + "</span>") + "</div>" + svg +
             own_note(maps[h], common) + "</div>\n";
    }
    out += "</div>\n";
    if (grid) {
      FigureOptions o;
      o.scale = style_.scale;
      o.scale_choices = true;
      o.uid = uid + "key";
      out += "<div class=\"legend-box\">" + svg_legend(maps, o).svg + "</div>\n";
    }
    if (!lines.svg.empty()) out += "<div class=\"lines\">" + fitted(lines.svg, " lines") + "</div>\n";
    return out + "<figcaption class=\"readout\" aria-live=\"polite\"></figcaption>\n</figure>\n";
  }

  // A map's note under it, where it is not the one most of its layer's heads share (said once for them).
  static std::string own_note(const HeatMap& m, const CommonNote& common) {
    return common.own(m) ? "<div class=\"note\">" + markup(m.note) + "</div>" : "";
  }

  // "layer 5" for a layer's overview step (attn heads: attn_weights_layer_5), from the number its id ends
  // with; the id itself where it ends with none.
  static std::string layer_name(const Step& s, const Words& words) {
    const std::size_t digits = s.id.find_last_not_of("0123456789") + 1;
    return digits < s.id.size() && digits > 0 && s.id[digits - 1] == '_' ? words.page("layer", {{"l", s.id.substr(digits)}})
                                                                           : s.id;
  }

  // Consecutive overview steps (attn heads: one per layer, (heads, rows, keys) each) as bertviz's model view:
  // a row per layer (its name, and the note most of its heads share), a column per head ("head h" over
  // it), each map small and colour-only, its own note under it where it differs, and one colour key. A
  // map's name, layer, note and tokens show on hover and focus; a click or Enter opens it large (drawn in
  // full, hidden until then: numbers to 16 keys, colour-only cells to 64) with its lines view (l).
  std::string overview(const Section& t, std::size_t& figure, const std::vector<const Step*>& layers) const {
    const Words& words = t.words;
    const std::string uid = "f" + std::to_string(++figure);
    std::size_t most = 0;
    std::string rows, key, names;
    for (const Step* layer : layers) {
      const std::vector<HeatMap> maps = heat_maps(*layer, t.inputs.tokens, words);  // every head, with its note
      most = std::max(most, maps.size());
      if (key.empty() && !maps.empty()) {  // one colour key under the model view, from its first map
        FigureOptions o;
        o.scale = style_.scale;
        o.uid = uid + "key";
        key = "<div class=\"key\">" + svg_scale_key(maps.front(), o).svg + "</div>\n";
      }
      const CommonNote common = common_note(maps);
      const std::string name = layer_name(*layer, words);
      rows += "<div class=\"layer\" data-step=\"" + html_escape(layer->id) + "\"><div class=\"layer-name\">" + markup(name) +
              (common.note.empty() ? "" : "<span class=\"note\">" + markup(common.said(maps.size(), words)) + "</span>") +
              "</div><div class=\"heads\">\n";
      for (std::size_t h = 0; h < maps.size(); ++h) {
        check_cancelled();
        const HeatMap& m = maps[h];
        std::string tokens;
        for (std::size_t j = 0; j < m.keys; ++j) tokens += (j ? " " : "") + m.labels[j];
        const std::string about = name + ", " + m.name + (m.note.empty() ? "" : ": " + m.note) + "; " +
                                  words.screen("tokens") + " " + tokens;
        FigureOptions o;
        o.scale = style_.scale;
        o.uid = uid + layer->id + "h" + std::to_string(h);
        rows += "<div class=\"head\" tabindex=\"0\" role=\"button\" aria-expanded=\"false\" aria-label=\"" +
                markup(about + words.page("enlarge")) + "\" data-about=\"" + markup(about) + "\" data-head=\"" +
                std::to_string(h) + "\">" + fitted(svg_small_map(m, o).svg, " small") + own_note(m, common);
        if (m.keys <= kFigureMaxKeys) {  // numbers to 16 keys, colour-only cells to 64, as every heatmap
          std::vector<HeatMap> opened{m};  // one copy, with its caption, for its heatmap and its lines
          opened[0].caption = name + ", " + m.name + (m.note.empty() ? "" : ": " + m.note);
          FigureOptions full;
          full.scale = style_.scale;
          full.uid = o.uid + "f";
          rows += fitted(svg_heatmap(opened[0], full).svg, " full");
          FigureOptions lines;
          lines.uid = o.uid + "l";
          const Figure drawn = svg_lines(opened, lines);
          if (!drawn.svg.empty()) rows += "<div class=\"lines\">" + fitted(drawn.svg, " lines") + "</div>";
        }
        rows += "</div>\n";
      }
      rows += "</div></div>\n";
    }
    for (std::size_t h = 0; h < most; ++h)
      names += "<div class=\"name\">" + markup(words.screen("head", {{"h", std::to_string(h)}})) + "</div>";
    // The lines button acts on the map opened large; hidden until one is.
    const std::string tools = "<div class=\"tools\" data-figure=\"" + uid + "\"><button type=\"button\" class=\"view\" hidden aria-pressed=\"false\">" +
                              markup(words.page("lines_button")) + "</button></div>\n";
    return tools + "<figure class=\"heatmaps overview\" id=\"" + uid + "\" data-heads=\"" + std::to_string(most) + "\" data-layers=\"" +
           std::to_string(layers.size()) + "\">\n<div class=\"model\" style=\"grid-template-columns:auto repeat(" + std::to_string(most) +
           ",auto)\">\n<div class=\"corner\"></div>" + names + "\n" + rows + "</div>\n" + key +
           "<figcaption class=\"readout\" aria-live=\"polite\"></figcaption>\n</figure>\n";
  }

  TextStyle style_;
};

}  // namespace

std::unique_ptr<Renderer> make_html_renderer(const RenderOptions& options) {
  return std::make_unique<HtmlRenderer>(options);
}

}  // namespace attn
