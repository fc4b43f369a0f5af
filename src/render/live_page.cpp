// attn serve's live page (render/live_page.hpp, docs/serve.md): the html renderer's page with a control bar
// after its header, a second small script, and a Content-Security-Policy that also allows connect-src 'self'.
// The page itself is not re-rendered here: its header, its <main> and its own script stay byte for byte what
// --format html writes, so the live page cannot drift from the static one. Every text from outside (the
// values of a request, the refusal, the option help) is escaped.
#include "render/live_page.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/terminal_text.hpp"
#include "text/words.hpp"
#include "render/figure.hpp"
#include "render/json.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

const char* const kLiveStyle = R"CSS(
form.live{display:flex;flex-wrap:wrap;gap:.3em 1em;align-items:flex-end;margin:0;padding:.35em 1.2em .45em;
background:var(--bar);border-bottom:1px solid var(--border)}
form.live label{display:flex;flex-direction:column;font-size:.8em;color:var(--muted)}
form.live label.wide{flex:1 1 22em}
form.live input,form.live select,form.live button{font:inherit;font-size:1.15em;color:var(--fg);background:var(--bg);
border:1px solid var(--border);border-radius:4px;padding:.15em .4em}
form.live input[type="number"]{width:7.5em}
form.live button{cursor:pointer}
form.live input:disabled{opacity:.45}
form.live :focus-visible{outline:3px solid var(--accent);outline-offset:1px}
form.live[aria-busy="true"] button{opacity:.6}
form.live .live-error{flex-basis:100%;margin:0;white-space:pre-wrap;font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;
font-size:.9em}
form.live .live-error:not(:empty){border-left:4px solid #c62828;padding:.2em .6em}
@media print{form.live{display:none!important}}
)CSS";

// Recomputes as the bar changes: the typing in a box settles (400 ms), Enter, or another lesson or value.
// It asks /page/LESSON?OPTIONS of the server that served it, swaps the new <main> (and the title) in, and
// tells the page's own script (html.cpp's, on "attn:redrawn") to read its slides again; a refusal (a JSON
// {"error": ...}) is shown in the bar's alert, in the CLI's words, and the steps shown stay. The address
// holds the state (/?lesson=mha&text=...&seed=5): pushed on each new view, read back on back/forward.
// An answer to an older request is dropped (its fetch aborted, and a sequence number for what is left).
// What comes back from outside into the bar (an address's values, a refusal) is shown as the server shows
// it (visible(), below): the view is computed from the values themselves.
const char* const kLiveScript = R"JS(
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
)JS";

std::string attribute(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + html_escape(value) + "\"";
}

std::string value_of(const LiveBar& bar, const std::string& key) {
  for (const auto& [k, v] : bar.values)
    if (k == key) return v;
  return {};
}

// The defaults the option table says in words (OptionSpec::default_note), each a phrase of the page's words.
const char* const kDefaultNotes[] = {"live_default_books", "live_default_environment"};

// A lesson's default as a placeholder shows it: a default in words ("the book's", the option table's
// default_note) in the bar's language; a number as it is.
std::string shown_default(const std::string& text, const Words& words) {
  for (const char* name : kDefaultNotes)
    if (text == Words().page(name)) return words.page(name);
  return text;
}

// A control the server's configuration refuses: its title, saying why.
std::string refusal_title(const LiveControl& c, const Words& words) {
  return words.page("live_refused_with", {{"option", "--" + c.key}, {"other", c.refused_with}});
}

// Every language's words of the bar, for the script (data-words, as ASCII JSON, then escaped).
std::string bar_words() {
  nlohmann::json all = nlohmann::json::object();
  for (const std::string& language : supported_languages()) {
    const Words words(chosen_language(language, ""));  // the page switches languages: it carries each one's
    nlohmann::json w = nlohmann::json::object();
    for (const char* name : {"recompute", "recompute_title", "bar_label"}) w[name] = words.page(std::string("live_") + name);
    w["refused_with"] = words.page("live_refused_with", {{"option", "{option}"}, {"other", "{other}"}});
    w["notes"] = nlohmann::json::object();
    for (const char* name : kDefaultNotes) w["notes"][Words().page(name)] = words.page(name);
    all[language] = w;
  }
  return json_text(all, -1, true);
}

std::string control(const LiveBar& bar, const LiveControl& c) {
  const auto taker = c.takers.find(bar.lesson);
  const bool on = taker != c.takers.end();
  const std::string placeholder = on ? shown_default(taker->second, bar.words) : "";
  const std::string title = c.refused_with.empty() ? c.help : refusal_title(c, bar.words);
  const bool text = c.key == "text" || c.type_name == "TEXT";
  // A one-letter value is a number as --help names it: P a probability, N, I, H, L whole numbers.
  const bool number = c.type_name.size() == 1 && std::isupper(static_cast<unsigned char>(c.type_name[0]));
  nlohmann::json takers = nlohmann::json::object();
  for (const auto& [lesson, shown] : c.takers) takers[lesson] = shown;
  if (!c.values.empty()) {  // a choice (--lang): its words, and "" for the default, which the placeholder names
    std::string out = "<label><code>" + markup(c.key) + "</code> <select" + attribute("id", "live-" + c.key) + attribute("name", c.key);
    if (!title.empty()) out += attribute("title", title);
    if (!c.refused_with.empty()) out += attribute("data-refused-with", c.refused_with);
    out += attribute("data-takers", json_text(takers, -1, true));
    if (!on) out += " disabled";
    out += "><option value=\"\">" + markup(placeholder) + "</option>";
    const std::string given = value_of(bar, c.key);
    for (const std::string& v : c.values)
      out += "<option" + attribute("value", v) + (v == given ? " selected" : "") + ">" + markup(v) + "</option>";
    return out + "</select></label>";
  }
  std::string out = std::string("<label") + (text ? " class=\"wide\"" : "") + "><code>" + markup(c.key) + "</code> <input";
  out += attribute("id", "live-" + c.key) + attribute("name", c.key);
  if (number) {
    out += " type=\"number\"";
    out += c.type_name == "P" ? " step=\"any\" inputmode=\"decimal\"" : " step=\"1\" inputmode=\"numeric\"";
    if (!c.min.empty()) out += attribute("min", c.min);
    if (!c.max.empty()) out += attribute("max", c.max);
  } else {
    out += " type=\"text\"";
    if (text) out += " size=\"40\"";
  }
  out += " autocomplete=\"off\" spellcheck=\"false\"";
  // From outside: shown as the page shows text, with the value itself beside it when that differs, for the
  // script to send (its fill() and current()).
  const std::string raw = value_of(bar, c.key), shown = visible(raw);
  out += attribute("value", shown);
  if (shown != raw)
    out += attribute("data-raw", json_text(nlohmann::json(raw), -1, true)) + attribute("data-shown", shown);
  if (!placeholder.empty()) out += attribute("placeholder", placeholder);
  if (!title.empty()) out += attribute("title", title);
  if (!c.refused_with.empty()) out += attribute("data-refused-with", c.refused_with);
  // Every lesson's default, for the script to follow another lesson (as ASCII JSON, then escaped).
  out += attribute("data-takers", json_text(takers, -1, true));
  if (!on) out += " disabled";
  return out + "></label>";
}

// The control bar. Without the script, the form is a plain GET of /?lesson=...&KEY=VALUE (an empty box then
// arrives as KEY=, a disabled one not at all); the script sends only the boxes that hold a value.
std::string bar_html(const LiveBar& bar) {
  const auto say = [&](const char* name) { return bar.words.page(name); };
  std::string out = "<form class=\"live\" id=\"live\" role=\"search\"" + attribute("aria-label", say("live_bar_label")) +
                    " action=\"/\" method=\"get\" novalidate" + attribute("data-lesson", bar.lesson) +
                    attribute("data-words", bar_words()) + ">";
  out += "<label><code>lesson</code> <select id=\"live-lesson\" name=\"lesson\">";
  for (const std::string& choice : bar.choices)
    out += "<option" + attribute("value", choice) + (choice == bar.lesson ? " selected" : "") + ">" + markup(choice) + "</option>";
  out += "</select></label>";
  for (const LiveControl& c : bar.controls) out += control(bar, c);
  out += "<button type=\"submit\"" + attribute("title", say("live_recompute_title")) + ">" + markup(say("live_recompute")) + "</button>";
  out += "<p class=\"live-error\" id=\"live-error\" role=\"alert\" aria-live=\"assertive\">" + markup(bar.error) + "</p>";
  return out + "</form>\n";
}

// Where `what` is in `page`, or a logic error: the page is the html renderer's, whose form this relies on.
std::size_t at(const std::string& page, const std::string& what, bool last = false) {
  const std::size_t found = last ? page.rfind(what) : page.find(what);
  if (found == std::string::npos) throw std::logic_error("live_page: the page has no " + what);
  return found;
}

// The page of a refused request: the html renderer's page of no lesson (its style, header and script), with
// an empty <main>; the bar says why.
std::string empty_page() {
  std::string page = join(find_format("html")->make({})->render(Document{}));
  const std::size_t from = at(page, "<main>") + 6, to = at(page, "</main>", true);
  return page.replace(from, to - from, "\n");
}

}  // namespace

std::string live_page(const std::string& given, const LiveBar& bar) {
  std::string page = given.empty() ? empty_page() : given;
  // From the end backwards, so each place found stays where it was.
  page.insert(at(page, "</body>", true), "<script>" + std::string(kLiveScript) + "</script>\n");
  page.insert(at(page, "</header>") + 9, "\n" + bar_html(bar));
  page.insert(at(page, "</head>"), "<style>" + std::string(kLiveStyle) + "</style>\n");
  const std::string csp = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  const std::size_t from = at(page, csp) + csp.size();
  const std::size_t to = page.find('"', from);
  if (to == std::string::npos) throw std::logic_error("live_page: the page's policy is not closed");
  return page.replace(from, to - from, kLivePagePolicy);
}

}  // namespace attn
