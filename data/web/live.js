"use strict";
(function () {
  var form = document.getElementById("live");
  if (!form || !window.fetch || !window.DOMParser) return;
  var lesson = form.elements.namedItem("lesson"), error = document.getElementById("live-error");
  var controls = Array.prototype.slice.call(form.querySelectorAll("[data-takers]"));
  // last: the address last asked for; shown: the address of the view drawn (a #slide=ID after it is no new view).
  var timer = 0, seq = 0, inflight = null, last = "", shown = location.pathname + location.search;
  // Text from outside as attn shows it everywhere (docs/errors.md, "Text from outside"; core/terminal_text's
  // visible(), which the server applies to the boxes it fills): C0 controls, DEL and the C1 controls as \xNN of
  // their UTF-8 bytes, the bidirectional overrides and isolates (and U+FFFE, U+FFFF) as \u{xxxx}.
  function hex(n, digits) {
    var s = n.toString(16);
    while (s.length < digits) s = "0" + s;
    return s;
  }
  function visible(text) {
    return String(text).replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ufffe\uffff]/g, function (ch) {
      var c = ch.charCodeAt(0);
      return c < 0x80 ? "\\x" + hex(c, 2) : c < 0xa0 ? "\\xc2\\x" + hex(c, 2) : "\\u{" + hex(c, 4) + "}";
    });
  }
  function takers(c) {
    try { return JSON.parse(c.getAttribute("data-takers")) || {}; } catch (e) { return {}; }
  }
  // The bar's own words in each language (data-words), and those of the page's language now: a redraw in
  // another language (the lang list) brings the page's <html lang>, and the bar follows it (speak()).
  var words = {};
  try { words = JSON.parse(form.getAttribute("data-words")) || {}; } catch (e) { words = {}; }
  function said() { return words[document.documentElement.lang] || words.en || {}; }
  function note(text) {  // a default in words ("the book's") in the page's language; a number stays
    var notes = said().notes || {};
    return Object.prototype.hasOwnProperty.call(notes, text) ? notes[text] : text;
  }
  // A control the chosen lesson does not take is disabled (so never sent); its placeholder is the lesson's
  // default (a list's: its first, empty, choice).
  function follow() {
    controls.forEach(function (c) {
      var t = takers(c), on = Object.prototype.hasOwnProperty.call(t, lesson.value), shown = on ? note(t[lesson.value]) : "";
      c.disabled = !on;
      if (c.tagName === "SELECT") c.options[0].textContent = shown;
      else if (shown) c.setAttribute("placeholder", shown); else c.removeAttribute("placeholder");
    });
  }
  function speak() {
    var w = said(), button = form.querySelector("button[type=submit]");
    if (!w.recompute) return;
    button.textContent = w.recompute;
    button.title = w.recompute_title;
    form.setAttribute("aria-label", w.bar_label);
    controls.forEach(function (c) {
      var other = c.getAttribute("data-refused-with");
      if (other) c.title = w.refused_with.split("{option}").join("--" + c.name).split("{other}").join(other);
    });
    follow();
  }
  // The request's options: each enabled control that holds a value, by its key (the option without dashes);
  // with `given` (an address's query), its values rather than what the boxes show of them.
  // A box filled from outside (by the server, or from the address on back/forward) shows visible() of its
  // value, and keeps the value itself (data-raw, as JSON): until the box is edited, the value is what is sent,
  // so that a change of another control asks for the same text, not for what the box shows of it.
  function fill(c, raw) {
    c.value = visible(raw);
    if (c.value !== raw) {
      c.setAttribute("data-raw", JSON.stringify(raw));
      c.setAttribute("data-shown", c.value);
    } else {
      c.removeAttribute("data-raw");
      c.removeAttribute("data-shown");
    }
  }
  function current(c) {
    if (!c.hasAttribute("data-raw") || c.value !== c.getAttribute("data-shown")) return c.value;
    try { return JSON.parse(c.getAttribute("data-raw")); } catch (e) { return c.value; }
  }
  function options(given) {
    var value = function (c) { return given ? given.get(c.name) || "" : current(c); };
    return controls.filter(function (c) { return !c.disabled && value(c) !== ""; }).map(function (c) {
      return encodeURIComponent(c.name) + "=" + encodeURIComponent(value(c));
    }).join("&");
  }
  function address(given) {
    var o = options(given);
    return "/?lesson=" + encodeURIComponent(lesson.value) + (o ? "&" + o : "");
  }
  function say(text) { error.textContent = visible(text); }
  function refusal(status, body) {
    try {
      var j = JSON.parse(body);
      if (j && typeof j.error === "string") return j.error;
    } catch (e) { /* not the server's JSON: say the status */ }
    return "attn: the server answered " + status;
  }
  // The new page's <main>, its title and its tour mark put in place of the old; the page's script told.
  function swap(doc) {
    var old = document.querySelector("main");
    old.parentNode.replaceChild(document.importNode(doc.querySelector("main"), true), old);
    var title = doc.querySelector("header.bar .doc"), here = document.querySelector("header.bar .doc");
    if (title && here) here.textContent = title.textContent;
    document.title = doc.title;
    document.documentElement.lang = doc.documentElement.lang;  // --lang: the new page's language
    speak();  // and the bar's words in it
    if (doc.body.hasAttribute("data-tour")) document.body.setAttribute("data-tour", doc.body.getAttribute("data-tour"));
    else document.body.removeAttribute("data-tour");
    document.dispatchEvent(new CustomEvent("attn:redrawn"));
  }
  function done(n) {
    if (n !== seq) return false;
    inflight = null;
    form.removeAttribute("aria-busy");
    return true;
  }
  function recompute(push, given) {
    clearTimeout(timer);
    var at = address(given);
    if (at === last) return;
    last = at;
    var n = ++seq, o = options(given);
    if (inflight) inflight.abort();
    inflight = typeof AbortController === "function" ? new AbortController() : null;
    form.setAttribute("aria-busy", "true");
    fetch("/page/" + encodeURIComponent(lesson.value) + (o ? "?" + o : ""),
          {signal: inflight ? inflight.signal : undefined, credentials: "same-origin", headers: {Accept: "text/html"}})
      .then(function (r) { return r.text().then(function (body) { return {status: r.status, ok: r.ok, body: body}; }); })
      .then(function (a) {
        if (!done(n)) return;
        if (!a.ok) { last = ""; say(refusal(a.status, a.body)); return; }
        var doc = new DOMParser().parseFromString(a.body, "text/html");
        if (!doc.querySelector("main") || !document.querySelector("main")) {
          last = "";
          say("attn: the server's answer has no page");
          return;
        }
        say("");
        // The new address first: on a slide, the page's script then puts the slide's #slide=ID on it.
        if (push && location.pathname + location.search !== at) history.pushState(null, "", at);
        shown = location.pathname + location.search;
        swap(doc);
      }, function (e) {
        if (!done(n)) return;
        last = "";
        say("attn: no answer from the server (" + e.message + ")");
      });
  }
  function later() {
    clearTimeout(timer);
    timer = setTimeout(function () { recompute(true); }, 400);
  }
  form.addEventListener("input", function (e) { if (e.target !== lesson) later(); });
  form.addEventListener("change", function (e) {
    if (e.target === lesson) follow();
    recompute(true);
  });
  form.addEventListener("submit", function (e) {  // Enter in a box, or the button: now, even if nothing changed
    e.preventDefault();
    last = "";
    recompute(true);
  });
  // Back and forward: the controls as the address says (shown visible), and that view, of the address's own
  // values, as a reload draws it. A change of the #hash alone (a slide, a link of the contents) is no new
  // view, and leaves what is being typed alone.
  window.addEventListener("popstate", function () {
    if (location.pathname !== "/" || location.pathname + location.search === shown) return;
    var q = new URLSearchParams(location.search), want = q.get("lesson") || form.getAttribute("data-lesson");
    if (Array.prototype.some.call(lesson.options, function (o) { return o.value === want; })) lesson.value = want;
    controls.forEach(function (c) { fill(c, q.has(c.name) ? q.get(c.name) : ""); });
    follow();
    recompute(false, q);
  });
  follow();
  last = error.textContent ? "" : address();
})();
