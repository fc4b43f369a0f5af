// --format html: one self-contained page for a lesson or the tour (docs/html.md). Every step as the text
// view shows it (title, explanation, the book's code highlighted, the shape, the tensor in PyTorch's print
// format, the same characters), weight matrices as SVG heatmaps (render/figure.hpp: a grid of heads, a
// lines view, an overview step's small maps), a table of contents, a scrolling document or slides (one step
// per screen, the figure first and sized to the window, #slide=ID in the address), light and dark themes
// and a print stylesheet for handouts. Nothing is fetched: the style and the small script are inline, and the
// page's Content-Security-Policy forbids every request. Every text from outside goes through markup().
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
#include "render/layout.hpp"
#include "render/live_page.hpp"
#include "render/renderer.hpp"
#include "text/words.hpp"

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
div.tools{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;margin:.4em 0}
div.tools button{font:inherit;font-size:.85em;padding:.15em .7em;border:1px solid var(--border);
border-radius:4px;background:var(--bg);color:var(--fg);cursor:pointer}
div.tools button[aria-pressed="true"]{border-color:var(--accent);outline:1px solid var(--accent)}
div.tools button.head-toggle{border-width:2px;border-left-width:1.2em}
div.tools button.head-toggle[aria-pressed="false"]{opacity:.45;outline:none}
figure.heatmaps svg{display:block;max-width:100%;height:auto;margin:.4em 0 .8em}
figure .heads{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,26rem),1fr));gap:.3em 1em;align-items:start}
figure .heads.one{display:block}
figure .heads.one svg{width:auto}
figure .heads:not(.one) svg{width:100%}
figure p.common{margin:.2em 0;color:var(--muted);font-size:.9em}
figure .head .name,figure .model>.name{font-weight:600;font-size:.85em;line-height:1.25;white-space:nowrap;width:0;min-width:100%}
figure .note{font-size:.75em;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis;width:0;min-width:100%}
figure .head[tabindex]{cursor:zoom-in;border-radius:4px}
figure .head[tabindex]:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
figure.enlarged .head:not(.big),figure.enlarged p.common,figure.enlarged .head.big>.note,figure .name .said{display:none}
figure.enlarged .head.big>.name .said{display:inline}
figure.enlarged .head.big{cursor:zoom-out}
figure.enlarged .heads{display:block}
body:not(.slides) figure.enlarged .heads svg{width:100%;max-height:85vh}
figure .model{display:grid;gap:.25em .4em;align-items:start;justify-items:start;justify-content:start}
figure .model .layer,figure .model .heads{display:contents}
figure .model svg{width:auto;margin:0}
figure .model>.name{align-self:end;font-weight:400;color:var(--muted);white-space:normal;text-align:center;line-height:1.1}
figure .layer-name{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.85em;align-self:center;white-space:nowrap}
figure .layer-name .note{display:inline;margin-left:.6em;width:auto;min-width:0}
figure.enlarged .model{display:block}
figure.enlarged .model>.corner,figure.enlarged .model>.name,figure.enlarged .layer-name,figure.enlarged div.key{display:none}
figure .head .full{display:none}
figure.enlarged .head.big .full{display:block}
figure.enlarged .head.big svg.small{display:none}
figure .lines{display:none}
figure:not(.overview).show-lines .heads,figure.show-lines .legend-box,figure.show-lines p.common{display:none!important}
figure:not(.overview).show-lines .lines,figure.overview.enlarged.show-lines .head.big .lines{display:block}
figure.overview.enlarged.show-lines .head.big svg.full{display:none}
figure.compact text.key,figure.compact text.query,figure.compact text.axis,figure.no-numbers text.v{display:none}
svg.lines text.tok{cursor:pointer}
svg.lines text.tok:focus{outline:none;font-weight:700;text-decoration:underline}
svg.lines.focus line:not(.on){display:none}
svg.lines g.head-lines.off{display:none}
figure .readout{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.9em;min-height:1.5em;white-space:pre-wrap}
svg rect.cell:hover,svg rect.cell:focus{outline:none;stroke:var(--fg);stroke-width:3}
p.note{color:var(--muted)}
p.hint{color:var(--muted);font-size:.9em}
section.step button.tensor{display:none}
body.slides nav.toc,body.slides section.slide:not(.current){display:none}
body.slides main{max-width:none;padding:.3em 1.2em .1em}
body.slides section.slide{border:0;padding:.4em 0 0;min-height:0;font-size:clamp(17px,calc(.95vw + 5px),34px)}
body.slides section.step.has-figure.current{display:grid;grid-template-columns:auto minmax(14em,1fr);grid-template-rows:auto auto auto 1fr;
column-gap:1.4em;align-items:start}
body.slides section.step.has-figure>figure{grid-column:1;grid-row:1/span 4;margin:0}
body.slides figure .readout{position:fixed;right:1.2em;bottom:.5em;width:calc(24vw);background:var(--bg);margin:0}
body.slides section.step.has-figure>h3,body.slides section.step.has-figure>.words,body.slides section.step.has-figure>.tools{grid-column:2}
body.slides section.step.has-figure>.printed{grid-column:1/-1;display:none}
body.slides section.step.has-figure.show-printed>.printed{display:block}
body.slides section.step.has-figure button.tensor{display:inline-block}
body.slides section.step.has-figure .words pre.code{font-size:.8em;white-space:pre-wrap}
div.tools .scales{display:inline-flex;flex-wrap:wrap;gap:.5em}
body.slides figure.heatmaps svg{margin:.1em 0}
body.slides figure.heatmaps svg.fit{max-width:none}
@media (max-width:800px){body.slides section.step.has-figure.current{display:block}}
body.slides figure>.heads:not(.one){display:grid;gap:.3em .8em;justify-content:start}
section.step button.tensor{font:inherit;font-size:.85em;padding:.15em .7em;border:1px solid var(--border);border-radius:4px;
background:var(--bg);color:var(--fg);cursor:pointer;margin:.3em 0}
@media print{
:root,:root[data-theme="dark"]{color-scheme:light;--bg:#ffffff;--fg:#000000;--muted:#333333;--code:#ffffff;
--border:#999999;--accent:#000000;--kw:#000000;--str:#000000;--num:#000000;--com:#333333;--fn:#000000}
@media (prefers-color-scheme:dark){:root:not([data-theme="light"]){color-scheme:light;--bg:#ffffff;--fg:#000000;
--muted:#333333;--code:#ffffff;--border:#999999;--accent:#000000;--kw:#000000;--str:#000000;--num:#000000;
--com:#333333;--fn:#000000}}
header.bar,nav.toc,figure .readout,div.tools,figure .lines,section.step button.tensor,p.hint{display:none!important}
figure .heads,figure .model,section.step .printed{display:block!important}
figure .heads:not(.one){display:grid!important;grid-template-columns:1fr}
figure .model .heads,figure .model .layer{display:contents!important}
figure .model{display:grid!important}
figure.show-lines .heads.one{display:block!important}
figure.show-lines .heads:not(.one){display:grid!important}
section.slide{break-inside:avoid;page-break-inside:avoid}
body{font-size:10pt}
figure.heatmaps{margin:.2em 0}
figure.heatmaps svg{margin:.1em 0!important}
p.explanation,p.where,p.shape{margin:.2em 0}
h3{margin:0 0 .2em}
main{max-width:none;padding:0}
body.slides section.slide,section.slide{display:block!important;min-height:0;border-top:1px solid #999999;font-size:10pt;padding:.4em 0}
h2,h3{break-after:avoid;page-break-after:avoid}
figure.heatmaps svg,p.explanation{break-inside:avoid;page-break-inside:avoid}
section.lesson{break-before:page;page-break-before:always}
section.lesson:first-of-type{break-before:auto;page-break-before:auto}
pre{font-size:7pt;white-space:pre-wrap;break-inside:avoid;margin:.3em 0;padding:.3em .6em}
svg{print-color-adjust:exact;-webkit-print-color-adjust:exact}
figure.heatmaps svg{max-width:100%!important;height:auto!important}
figure .heads:not(.one) svg{width:100%!important}
figure .heads.one svg{width:auto!important}
main{column-count:2;column-gap:1.6em}
section.lesson{column-span:all}
figure .model svg{width:auto!important}
figure.enlarged .head,figure.enlarged p.common{display:revert!important}
figure .head .full{display:none!important}
figure .head svg.small{display:block!important}
}
)CSS";

const char* const kScript = R"JS(
"use strict";
(function () {
  // What the script reads of <main>: read again on "attn:redrawn", when attn serve's live page has put new
  // steps in (render/live_page.cpp); every listener is bound once, on the document or the header.
  var slides = [], body = document.body, current = 0, tour = false;
  function scan() {
    slides = Array.prototype.slice.call(document.querySelectorAll("section.slide"));
    tour = body.getAttribute("data-tour") === "1";
  }
  scan();
  var counter = document.getElementById("counter");
  // The page's words in its language (html.cpp writes them on #attn-words, in <main>: a new page, new words).
  function word(name, values) {
    var w = document.getElementById("attn-words"), text = w ? w.getAttribute("data-" + name) || "" : "";
    Object.keys(values || {}).forEach(function (k) { text = text.split("{" + k + "}").join(values[k]); });
    return text;
  }
  var modeButton = document.getElementById("mode"), themeButton = document.getElementById("theme");
  function setHash(h) {
    try { history.replaceState(null, "", h); } catch (e) { location.replace(h); }
  }
  // A slide's address: #slide=ID (a step id; 0 for the lesson's first slide), #slide=LESSON/ID in the tour.
  function address(s) {
    var id = s.getAttribute("data-step");
    return "#slide=" + (tour ? s.getAttribute("data-lesson") + "/" + id : id);
  }
  function find(name) {
    var slash = name.indexOf("/");
    var lesson = slash < 0 ? null : name.slice(0, slash), id = slash < 0 ? name : name.slice(slash + 1);
    for (var i = 0; i < slides.length; ++i)
      if (slides[i].getAttribute("data-step") === id && (lesson === null || slides[i].getAttribute("data-lesson") === lesson))
        return i;
    return -1;
  }
  function show(k) {
    current = Math.max(0, Math.min(slides.length - 1, k));
    slides.forEach(function (s, i) { s.classList.toggle("current", i === current); });
    var s = slides[current];
    // The numbers of [k/n]: a step's place in its lesson, the lesson's first slide step 0.
    counter.textContent = word("counter", {lesson: s.getAttribute("data-lesson"), k: s.getAttribute("data-k"), n: s.getAttribute("data-n")});
    setHash(address(s));
    window.scrollTo(0, 0);
    fitSlide();
  }
  function slideMode(on, k) {
    if (!slides.length) return;  // a live page whose request was refused has no steps yet
    body.classList.toggle("slides", on);
    modeButton.setAttribute("aria-pressed", on ? "true" : "false");
    modeButton.textContent = word(on ? "document" : "slides");
    if (on) { show(k); return; }
    counter.textContent = "";
    document.querySelectorAll("figure.heatmaps").forEach(function (f) {
      unfit(f);
      f.querySelectorAll("svg, .heads").forEach(function (e) { e.style.width = e.style.height = e.style.gridTemplateColumns = ""; });
    });
    setHash("#" + slides[current].id);
    slides[current].scrollIntoView();
  }
  // A figure as the page draws it: its maps' labels and numbers back (fit() may hide them), each viewBox whole.
  function unfit(figure) {
    figure.classList.remove("compact", "no-numbers");
    figure.querySelectorAll("svg[data-full]").forEach(function (e) { e.setAttribute("viewBox", e.dataset.full); delete e.dataset.full; });
  }
  // A figure's maps drawn at `k` screen pixels a unit of their viewBox (every map of a figure alike).
  function sizeMaps(maps, k) {
    maps.forEach(function (e) { var b = e.viewBox.baseVal; e.style.width = k * b.width + "px"; e.style.height = k * b.height + "px"; });
  }
  // The figure's content as drawn: from its maps' and layers' names' left to their right (names and notes
  // never widen a column; a grid's one legend is sized to the room first), and from its top to its bottom
  // (its caption and legend with it).
  function extent(figure) {
    var r = figure.getBoundingClientRect(), left = 1e9, right = -1e9;
    figure.querySelectorAll("svg.fit, .layer-name").forEach(function (e) {
      if (!e.getClientRects().length || e.closest(".readout")) return;
      var b = e.getBoundingClientRect();
      left = Math.min(left, b.left); right = Math.max(right, b.right);
    });
    return {width: right - left, height: r.height, right: right, bottom: r.bottom};
  }
  // Slides fill the window: the figure (one map, a grid of heads, the model view, a map opened large, or
  // its lines) as large as fits beside the step's words. A figure's size is linear in its maps' scale (its
  // captions, names, legend and gaps stay), so two trial sizes give the scale that fills the room, for each
  // number of columns a grid of heads may take; the grid takes the one that draws its maps largest. Where a
  // grid's labels would be too small to read, its maps show their cells alone (the cell's query and key are
  // read on hover); numbers show only where a cell is big enough for them.
  function fit(figure) {
    var maps = Array.prototype.filter.call(figure.querySelectorAll("svg.fit"), function (e) { return e.getClientRects().length > 0; });
    if (!maps.length) return;
    var section = figure.closest("section"), em = parseFloat(getComputedStyle(section).fontSize);
    var beside = getComputedStyle(section).display === "grid";  // else the words go under it (a narrow window)
    var W = section.clientWidth - (beside ? 15.4 * em : 0);
    var heads = figure.querySelector(".heads");
    var grid = figure.classList.contains("grid") && !figure.classList.contains("enlarged") && !figure.classList.contains("show-lines");
    unfit(figure);
    var H = Math.max(window.innerHeight - figure.getBoundingClientRect().top - 0.3 * em, 8 * em);
    // A grid's legend and the model view's key: as large as the slide's text.
    figure.querySelectorAll(".legend-box svg, div.key svg").forEach(function (e) {
      sizeMaps([e], Math.min(em / 17, W / e.viewBox.baseVal.width));  // never wider than the room
    });
    var best = {k: 0, cols: 1, dw: 1, dh: 1};
    function search() {
      best = {k: 0, cols: 1, dw: 1, dh: 1};
      var n = grid ? maps.length : 1;
      for (var c = 1; c <= n; ++c) {
        if (grid) heads.style.gridTemplateColumns = "repeat(" + c + ", auto)";
        sizeMaps(maps, 0.5); var a = extent(figure);
        sizeMaps(maps, 1); var b = extent(figure);
        var dw = 2 * (b.width - a.width), dh = 2 * (b.height - a.height);  // pixels per unit of scale
        var kw = (W - (b.width - dw)) / dw, kh = (H - (b.height - dh)) / dh;
        var k = Math.min(kw > 0 ? kw : 0, kh > 0 ? kh : 0);
        if (k > best.k * 1.001) best = {k: k, cols: c, dw: dw, dh: dh};
      }
      if (grid) heads.style.gridTemplateColumns = "repeat(" + best.cols + ", auto)";
      sizeMaps(maps, best.k);
    }
    search();
    // A grid whose labels would be under 8 px: the cells alone, the maps larger for it.
    if (grid && 11.5 * best.k < 8) {
      figure.classList.add("compact");
      maps.forEach(function (e) {
        var cells = e.querySelector("g.cells");
        if (!cells || !cells.dataset.box) return;
        e.dataset.full = e.getAttribute("viewBox");
        var box = cells.dataset.box.split(" ").map(Number);
        e.setAttribute("viewBox", (box[0] - 1) + " " + (box[1] - 1) + " " + (box[2] + 2) + " " + (box[3] + 2));
      });
      search();
    }
    // What still reaches past the room (a name that wrapped at the trial sizes and not at the chosen one, or
    // the other way), taken off the maps, at most three times.
    for (var i = 0; i < 3; ++i) {
      var e = extent(figure), over = Math.max((e.bottom + 0.3 * em - window.innerHeight) / best.dh, (e.width - W) / best.dw);
      if (!(over > 0.001)) break;
      best.k = Math.max(best.k - over - 0.002, 0.05);
      sizeMaps(maps, best.k);
    }
    figure.classList.toggle("no-numbers", 11.5 * best.k < 9);
  }
  function fitSlide() {
    if (!body.classList.contains("slides")) return;
    slides[current].querySelectorAll("figure.heatmaps").forEach(fit);
  }
  // In the document, the slide at the top of the window.
  function slideInView() {
    for (var i = 0; i < slides.length; ++i) if (slides[i].getBoundingClientRect().bottom > 60) return i;
    return 0;
  }
  function fromHash() {
    var m = /^#slide=(.+)$/.exec(location.hash), k = -1;
    if (m) {
      try { k = find(decodeURIComponent(m[1])); } catch (e) { k = -1; }  // a malformed address: the document
    }
    var old = /^#slide-(\d+)$/.exec(location.hash);  // the addresses of attn 0.x: the n-th slide of the page
    if (old) k = parseInt(old[1], 10) - 1;
    if (k >= 0) slideMode(true, k);
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
  // Lines: a token keeps only its own lines while pointed at or focused (or pinned with Enter or a click).
  function tokenOf(e) { return e.target.closest ? e.target.closest("svg.lines text.tok") : null; }
  function keepLines(svg, tok) {
    var q = tok && tok.getAttribute("data-q"), k = tok && tok.getAttribute("data-k");
    svg.classList.toggle("focus", !!tok);
    svg.querySelectorAll("line").forEach(function (l) {
      l.classList.toggle("on", !!tok && (q !== null ? l.getAttribute("data-q") === q : l.getAttribute("data-k") === k));
    });
    var out = svg.closest("figure").querySelector(".readout");
    if (out) out.textContent = tok ? word("lines-only", {token: tok.getAttribute("aria-label")}) : "";
  }
  function moveInLines(tok, key) {
    var svg = tok.closest("svg"), q = tok.hasAttribute("data-q"), next = null;
    var list = Array.prototype.slice.call(svg.querySelectorAll(q ? "text.tok.q" : "text.tok.k"));
    var at = list.indexOf(tok);
    if (key === "ArrowDown" || key === "ArrowUp") next = list[at + (key === "ArrowDown" ? 1 : -1)];
    else if (key === "ArrowRight" || key === "ArrowLeft") {
      var other = Array.prototype.slice.call(svg.querySelectorAll(q ? "text.tok.k" : "text.tok.q"));
      if ((key === "ArrowRight") === q) next = other[Math.min(at, other.length - 1)];
    } else if (key === "Enter" || key === " ") {
      svg.classList.toggle("pinned", !(svg.classList.contains("pinned") && svg.getAttribute("data-pin") === String(at) + q));
      svg.setAttribute("data-pin", String(at) + q);
      keepLines(svg, tok);
      return true;
    } else return false;
    if (next) { tok.setAttribute("tabindex", "-1"); next.setAttribute("tabindex", "0"); next.focus(); }
    return true;
  }
  function read(e) {
    var tok = tokenOf(e);
    if (tok) { var svg = tok.closest("svg"); if (!svg.classList.contains("pinned")) keepLines(svg, tok); return; }
    var cell = e.target.closest ? e.target.closest("rect.cell, figure.overview .head:not(.big)") : null;
    var figure = cell && cell.closest("figure");
    var out = figure && figure.querySelector(".readout");
    if (out) out.textContent = cell.getAttribute(cell.tagName === "rect" ? "aria-label" : "data-about");
  }
  function leaveLines(e) {
    var tok = tokenOf(e);
    if (!tok) return;
    var svg = tok.closest("svg"), to = e.relatedTarget;
    if (!svg.classList.contains("pinned") && !(to && to.closest && to.closest("svg.lines text.tok"))) keepLines(svg, null);
  }
  function dark() {
    var t = document.documentElement.getAttribute("data-theme");
    return t ? t === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function themeLabel() {
    themeButton.textContent = word(dark() ? "light-theme" : "dark-theme");
  }
  // A head of a grid (or a map of the model view) enlarged on its own, and back.
  function enlarge(head) {
    var figure = head.closest("figure"), on = !head.classList.contains("big");
    figure.querySelectorAll(".head.big").forEach(function (h) { h.classList.remove("big"); h.setAttribute("aria-expanded", "false"); });
    figure.classList.toggle("enlarged", on);
    if (figure.classList.contains("overview")) {  // the model view: its lines button is for the map opened large
      var view = toolsOf(figure).querySelector("button.view");
      if (!on && figure.classList.contains("show-lines")) toggleLines(figure);  // the next map opens as a heatmap
      if (view) view.hidden = !on;
    }
    if (on) {
      head.classList.add("big");
      head.setAttribute("aria-expanded", "true");
    }
    figure.querySelectorAll("svg").forEach(function (e) { e.style.width = e.style.height = ""; });
    if (body.classList.contains("slides")) fit(figure); else head.scrollIntoView({block: "nearest"});
    head.focus();
  }
  function restore() {
    var big = (body.classList.contains("slides") ? slides[current] : document).querySelector("figure.enlarged .head.big");
    if (big) enlarge(big);
    return !!big;
  }
  // A figure's buttons are before it, in a .tools naming it.
  function figureOf(button) { return document.getElementById(button.closest(".tools").getAttribute("data-figure")); }
  function toolsOf(figure) { return document.querySelector('.tools[data-figure="' + figure.id + '"]') || figure; }
  function toggleLines(figure) {
    var button = toolsOf(figure).querySelector("button.view");
    if (!button || button.hidden) return;
    var on = !figure.classList.contains("show-lines");
    figure.classList.toggle("show-lines", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.textContent = word(on ? "heatmap-button" : "lines-button");
    toolsOf(figure).querySelectorAll(".head-toggle").forEach(function (b) { b.hidden = !on; });
    figure.querySelectorAll("svg").forEach(function (e) { e.style.width = e.style.height = ""; });
    if (body.classList.contains("slides")) fit(figure);
  }
  function toggleTensor(section) {
    var button = section.querySelector("button.tensor");
    if (!button) return;
    var on = !section.classList.contains("show-printed");
    section.classList.toggle("show-printed", on);
    button.setAttribute("aria-expanded", on ? "true" : "false");
    if (on) section.querySelector(".printed").scrollIntoView({block: "nearest"});
  }
  document.addEventListener("click", function (e) {
    if (!e.target.closest) return;
    var button = e.target.closest("button");
    if (button && button.classList.contains("view")) { toggleLines(figureOf(button)); return; }
    if (button && button.classList.contains("tensor")) { toggleTensor(button.closest("section")); return; }
    if (button && button.classList.contains("head-toggle")) {
      var off = button.getAttribute("aria-pressed") === "true";
      button.setAttribute("aria-pressed", off ? "false" : "true");
      figureOf(button).querySelectorAll('g.head-lines[data-head="' + button.getAttribute("data-head") + '"]')
        .forEach(function (g) { g.classList.toggle("off", off); });
      return;
    }
    var tok = tokenOf(e);
    if (tok) { moveInLines(tok, "Enter"); return; }
    var head = e.target.closest(".head[tabindex]");
    if (head && !button) { enlarge(head); return; }
    if (!button || !button.classList.contains("scale")) return;
    // The scale buttons: every colour and legend text of the figure set to its look on the chosen scale.
    var scale = button.getAttribute("data-scale"), figure = figureOf(button);
    toolsOf(figure).querySelectorAll("button.scale").forEach(function (b) {
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
  document.addEventListener("mouseout", leaveLines);
  document.addEventListener("focusout", leaveLines);
  window.addEventListener("hashchange", fromHash);
  window.addEventListener("resize", fitSlide);
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    // Typing in a box (attn serve's bar) is typing, not the page's keys.
    if (e.target.closest && e.target.closest("input, select, textarea, [contenteditable]")) return;
    var cell = e.target.closest ? e.target.closest("rect.cell") : null;
    if (cell && moveInGrid(cell, e.key)) { e.preventDefault(); return; }
    var tok = e.target.closest ? e.target.closest("svg.lines text.tok") : null;
    if (tok && moveInLines(tok, e.key)) { e.preventDefault(); return; }
    var head = e.target.closest ? e.target.closest(".head[tabindex]") : null;
    if (head && e.target === head && (e.key === "Enter" || e.key === " ")) { enlarge(head); e.preventDefault(); return; }
    if (e.key === "Escape" && restore()) { e.preventDefault(); return; }
    if (e.target.tagName === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    if (!body.classList.contains("slides")) {
      if (e.key === "s") { slideMode(true, slideInView()); e.preventDefault(); }
      return;
    }
    var figure = slides[current].querySelector("figure.heatmaps");
    switch (e.key) {
      case "ArrowRight": case "PageDown": case " ": case "Enter": case ".": show(current + 1); break;
      case "ArrowLeft": case "PageUp": case "Backspace": case "b": show(current - 1); break;
      case "Home": show(0); break;
      case "End": show(slides.length - 1); break;
      case "Escape": case "s": slideMode(false); break;
      case "t": toggleTensor(slides[current]); break;
      case "l": if (figure) toggleLines(figure); break;
      default: return;
    }
    e.preventDefault();
  });
  // New steps in <main> (the live page): the same mode, on the same step where the new page has it.
  document.addEventListener("attn:redrawn", function () {
    var on = body.classList.contains("slides"), was = on && slides[current] ? address(slides[current]).slice(7) : "";
    scan();
    themeLabel();  // the new page's words (another language, from the live page's bar)
    modeButton.textContent = word(on ? "document" : "slides");  // the new page's word, in either mode
    if (!slides.length) { if (on) { body.classList.remove("slides"); modeButton.setAttribute("aria-pressed", "false"); modeButton.textContent = word("slides"); } return; }
    var k = was ? find(was) : -1;
    if (k < 0 && was.indexOf("/") >= 0) k = find(was.slice(was.indexOf("/") + 1));  // another lesson's: its id
    current = Math.min(current, slides.length - 1);
    if (on) show(k >= 0 ? k : current);
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
    page += "<title>" + markup(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body" +
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
    page += "</main>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
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
