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
