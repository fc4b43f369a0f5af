// --format html: one self-contained page for a lesson or the tour (docs/html.md). Every step as the text
// view shows it (title, explanation, the book's code highlighted, the shape, the tensor in PyTorch's print
// format, the same characters), weight matrices as SVG heatmaps (render/figure.hpp), a table of contents,
// a scrolling document or slides (one step per screen, #slide-N in the address), light and dark themes and
// a print stylesheet for handouts. Nothing is fetched: the style and the small script are inline, and the
// page's Content-Security-Policy forbids every request. Every text from outside goes through markup().
#include <algorithm>
#include <cctype>
#include <cstring>
#include <tuple>

#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "render/figure.hpp"
#include "render/heatmap.hpp"
#include "render/layout.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

const char* const kStyle = R"CSS(
:root{color-scheme:light;--bg:#ffffff;--fg:#1a1a1a;--muted:#4a4a4a;--bar:#f3f3f0;--code:#f5f5f2;--border:#cfcfcf;
--accent:#1d5fa6;--kw:#8a1fa3;--str:#17702f;--num:#0b56a8;--com:#5e5e5e;--fn:#8a4600}
@media (prefers-color-scheme:dark){:root:not([data-theme="light"]){color-scheme:dark;--bg:#15171a;--fg:#e8e8e8;
--muted:#c0c0c0;--bar:#1f2227;--code:#1f2227;--border:#3d434b;--accent:#8cc4ff;--kw:#e0b3ff;--str:#8ee89b;
--num:#8cc8ff;--com:#b0b0b0;--fn:#ffb36b}}
:root[data-theme="dark"]{color-scheme:dark;--bg:#15171a;--fg:#e8e8e8;--muted:#c0c0c0;--bar:#1f2227;--code:#1f2227;
--border:#3d434b;--accent:#8cc4ff;--kw:#e0b3ff;--str:#8ee89b;--num:#8cc8ff;--com:#b0b0b0;--fn:#ffb36b}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:17px/1.5 system-ui,"DejaVu Sans",sans-serif}
header.bar{position:sticky;top:0;z-index:2;display:flex;gap:.8em;align-items:center;padding:.45em 1.2em;
background:var(--bar);border-bottom:1px solid var(--border)}
header.bar .doc{flex:1;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
header.bar button{font:inherit;font-size:.9em;padding:.2em .8em;border:1px solid var(--border);border-radius:4px;
background:var(--bg);color:var(--fg);cursor:pointer}
header.bar button:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
#counter{font-variant-numeric:tabular-nums;color:var(--muted)}
main{max-width:76rem;margin:0 auto;padding:.5em 1.5em 4em}
a{color:var(--accent)}
nav.toc{border-bottom:1px solid var(--border);padding-bottom:1em}
nav.toc ol{padding-left:1.6em;margin:.2em 0}
nav.toc li{margin:.1em 0}
section.slide{padding:1.2em 0;border-top:1px solid var(--border);scroll-margin-top:3em}
section.lesson h2{margin:.2em 0 .3em;font-size:1.6em}
h3{font-size:1.25em;margin:.1em 0 .4em}
h3 .num{color:var(--muted);font-weight:400;font-variant-numeric:tabular-nums}
h3 code.id{font-size:1em}
p.where,p.about{color:var(--muted);margin:.2em 0}
ul.facts{margin:.4em 0;padding-left:1.2em}
pre.notes{white-space:pre-wrap;background:none;border:0;padding:0;font-size:14px}
code.tok{white-space:pre;background:var(--code);border:1px solid var(--border);border-radius:3px;padding:0 .25em}
pre{background:var(--code);border:1px solid var(--border);border-radius:4px;padding:.6em .9em;overflow-x:auto;
font:15px/1.35 "DejaVu Sans Mono",Menlo,Consolas,monospace;margin:.5em 0}
pre.code .k{color:var(--kw);font-weight:600}pre.code .s{color:var(--str)}pre.code .n{color:var(--num)}
pre.code .c{color:var(--com);font-style:italic}pre.code .f{color:var(--fn)}
p.shape{margin:.5em 0 .2em;font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.9em}
figure.heatmaps{margin:.6em 0}
figure.heatmaps button.scale{font:inherit;font-size:.85em;padding:.15em .7em;border:1px solid var(--border);
border-radius:4px;background:var(--bg);color:var(--fg);cursor:pointer}
figure.heatmaps button.scale[aria-pressed="true"]{border-color:var(--accent);outline:1px solid var(--accent)}
figure.heatmaps svg{display:block;max-width:100%;height:auto;margin:.4em 0 .8em}
figure .readout{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.9em;min-height:1.5em;white-space:pre-wrap}
svg rect.cell:hover,svg rect.cell:focus{outline:none;stroke:var(--fg);stroke-width:3}
p.note{color:var(--muted)}
body.slides nav.toc,body.slides section.slide:not(.current){display:none}
body.slides section.slide{border:0;min-height:calc(100vh - 3.5em);font-size:1.12em}
@media print{
:root,:root[data-theme="dark"]{color-scheme:light;--bg:#ffffff;--fg:#000000;--muted:#333333;--code:#ffffff;
--border:#999999;--accent:#000000;--kw:#000000;--str:#000000;--num:#000000;--com:#333333;--fn:#000000}
@media (prefers-color-scheme:dark){:root:not([data-theme="light"]){color-scheme:light;--bg:#ffffff;--fg:#000000;
--muted:#333333;--code:#ffffff;--border:#999999;--accent:#000000;--kw:#000000;--str:#000000;--num:#000000;
--com:#333333;--fn:#000000}}
header.bar,nav.toc,figure .readout,figure .scales{display:none!important}
body{font-size:11pt}
main{max-width:none;padding:0}
body.slides section.slide,section.slide{display:block!important;min-height:0;border-top:1px solid #999999;font-size:11pt}
h2,h3{break-after:avoid;page-break-after:avoid}
figure.heatmaps svg,p.explanation{break-inside:avoid;page-break-inside:avoid}
section.lesson{break-before:page;page-break-before:always}
section.lesson:first-of-type{break-before:auto;page-break-before:auto}
pre{font-size:8.5pt;white-space:pre-wrap;break-inside:avoid}
svg{print-color-adjust:exact;-webkit-print-color-adjust:exact}
}
)CSS";

const char* const kScript = R"JS(
"use strict";
(function () {
  var slides = Array.prototype.slice.call(document.querySelectorAll("section.slide"));
  var body = document.body, current = 0;
  var counter = document.getElementById("counter");
  var modeButton = document.getElementById("mode"), themeButton = document.getElementById("theme");
  function setHash(h) {
    try { history.replaceState(null, "", h); } catch (e) { location.replace(h); }
  }
  function show(k) {
    current = Math.max(0, Math.min(slides.length - 1, k));
    slides.forEach(function (s, i) { s.classList.toggle("current", i === current); });
    counter.textContent = "slide " + (current + 1) + " of " + slides.length;
    setHash("#slide-" + (current + 1));
    window.scrollTo(0, 0);
  }
  function slideMode(on, k) {
    body.classList.toggle("slides", on);
    modeButton.setAttribute("aria-pressed", on ? "true" : "false");
    modeButton.textContent = on ? "Document" : "Slides";
    if (on) { show(k); return; }
    counter.textContent = "";
    setHash("#" + slides[current].id);
    slides[current].scrollIntoView();
  }
  // In the document, the slide at the top of the window.
  function slideInView() {
    for (var i = 0; i < slides.length; ++i) if (slides[i].getBoundingClientRect().bottom > 60) return i;
    return 0;
  }
  function fromHash() {
    var m = /^#slide-(\d+)$/.exec(location.hash);
    if (m) slideMode(true, parseInt(m[1], 10) - 1);
  }
  // Within a heatmap the arrow keys move between cells (one focus stop per map).
  function moveInGrid(cell, key) {
    var d = {ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0]}[key];
    if (!d) return false;
    var q = +cell.getAttribute("data-q") + d[0], k = +cell.getAttribute("data-k") + d[1];
    var next = cell.parentNode.querySelector('rect.cell[data-q="' + q + '"][data-k="' + k + '"]');
    if (next) { cell.setAttribute("tabindex", "-1"); next.setAttribute("tabindex", "0"); next.focus(); }
    return true;
  }
  function read(e) {
    var cell = e.target.closest ? e.target.closest("rect.cell") : null;
    var figure = cell && cell.closest("figure");
    var out = figure && figure.querySelector(".readout");
    if (out) out.textContent = cell.getAttribute("aria-label");
  }
  function dark() {
    var t = document.documentElement.getAttribute("data-theme");
    return t ? t === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function themeLabel() {
    themeButton.textContent = dark() ? "Light theme" : "Dark theme";
  }
  // The scale buttons: every colour and legend text of the figure set to its look on the chosen scale.
  document.addEventListener("click", function (e) {
    var button = e.target.closest ? e.target.closest("button.scale") : null;
    if (!button) return;
    var scale = button.getAttribute("data-scale"), figure = button.closest("figure");
    figure.querySelectorAll("button.scale").forEach(function (b) {
      b.setAttribute("aria-pressed", b === button ? "true" : "false");
    });
    figure.querySelectorAll("[data-fill-" + scale + "]").forEach(function (el) {
      el.setAttribute("fill", el.getAttribute("data-fill-" + scale));
    });
    figure.querySelectorAll("[data-text-" + scale + "]").forEach(function (el) {
      el.textContent = el.getAttribute("data-text-" + scale);
    });
    figure.querySelectorAll("g.legend").forEach(function (g) { g.setAttribute("data-scale", scale); });
  });
  themeButton.addEventListener("click", function () {
    document.documentElement.setAttribute("data-theme", dark() ? "light" : "dark");
    themeLabel();
  });
  modeButton.addEventListener("click", function () {
    slideMode(!body.classList.contains("slides"), slideInView());
  });
  document.addEventListener("mouseover", read);
  document.addEventListener("focusin", read);
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var cell = e.target.closest ? e.target.closest("rect.cell") : null;
    if (cell && moveInGrid(cell, e.key)) { e.preventDefault(); return; }
    if (e.target.tagName === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    if (!body.classList.contains("slides")) {
      if (e.key === "s") { slideMode(true, slideInView()); e.preventDefault(); }
      return;
    }
    switch (e.key) {
      case "ArrowRight": case "PageDown": case " ": case "Enter": case ".": show(current + 1); break;
      case "ArrowLeft": case "PageUp": case "Backspace": case "b": show(current - 1); break;
      case "Home": show(0); break;
      case "End": show(slides.length - 1); break;
      case "Escape": case "s": slideMode(false); break;
      default: return;
    }
    e.preventDefault();
  });
  themeLabel();
  fromHash();
})();
)JS";

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_keyword(const std::string& w) {
  static const char* const kKeywords[] = {"and", "as", "assert", "break", "class", "continue", "def", "del", "elif",
                                          "else", "except", "False", "for", "from", "if", "import", "in", "is",
                                          "lambda", "None", "not", "or", "pass", "return", "self", "super", "True",
                                          "while", "with", "yield"};
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [&](const char* k) { return w == k; });
}

std::string span(const char* cls, const std::string& text) {
  return std::string("<span class=\"") + cls + "\">" + markup(text) + "</span>";
}

// The book's code, highlighted: keywords, strings, numbers, comments and calls. Written here rather than
// taken from highlight.js or Pygments: those would put a library (tens of kilobytes of script, or Python at
// render time) into every page for a few short lines of a known Python subset.
std::string highlight_python(const std::string& code) {
  std::string out;
  std::size_t i = 0;
  const std::size_t n = code.size();
  while (i < n) {
    const char c = code[i];
    if (c == '#') {  // a comment, to the end of the line
      const std::size_t end = std::min(code.find('\n', i), n);
      out += span("c", code.substr(i, end - i));
      i = end;
    } else if (c == '"' || c == '\'') {  // a string, to its closing quote on the line
      std::size_t j = i + 1;
      while (j < n && code[j] != c && code[j] != '\n') j += code[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, n);
      out += span("s", code.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) && (i == 0 || !is_word(code[i - 1]))) {
      std::size_t j = i;
      while (j < n && (is_word(code[j]) || code[j] == '.' ||
                       ((code[j] == '-' || code[j] == '+') && (code[j - 1] == 'e' || code[j - 1] == 'E'))))
        ++j;
      out += span("n", code.substr(i, j - i));
      i = j;
    } else if (is_word(c)) {
      std::size_t j = i;
      while (j < n && is_word(code[j])) ++j;
      const std::string word = code.substr(i, j - i);
      out += is_keyword(word) ? span("k", word) : j < n && code[j] == '(' ? span("f", word) : markup(word);
      i = j;
    } else {
      std::size_t j = i + 1;  // everything else up to the next piece that is highlighted
      while (j < n && !is_word(code[j]) && code[j] != '#' && code[j] != '"' && code[j] != '\'') ++j;
      out += markup_lines(code.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a);
}

// Lesson names and step ids are attn's own (the book's variable names), escaped all the same.
std::string step_anchor(const Trace& t, const Step& s) { return html_escape("step-" + t.info.name + "-" + s.id); }

std::string token_list(const std::vector<std::string>& tokens) {
  constexpr std::size_t kShown = 64;
  std::string out;
  for (std::size_t i = 0; i < tokens.size() && i < kShown; ++i) out += (i ? " " : "") + ("<code class=\"tok\">" + markup(tokens[i]) + "</code>");
  if (tokens.size() > kShown) out += " ... (" + std::to_string(tokens.size() - kShown) + " more)";
  return out;
}

class HtmlRenderer : public Renderer {
 public:
  explicit HtmlRenderer(const RenderOptions& options) : style_(options.style) {}

  std::size_t working_bytes(const Document& doc) const override {
    // The page: each printed tensor (summarised by PyTorch's format past 1,000 numbers), and about 600
    // bytes per heatmap cell drawn.
    std::size_t bytes = 64 << 10;
    for (const Trace& t : doc.traces)
      for (const Step& s : t.steps) {
        if (!doc.shows(s)) continue;
        bytes = saturating_sum(bytes, printed_tensor_bytes(s) + 1024);
        if (s.heatmap && s.shape.size() >= 2 && s.shape.back() <= kFigureMaxKeys) {
          const std::size_t heads = s.shape.size() == 4 ? s.shape[1] : 1;
          bytes = saturating_sum(bytes, saturating_product({heads, s.shape.back(), s.shape[s.shape.size() - 2], 600}));
        }
      }
    return saturating_product({bytes, 2});  // built up as strings, then joined
  }

  std::vector<Chunk> render(const Document& doc) const override {
    std::string title = doc.is_tour() ? "attn tour: the attention mechanisms of chapter 3, step by step"
                                      : doc.traces.empty() ? "attn"
                                                           : "attn " + doc.traces.front().info.name + " \xe2\x80\x94 " +
                                                                 doc.traces.front().info.section + " " +
                                                                 doc.traces.front().info.title;
    std::string page;
    page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    // Nothing may be fetched: no network, no file, no font. The style and the script are the page's own.
    page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">\n";
    page += "<meta name=\"generator\" content=\"attn\">\n";
    page += "<title>" + markup(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
    page += "<header class=\"bar\"><span class=\"doc\">" + markup(title) +
            "</span><span id=\"counter\" aria-live=\"polite\"></span>"
            "<button id=\"mode\" type=\"button\" aria-pressed=\"false\" title=\"One step per screen (key s)\">Slides</button>"
            "<button id=\"theme\" type=\"button\">Dark theme</button></header>\n<main>\n";
    page += contents(doc);
    std::size_t figure = 0;
    for (std::size_t k = 0; k < doc.traces.size(); ++k) page += lesson(doc, k, figure);
    page += "</main>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
    return {{page, false}};
  }

 private:
  std::string contents(const Document& doc) const {
    std::string out = "<nav class=\"toc\" aria-label=\"Contents\">\n<h2>Contents</h2>\n<ol>\n";
    for (const Trace& t : doc.traces) {
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
    const Trace& t = doc.traces[k];
    std::string out = "<section class=\"slide lesson\" id=\"lesson-" + t.info.name + "\" data-lesson=\"" + t.info.name + "\">\n";
    out += "<h2>" + std::string(doc.is_tour() ? "Lesson " + std::to_string(k + 1) + " of " +
                                                    std::to_string(doc.traces.size()) + ": "
                                              : "") +
           "<code>attn " + t.info.name + "</code> \xe2\x80\x94 " + markup(t.info.section + " " + t.info.title) + "</h2>\n";
    out += "<p class=\"where\">" + markup(t.info.summary + " (" + where_in_book(t.info) + ")") + "</p>\n";
    std::string facts;
    if (t.show_inputs) {
      facts += "<li>inputs: " + markup(count_of(t.inputs.num_tokens(), "token") + " x " + count_of(t.inputs.d_in(), "dim") +
                                     " from " + t.inputs.source) +
             "</li>\n<li>tokens: " + token_list(t.inputs.tokens) + "</li>\n";
    }
    for (const auto& m : t.modules)
      facts += "<li>module: <code>" + markup(m.name + " = " + m.code) + "</code>, " + with_commas(m.num_params) +
               " parameters</li>\n";
    if (!facts.empty()) out += "<ul class=\"facts\">\n" + facts + "</ul>\n";
    // The notes as the text view prints them: some are tables aligned in columns (kv-cache --estimate).
    if (!t.notes.empty() || t.note_table) {
      out += "<pre class=\"notes\">";
      for (const auto& note : note_lines(t)) out += markup(note) + "\n";
      out += "</pre>\n";
    }
    out += "</section>\n";
    const std::size_t total = t.steps.size();
    for (std::size_t i = 0; i < total; ++i) {
      const Step& s = t.steps[i];
      if (doc.shows(s)) out += step(t, s, i, total, figure);
    }
    return out;
  }

  std::string step(const Trace& t, const Step& s, std::size_t i, std::size_t total, std::size_t& figure) const {
    const std::string anchor = step_anchor(t, s);
    std::string out = "<section class=\"slide step\" id=\"" + anchor + "\" data-lesson=\"" + t.info.name +
                      "\" data-step=\"" + html_escape(s.id) + "\" aria-labelledby=\"" + anchor + "-h\">\n";
    out += "<h3 id=\"" + anchor + "-h\"><span class=\"num\">[" + std::to_string(i + 1) + "/" + std::to_string(total) +
           "]</span> <code class=\"id\">" + html_escape(s.id) + "</code> <span class=\"title\">" + markup(s.title) + "</span></h3>\n";
    if (style_.explain && !style_.quiet) {
      out += "<p class=\"explanation\">" + markup(s.explanation) + "</p>\n";
      out += "<pre class=\"code\"><code>" + highlight_python(s.code) + "</code></pre>\n";
    }
    out += "<p class=\"shape\">" + markup(trim(shape_text(s))) + "</p>\n";
    out += "<pre class=\"tensor\">" + markup_lines(value_text(s)) + "</pre>\n";
    if (s.heatmap && s.computed) out += heatmaps(t, s, figure);
    return out + "</section>\n";
  }

  std::string heatmaps(const Trace& t, const Step& s, std::size_t& figure) const {
    const std::size_t keys = s.tensor.dimension() >= 2 ? s.tensor.shape().back() : 0;
    if (keys > kFigureMaxKeys)
      return "<p class=\"note\">" + std::to_string(keys) + " keys are too many to draw (at most " +
             std::to_string(kFigureMaxKeys) + "): the tensor is above as PyTorch prints it, and --format json has every "
             "number.</p>\n";
    const std::vector<HeatMap> maps = heat_maps(s, t.inputs.tokens);
    if (maps.empty()) return "";
    // The scale buttons: weights on the fixed 0..1 scale (the default: what a probability is), the matrix's
    // own min..max, or each row's own (softmax rows can differ much: a causal row 0 is all on one key), so
    // small differences are told apart -- each stated in the legend.
    std::string out = "<figure class=\"heatmaps\">\n<div class=\"scales\" role=\"group\" aria-label=\"Colour scale\">";
    for (const auto& [name, label, scale] : {std::tuple<const char*, const char*, HeatScale>{"fixed", "Fixed 0 to 1", HeatScale::Fixed},
                                             {"matrix", "Matrix min to max", HeatScale::Matrix},
                                             {"row", "Each row", HeatScale::Row}})
      out += std::string("<button type=\"button\" class=\"scale\" data-scale=\"") + name + "\" aria-pressed=\"" +
             (scale == style_.scale ? "true" : "false") + "\">" + label + "</button>";
    out += "</div>\n";
    for (const HeatMap& m : maps) {
      FigureOptions o;
      o.scale = style_.scale;
      o.scale_choices = true;
      o.uid = "f" + std::to_string(++figure);
      out += svg_heatmap(m, o).svg;
    }
    out += "<figcaption class=\"readout\" aria-live=\"polite\">Point at a cell, or focus one (Tab, then the arrow keys), "
           "to read its value.</figcaption>\n</figure>\n";
    return out;
  }

  TextStyle style_;
};

}  // namespace

std::unique_ptr<Renderer> make_html_renderer(const RenderOptions& options) {
  return std::make_unique<HtmlRenderer>(options);
}

}  // namespace attn
