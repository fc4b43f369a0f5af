// attn serve's live page (render/live_page.hpp): the html page of a lesson, as --format html writes it, with
// the control bar after its header, the live script once, and a policy that allows connect-src 'self' and
// nothing else; every value, refusal and help text from outside escaped; and the page of a refused request.
// The bar here is made as the server makes it, from the option table and the registry (no list of options
// or lessons of the test's own); each lesson's default is a made-up text, so a placeholder names its lesson.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>

#include "cli/cli.hpp"
#include "cli/front_end.hpp"
#include "cli/options.hpp"
#include "core/terminal_text.hpp"
#include "lessons/registry.hpp"
#include "render/figure.hpp"
#include "render/live_page.hpp"
#include "support.hpp"

using attn_test::run;
using attn_test::Run;

namespace {

const char* const kStaticPolicy = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
const char* const kLivePolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'";

std::string fake_default(const std::string& key, const std::string& lesson) { return "default of " + key + " in " + lesson; }

// The bar for `lesson`: every lesson and the tour; the text box (taken by the lessons that read inputs, and
// the tour), then each lesson option with a value that is a number (a one-letter type), taken by the
// lessons whose registry entry lists it.
attn::LiveBar make_bar(const std::string& lesson) {
  attn::LiveBar bar;
  for (const std::string& name : attn_test::lesson_names()) bar.choices.push_back(name);
  bar.choices.push_back("tour");
  bar.lesson = lesson;
  for (const attn::OptionSpec& spec : attn::option_table()) {
    attn::LiveControl c;
    if (spec.name == "--text") {
      c.key = "text";
      for (const attn::Lesson& l : attn::lessons())
        if (l.modes.front().uses_inputs) c.takers[l.info.name] = fake_default("text", l.info.name);
      c.takers["tour"] = fake_default("text", "tour");
    } else if (spec.scope == attn::Scope::Lesson && spec.opt && spec.type_name.size() == 1) {
      c.key = spec.name.substr(2);
      c.min = "0";
      c.max = std::to_string(bar.controls.size() + 10);
      for (const attn::Lesson& l : attn::lessons())
        if (l.takes(*spec.opt)) c.takers[l.info.name] = fake_default(c.key, l.info.name);
    } else {
      continue;
    }
    c.type_name = spec.type_name;
    c.help = spec.help;
    bar.controls.insert(c.key == "text" ? bar.controls.begin() : bar.controls.end(), c);
  }
  return bar;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string between(const std::string& text, const std::string& from, const std::string& to) {
  const std::size_t a = text.find(from);
  REQUIRE(a != std::string::npos);
  const std::size_t b = text.find(to, a + from.size());
  REQUIRE(b != std::string::npos);
  return text.substr(a + from.size(), b - a - from.size());
}

// Every Content-Security-Policy of the page.
std::vector<std::string> policies(const std::string& page) {
  std::vector<std::string> out;
  const std::regex csp("<meta http-equiv=\"Content-Security-Policy\" content=\"([^\"]*)\">");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), csp); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// The <input> tags named `key` in the bar.
std::vector<std::string> inputs_named(const std::string& bar, const std::string& key) {
  std::vector<std::string> out;
  const std::regex tag("<input[^>]*>");
  for (auto it = std::sregex_iterator(bar.begin(), bar.end(), tag); it != std::sregex_iterator(); ++it)
    if (it->str().find(" name=\"" + attn::html_escape(key) + "\"") != std::string::npos) out.push_back(it->str());
  return out;
}

// An attribute's text as the page writes it (escaped), or "(none)".
std::string attribute(const std::string& tag, const std::string& name) {
  std::smatch m;
  if (std::regex_search(tag, m, std::regex(" " + name + "=\"([^\"]*)\""))) return m[1];
  return "(none)";
}
bool has_flag(const std::string& tag, const std::string& name) {
  return std::regex_search(tag, std::regex(" " + name + "(?=[ >])"));
}

std::string html_page(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--format", "html"});
  const Run r = run(a);
  REQUIRE(r.status == 0);
  return r.out;
}

}  // namespace

TEST_CASE("live page: the html page with the bar after its header and one control per option and the live script once",
          "[live]") {
  const std::string page = html_page({"mha"});
  const attn::LiveBar bar = make_bar("mha");
  REQUIRE(bar.controls.size() >= 5);  // the text box and the lesson options that take a number
  const std::string live = attn::live_page(page, bar);

  // The page itself is kept: its header, its <main> and its own script, byte for byte.
  CHECK(live.rfind("<!DOCTYPE html>\n", 0) == 0);
  CHECK(live.size() > page.size());
  CHECK(live.find("</html>\n") == live.size() - 8);
  CHECK(between(live, "<main>", "</main>") == between(page, "<main>", "</main>"));
  CHECK(between(live, "<header class=\"bar\">", "</header>") == between(page, "<header class=\"bar\">", "</header>"));
  const std::string own_script = between(page, "<script>", "</script>");
  CHECK(count(live, own_script) == 1);

  // The bar comes right after the header, before <main>; one form, one select with every choice.
  const std::size_t header_end = live.find("</header>") + 9;
  CHECK(live.compare(header_end, 30, "\n<form class=\"live\" id=\"live\" ") == 0);
  const std::string form = between(live, "<form class=\"live\"", "</form>");
  CHECK(live.find("</form>") < live.find("<main>"));
  CHECK(count(live, "<form") == 1);
  CHECK(count(form, "<select") == 1);
  CHECK(form.find("<select id=\"live-lesson\" name=\"lesson\">") != std::string::npos);
  std::string options;
  for (const std::string& choice : bar.choices)
    options += "<option value=\"" + choice + "\"" + (choice == "mha" ? " selected" : "") + ">" + choice + "</option>";
  CHECK(between(form, "name=\"lesson\">", "</select>") == options);

  // One control per LiveControl, in the bar's order, text first: disabled exactly where mha does not take
  // it, its placeholder mha's default where it does, a number box with the range for a number.
  std::size_t last = 0;
  std::size_t disabled = 0;
  for (const attn::LiveControl& c : bar.controls) {
    INFO("control " << c.key);
    const std::vector<std::string> found = inputs_named(form, c.key);
    REQUIRE(found.size() == 1);
    const std::string& tag = found.front();
    const std::size_t at = form.find(tag);
    CHECK(at > last);
    last = at;
    const bool takes = c.takers.count("mha") == 1;
    CHECK(has_flag(tag, "disabled") == !takes);
    disabled += takes ? 0 : 1;
    CHECK(attribute(tag, "placeholder") == (takes ? fake_default(c.key, "mha") : "(none)"));
    CHECK(attribute(tag, "value") == "");
    CHECK(attribute(tag, "title") == attn::html_escape(c.help));
    CHECK(attribute(tag, "id") == "live-" + c.key);
    if (c.key == "text") {
      CHECK(attribute(tag, "type") == "text");
    } else {
      CHECK(attribute(tag, "type") == "number");
      CHECK(attribute(tag, "min") == c.min);
      CHECK(attribute(tag, "max") == c.max);
      CHECK(attribute(tag, "step") == (c.type_name == "P" ? "any" : "1"));
    }
    // Every lesson's default, for the script to follow another lesson.
    std::string takers = "{";
    for (const auto& [lesson, shown] : c.takers) takers += (takers.size() > 1 ? "," : "") + ("\"" + lesson + "\":\"" + shown + "\"");
    CHECK(attribute(tag, "data-takers") == attn::html_escape(takers + "}"));
    // Each control has its visible label: the option's name, as code (it is the address's key, in any language).
    CHECK(form.find("<label" + std::string(c.key == "text" ? " class=\"wide\"" : "") + "><code>" + c.key + "</code> <input id=\"live-" + c.key) !=
          std::string::npos);
  }
  CHECK(disabled > 0);                          // mha takes neither the kv-cache estimate's nor gqa's options
  CHECK(disabled < bar.controls.size() - 1);    // and takes the text, seed, d-out, heads, dropout
  CHECK(count(form, "<input") == bar.controls.size());
  // The error region is there, empty, to be spoken when it fills.
  CHECK(form.find("<p class=\"live-error\" id=\"live-error\" role=\"alert\" aria-live=\"assertive\"></p>") != std::string::npos);

  // The policy: the static page's, with connect-src 'self' and nothing else; and only one.
  CHECK(policies(page) == std::vector<std::string>{kStaticPolicy});
  CHECK(policies(live) == std::vector<std::string>{kLivePolicy});
  CHECK(count(live, "Content-Security-Policy") == 1);
  CHECK(count(live, "'self'") == 1);
  CHECK(live.find("http://") == std::string::npos);
  CHECK(live.find("https://") == std::string::npos);
  CHECK(live.find(" src=") == std::string::npos);

  // The live script once, after the page's own, the last thing in <body>; its style once, in <head>.
  CHECK(count(live, "<script>") == count(page, "<script>") + 1);
  CHECK(count(live, "new DOMParser()") == 1);
  CHECK(count(live, "fetch(\"/page/\"") == 1);
  CHECK(live.find("new DOMParser()") > live.find(own_script));
  CHECK(live.rfind("</script>\n</body>\n</html>\n") == live.size() - 26);
  CHECK(count(live, "form.live{display:flex;") == 1);
  CHECK(live.find("form.live{display:flex;") < live.find("</head>"));
}

TEST_CASE("live page: the values shown and the refusal are escaped whatever they hold", "[live][hostile]") {
  const std::string page = html_page({"causal"});
  attn::LiveBar bar = make_bar("causal");
  const std::string script = "<script>window.pwned=1</script>";
  const std::string quotes = "\"'><img src=x onerror=\"window.pwned=2\">";
  bar.values = {{"text", script + " & more"}, {"seed", quotes}, {"no-such-option", "<b>x</b>"}};
  bar.error = "attn: --seed: expected a whole number, got '" + quotes + "' & " + script;
  bar.controls.front().help = "<i>typed</i> & \"quoted\"";
  const std::string live = attn::live_page(page, bar);
  const std::string form = between(live, "<form class=\"live\"", "</form>");

  for (const std::string& raw : {script, quotes, std::string("<b>x</b>"), std::string("<i>typed</i>")}) {
    INFO(raw);
    CHECK(live.find(raw) == std::string::npos);
  }
  CHECK(attribute(inputs_named(form, "text").at(0), "value") == "&lt;script&gt;window.pwned=1&lt;/script&gt; &amp; more");
  CHECK(attribute(inputs_named(form, "seed").at(0), "value") ==
        "&quot;&#39;&gt;&lt;img src=x onerror=&quot;window.pwned=2&quot;&gt;");
  CHECK(attribute(inputs_named(form, "text").at(0), "title") == "&lt;i&gt;typed&lt;/i&gt; &amp; &quot;quoted&quot;");
  // A value's control characters, bidi overrides and isolates are shown as visible() shows them.
  bar.values = {{"text", "a\x1b[2J\x7f\xc2\x9b\xe2\x80\xae" "b\xe2\x81\xa9"}};
  CHECK(attribute(inputs_named(between(attn::live_page(page, bar), "<form class=\"live\"", "</form>"), "text").at(0), "value") ==
        "a\\x1b[2J\\x7f\\xc2\\x9b\\u{202e}b\\u{2069}");
  // A value for no control of the bar is not shown (the refusal says why).
  CHECK(form.find("&lt;b&gt;x&lt;/b&gt;") == std::string::npos);
  CHECK(between(form, "role=\"alert\" aria-live=\"assertive\">", "</p>") ==
        "attn: --seed: expected a whole number, got &#39;&quot;&#39;&gt;&lt;img src=x onerror=&quot;window.pwned=2&quot;&gt;&#39; "
        "&amp; &lt;script&gt;window.pwned=1&lt;/script&gt;");

  // A hostile lesson name (the server takes it from the address) is text too, and selects nothing.
  bar.lesson = "\"><script>x</script>";
  const std::string other = attn::live_page(page, bar);
  CHECK(other.find("<script>x</script>") == std::string::npos);
  CHECK(other.find("data-lesson=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\"") != std::string::npos);
  CHECK(count(between(other, "<form class=\"live\"", "</form>"), " selected") == 0);
}

TEST_CASE("live page: the bar's JSON data escapes DEL and C1 controls as --json does", "[live][hostile]") {
  attn::LiveBar bar = make_bar("causal");
  bar.controls.front().takers["causal"] = "a\x1b[2J b\x7f c\xc2\x9b" "31m \xe2\x80\xae" "d";
  const std::string form = between(attn::live_page(html_page({"causal"}), bar), "<form class=\"live\"", "</form>");
  const std::string takers = attribute(inputs_named(form, "text").at(0), "data-takers");
  // JSON in ASCII, then escaped for the attribute: every control a \u escape, as --json writes it.
  CHECK_THAT(takers, Catch::Contains("&quot;causal&quot;:&quot;a\\u001b[2J b\\u007f c\\u009b31m \\u202ed&quot;"));
  for (const char c : takers) CHECK((c >= 0x20 && c < 0x7f));
}

TEST_CASE("live page: a refused request gives a page of the bar and the refusal in the page's style", "[live]") {
  attn::LiveBar bar = make_bar("mha");
  bar.values = {{"seed", "-1"}};
  bar.error = "attn: --seed: expected a whole number from 0 to 18446744073709551615, got '-1'";
  const std::string live = attn::live_page("", bar);
  CHECK(live.rfind("<!DOCTYPE html>\n", 0) == 0);
  CHECK(live.find("</html>\n") == live.size() - 8);
  CHECK(policies(live) == std::vector<std::string>{kLivePolicy});
  // The style and header of every page, an empty <main> (no step, no contents), the bar after the header.
  CHECK(count(live, "<header class=\"bar\">") == 1);
  CHECK(live.find(":root{color-scheme:light;") != std::string::npos);
  CHECK(between(live, "<main>", "</main>") == "\n");
  CHECK(live.find("section class=\"slide") == std::string::npos);
  CHECK(live.compare(live.find("</header>") + 9, 20, "\n<form class=\"live\" ") == 0);
  CHECK(between(live, "role=\"alert\" aria-live=\"assertive\">", "</p>") ==
        "attn: --seed: expected a whole number from 0 to 18446744073709551615, got &#39;-1&#39;");
  CHECK(attribute(inputs_named(live, "seed").at(0), "value") == "-1");
  // Both scripts: the page's (which the first good answer fills) and the live one.
  CHECK(count(live, "<script>") == 2);
  CHECK(count(live, "new DOMParser()") == 1);
}

TEST_CASE("live page: the tour is a choice like a lesson with the controls the tour takes", "[live]") {
  const std::string page = html_page({"tour"});
  const attn::LiveBar bar = make_bar("tour");
  const std::string live = attn::live_page(page, bar);
  const std::string form = between(live, "<form class=\"live\"", "</form>");
  CHECK(form.find("<option value=\"tour\" selected>tour</option>") != std::string::npos);
  CHECK(count(form, " selected") == 1);
  // The fixture's tour takes the text alone.
  for (const attn::LiveControl& c : bar.controls) {
    INFO("control " << c.key);
    CHECK(has_flag(inputs_named(form, c.key).at(0), "disabled") == (c.key != "text"));
  }
  CHECK(live.find("<body data-tour=\"1\">") != std::string::npos);
}

namespace {

using nlohmann::json;

json eval(const std::string& js) { return {{"do", "eval"}, {"js", js}}; }
json wait(const std::string& js) { return {{"do", "wait"}, {"js", js}, {"seconds", 30}}; }
json type(const std::string& css, const std::string& text) { return {{"do", "type"}, {"css", css}, {"text", text}}; }
json focus(const std::string& css) { return {{"do", "focus"}, {"css", css}}; }
json keys(const std::vector<std::string>& k) { return {{"do", "keys"}, {"keys", k}}; }

// The live page's state once an answer is drawn: the address says `search` and no request is in flight.
json settled(const std::string& search) {
  return wait("location.search === " + json(search).dump() + " && !document.getElementById('live').hasAttribute('aria-busy')");
}

// Every cell of the attn_weights heatmaps: [head, query, key, value as the page writes it: "masked" for a
// future key].
const char* const kCellsJs =
    "Array.from(document.querySelectorAll('main section[data-step=\"attn_weights\"] .heads rect.cell')).map(function (c) {"
    " return [+c.closest('.head').dataset.head || 0, +c.dataset.q, +c.dataset.k, c.dataset.value]; })";
const char* const kTokensJs = "Array.from(document.querySelectorAll('main section.lesson ul.facts code.tok')).map(function (e) { return e.textContent; })";

// The query of the request the page sends for `args` (after the lesson), percent-encoded as the script does.
std::string encoded(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || std::strchr("-_.!~*'()", c)) {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// What the cells must hold: batch 0 of the CLI's JSON attn_weights, (batch, heads, T, T).
void check_cells(const json& cells, const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--step", "attn_weights", "--json"});
  const Run r = run(a);
  REQUIRE(r.status == 0);
  const json data = json::parse(r.out)["steps"][0]["data"][0];
  std::size_t expected = 0;
  for (const json& head : data) expected += head.size() * head.size();
  REQUIRE(cells.size() == expected);
  std::size_t masked = 0;
  for (const json& c : cells) {
    const float value = data[c[0].get<int>()][c[1].get<int>()][c[2].get<int>()].get<float>();
    if (c[3] == "masked") {
      ++masked;
      CHECK(c[2].get<int>() > c[1].get<int>());
      CHECK(value == 0.0f);
    } else {
      CHECK(std::stof(c[3].get<std::string>()) == value);
    }
  }
  CHECK(masked == data.size() * data[0].size() * (data[0].size() - 1) / 2);  // the causal mask, every head
}

// Runs the actions in Chromium (tests/browser/drive.py) with loopback allowed, against the real `attn serve
// --port 0` ("{server}" in an address is where it listens); one result per action.
json drive_served(const attn_test::Scratch& s, const json& actions) {
  const json request = {{"loopback", true}, {"server", {ATTN_EXE, "serve", "--port", "0"}}, {"actions", actions}};
  const Run r = attn_test::shell("/usr/bin/python3 " + attn_test::quote(ATTN_TESTS_DIR "/browser/drive.py") + " " +
                                 attn_test::quote(s.file("request.json", request.dump())));
  INFO("drive.py's errors: " << r.err);
  REQUIRE(r.status == 0);
  const json out = json::parse(r.out);
  REQUIRE(out.size() == actions.size());
  return out;
}

// Each message the browser logged is a refusal the test asked for (Chromium logs each 400 it fetches), of
// a request holding `refused` (the value the test typed to be refused). Enter asks again even for what was
// just refused, so a refused value typed, paused on past the 400 ms and then entered is asked for twice: at
// least `refusals` messages, as many more as the machine's pace made.
void check_console(const json& messages, std::size_t refusals, const std::string& refused = "seed=-1") {
  INFO(messages.dump());
  CHECK(messages.size() >= refusals);
  if (refusals == 0) CHECK(messages.empty());
  for (const json& m : messages) {
    CHECK(m.get<std::string>().find("the server responded with a status of 400") != std::string::npos);
    CHECK(m.get<std::string>().find(refused) != std::string::npos);
  }
}

#define NEED_CHROMIUM()                                                  \
  attn_test::need_program("/usr/bin/chromium", "chromium");              \
  attn_test::need_program("/usr/bin/chromedriver", "chromium-driver")

}  // namespace

// The page against attn serve, as a class would use it: a link to mha, then typing, Enter, the seed, a
// refusal, back and forward, another lesson with the keyboard, and slides kept across a redraw.
TEST_CASE("live page in Chromium: typing recomputes in place and the address holds the state and errors show inline",
          "[live][browser]") {
  NEED_CHROMIUM();
  attn_test::Scratch s;
  const attn::LiveBar bar = attn::live_bar(attn::command_line_front_end(), "mha", {}, "", false);  // the server's own
  const std::string sentence = "Every cat sat down";
  const auto at = std::find(bar.choices.begin(), bar.choices.end(), "mha");
  REQUIRE(at + 1 != bar.choices.end());
  const std::string next = *(at + 1);  // ArrowDown on the lesson's select
  std::string next_search = "?lesson=" + next;
  std::vector<std::string> next_args = {next};
  for (const attn::LiveControl& c : bar.controls)
    if (c.takers.count(next) && (c.key == "text" || c.key == "seed")) {
      next_search += "&" + c.key + "=" + encoded(c.key == "text" ? sentence : "5");
      next_args.insert(next_args.end(), {"--" + c.key, c.key == "text" ? sentence : "5"});
    }
  const std::string typed = "?lesson=mha&text=" + encoded(sentence);
  const std::string seeded = typed + "&seed=5";
  const char* const error_js = "document.getElementById('live-error').textContent";

  json actions = json::array({
      {{"do", "load"}, {"url", "{server}/?lesson=mha"}}, type("#live-text", sentence),  // 0-1
      settled(typed), eval(kTokensJs), eval(kCellsJs),  // 2-4
      eval("[document.body.classList.contains('slides'), document.activeElement.id, document.title]"),  // 5
      type("#live-seed", "5"), keys({"Enter"}), settled(seeded), eval(kCellsJs),  // 6-9
      eval("document.getElementById('live-seed').value = ''"), type("#live-seed", "-1"), keys({"Enter"}),  // 10-12
      wait(error_js), eval(kCellsJs), eval("location.search"),  // 13-15
      eval("history.back()"), settled(typed),  // 16-17
      eval("[document.getElementById('live-seed').value, document.getElementById('live-text').value]"), eval(kCellsJs),  // 18-19
      eval("history.forward()"), settled(seeded), eval("document.getElementById('live-seed').value"), eval(error_js),  // 20-23
      focus("#live-lesson"), keys({"ArrowDown"}), settled(next_search),  // 24-26
      eval("Array.from(document.querySelectorAll('main section.step')).map(function (s) { return s.dataset.step; })"),  // 27
      eval("[document.title, document.querySelector('header.bar .doc').textContent, document.getElementById('live-lesson').value]"),  // 28
      eval("history.back()"), settled(seeded),  // 29-30
      eval("document.activeElement.blur()"), keys({"s", "End"}),  // 31-32
      eval("[location.hash, document.querySelector('main section.slide.current').dataset.step]"),  // 33
      type("#live-text", " again"), settled(seeded.substr(0, typed.size()) + encoded(" again") + "&seed=5"),  // 34-35
      eval("[document.body.classList.contains('slides'), location.hash, document.querySelectorAll('main section.slide.current').length,"
           " document.querySelector('main section.slide.current').dataset.step]"),  // 36
      eval("document.activeElement.blur()"), keys({"Home"}),  // 37-38
      eval("[location.hash, document.querySelector('main section.slide.current').dataset.step, document.getElementById('counter').textContent]"),  // 39
      // A refused seed, then a new #slide=ID in the address: no new view, and the box keeps what was typed.
      eval("document.getElementById('live-seed').value = ''"), type("#live-seed", "-1"), keys({"Enter"}), wait(error_js),  // 40-43
      eval("location.hash = '#slide=attn_weights'"), wait("location.hash === '#slide=attn_weights'"),  // 44-45
      eval("[document.getElementById('live-seed').value, " + std::string(error_js) +
           ", document.getElementById('live').hasAttribute('aria-busy'), document.querySelector('main section.slide.current').dataset.step]"),  // 46
      {{"do", "console"}},  // 47
      // A link to the seeded view, opened anew (a reload, or a link a student was sent): the server draws it.
      {{"do", "load"}, {"url", "{server}/" + seeded}}, eval(kCellsJs),  // 48-49
      eval("[document.getElementById('live-seed').value, document.getElementById('live-text').value, document.getElementById('live-lesson').value]"),  // 50
  });
  const json out = drive_served(s, actions);
  const auto result = [&](std::size_t i) -> const json& { return out[i]; };  // by the numbers above
  CHECK(out[0]["console"] == json::array());

  // Typed and paused: the sentence's tokens and weights, the address, the page's keys not fired by typing.
  CHECK(result(2) == true);
  const json tokens = json::parse(run({"mha", "--text", sentence, "--json"}).out)["inputs"]["tokens"];
  std::vector<std::string> shown;
  for (const json& t : tokens) shown.push_back(attn::token_repr(t.get<std::string>()));
  CHECK(result(3).get<std::vector<std::string>>() == shown);
  check_cells(result(4), {"mha", "--text", sentence});
  const attn::LessonInfo& mha = attn::find_lesson("mha")->info;
  CHECK(result(5) == json::array({false, "live-text", "attn mha \xe2\x80\x94 " + mha.section + " " + mha.title}));
  // Enter in the seed: the seed's weights.
  CHECK(result(8) == true);
  check_cells(result(9), {"mha", "--text", sentence, "--seed", "5"});
  // A refused seed: the CLI's words inline, the steps and the address of the last good view kept.
  const Run refused = run({"mha", "--text", sentence, "--seed", "-1"});
  REQUIRE(refused.status == 2);
  CHECK(result(13).get<std::string>() + "\n" == refused.err.substr(refused.err.rfind("attn: ")));
  check_cells(result(14), {"mha", "--text", sentence, "--seed", "5"});
  CHECK(result(15) == seeded);
  // Back: the view before the seed, its controls as the address says; forward: the seed again.
  CHECK(result(17) == true);
  CHECK(result(18) == json::array({"", sentence}));
  check_cells(result(19), {"mha", "--text", sentence});
  CHECK(result(21) == true);
  CHECK(result(22) == "5");
  CHECK(result(23) == "");  // a good answer clears the refusal
  // The next lesson, chosen with the arrow key: its steps, its title, only the options it takes sent.
  CHECK(result(26) == true);
  next_args.push_back("--json");
  const json next_doc = json::parse(run(next_args).out);
  std::vector<std::string> ids;
  for (const json& step : next_doc["steps"]) ids.push_back(step["id"]);
  REQUIRE(!ids.empty());
  CHECK(result(27).get<std::vector<std::string>>() == ids);
  CHECK(result(28)[0] == result(28)[1]);
  CHECK(result(28)[0].get<std::string>().rfind("attn " + next + " ", 0) == 0);
  CHECK(result(28)[2] == next);
  CHECK(result(30) == true);
  // Slides across a redraw: the same step, then the keys move among the new steps.
  const json mha_ids = json::parse(run({"mha", "--text", sentence + " again", "--seed", "5", "--json"}).out)["steps"];
  const std::string last_id = mha_ids.back()["id"];
  CHECK(result(33) == json::array({"#slide=" + last_id, last_id}));
  CHECK(result(35) == true);
  CHECK(result(36) == json::array({true, "#slide=" + last_id, 1, last_id}));
  CHECK(result(39) == json::array({"#slide=0", "0", "mha - step 0 of " + std::to_string(mha_ids.size())}));
  CHECK(result(46) == json::array({"-1", result(13), false, "attn_weights"}));
  check_console(result(47), 2);  // the two refused seeds, and no error of a script
  CHECK(result(48)["console"] == json::array());
  check_cells(result(49), {"mha", "--text", sentence, "--seed", "5"});
  CHECK(result(50) == json::array({"5", sentence, "mha"}));
}

// A link whose request was refused: the bar and the refusal over an empty page; the first good answer fills
// it in, and the page's keys work on the steps it brings. Then the tour, chosen with End.
TEST_CASE("live page in Chromium: a refused link shows the refusal and fills in on the first good answer", "[live][browser]") {
  NEED_CHROMIUM();
  attn_test::Scratch s;
  const Run refused = run({"mha", "--seed", "-1"});
  REQUIRE(refused.status == 2);
  std::string error = refused.err.substr(refused.err.rfind("attn: "));
  error.pop_back();  // the line feed
  REQUIRE(attn::live_bar(attn::command_line_front_end(), "mha", {}, "", false).choices.back() == "tour");

  const json actions = json::array({
      {{"do", "load"}, {"url", "{server}/?lesson=mha&seed=-1"}},  // 0
      eval("[document.getElementById('live-error').textContent, document.querySelector('main').children.length,"
           " document.getElementById('live-seed').value, document.title]"),  // 1
      eval("document.activeElement.blur()"), keys({"s", "ArrowRight"}),  // 2-3
      eval("[document.body.classList.contains('slides'), document.getElementById('mode').getAttribute('aria-pressed')]"),  // 4
      focus("#live-lesson"), keys({"Tab"}), eval("document.activeElement.id"),  // 5-7
      eval("document.getElementById('live-seed').value = ''"), type("#live-seed", "5"), keys({"Enter"}),  // 8-10
      settled("?lesson=mha&seed=5"),  // 11
      eval("[Array.from(document.querySelectorAll('main section.step')).map(function (s) { return s.dataset.step; }),"
           " document.getElementById('live-error').textContent, document.title]"),  // 12
      eval("document.activeElement.blur()"), keys({"s", "ArrowRight"}),  // 13-14
      eval("[document.getElementById('counter').textContent, location.hash, document.querySelector('main section.slide.current').dataset.step]"),  // 15
      focus("#live-lesson"), keys({"End"}), settled("?lesson=tour"),  // 16-18
      eval("[document.body.dataset.tour, document.title, location.hash, document.querySelector('main section.slide.current').dataset.step,"
           " Array.from(document.querySelectorAll('main section.step')).map(function (s) { return s.dataset.lesson + '/' + s.dataset.step; })]"),  // 19
      {{"do", "console"}},  // 20
  });
  const json out = drive_served(s, actions);
  check_console(out[0]["console"], 1);  // the page itself comes with the refusal's status, 400
  const attn::LessonInfo& mha = attn::find_lesson("mha")->info;
  CHECK(out[1] == json::array({error, 0, "-1", "attn"}));
  CHECK(out[4] == json::array({false, "false"}));  // no steps: the page's keys have nothing to show
  CHECK(out[7] == "live-text");                    // Tab: from the lesson to the text box
  CHECK(out[11] == true);
  std::vector<std::string> ids;
  const json seeded = json::parse(run({"mha", "--seed", "5", "--json"}).out);
  for (const json& step : seeded["steps"]) ids.push_back(step["id"]);
  CHECK(out[12] == json::array({ids, "", "attn mha \xe2\x80\x94 " + mha.section + " " + mha.title}));
  CHECK(out[15] == json::array({"mha - step 1 of " + std::to_string(ids.size()), "#slide=" + ids.front(), ids.front()}));
  // The tour: every lesson's steps; on the same step, now named LESSON/ID.
  CHECK(out[18] == true);
  const json tour = json::parse(run({"tour", "--json"}).out);
  std::vector<std::string> tour_ids;
  std::string first_lesson_with_it;
  for (const json& lesson : tour["lessons"])
    for (const json& step : lesson["steps"]) {
      tour_ids.push_back(lesson["lesson"].get<std::string>() + "/" + step["id"].get<std::string>());
      if (first_lesson_with_it.empty() && step["id"] == ids.front()) first_lesson_with_it = lesson["lesson"];
    }
  REQUIRE(!first_lesson_with_it.empty());
  CHECK(out[19][0] == "1");
  CHECK(out[19][1].get<std::string>().rfind("attn tour: ", 0) == 0);
  CHECK(out[19][2] == "#slide=" + first_lesson_with_it + "/" + ids.front());
  CHECK(out[19][3] == ids.front());
  CHECK(out[19][4].get<std::vector<std::string>>() == tour_ids);
  check_console(out[20], 0);
}

// Text from outside in the bar (a link's text holding ESC, DEL, a C1 CSI, a right-to-left override and an
// isolate): each box shows it as the page shows every text from outside, visible(), whether the server filled
// the box (a link, a reload) or the script did (back and forward), and the view is the text's own.
TEST_CASE("live page in Chromium: a box shows text from outside as visible() does whether the server or the script filled it",
          "[live][browser][hostile]") {
  NEED_CHROMIUM();
  attn_test::Scratch s;
  const std::string hostile = "a\x1b[2J b\x7f c\xc2\x9b" "31m \xe2\x80\xae" "d \xe2\x81\xa6" "e";
  const char* const text_js = "document.getElementById('live-text').value";
  const char* const idle = "!document.getElementById('live').hasAttribute('aria-busy')";
  // simple's page, whose size keeps the browser quick; a second view, the Russian one, to go back from.
  const json actions = json::array({
      {{"do", "load"}, {"url", "{server}/?lesson=simple&text=" + encoded(hostile)}}, eval(text_js), eval(kTokensJs),  // 0-2
      eval("(function () { var l = document.getElementById('live-lang'); l.value = 'ru';"
           " l.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"),  // 3
      wait("location.search.indexOf('&lang=ru') > 0 && " + std::string(idle)),  // 4
      // the Russian view asked for the text itself, not for what the box shows of it
      eval("new URLSearchParams(location.search).get('text')"), eval(kTokensJs),  // 5-6
      eval("history.back()"),  // 7
      wait("document.getElementById('live-lang').value === '' && " + std::string(idle)),  // 8
      eval(text_js), eval(kTokensJs),  // 9-10
      eval("(function () { var l = document.getElementById('live-lang'); l.value = 'ru';"
           " l.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"),  // 11
      wait("location.search.indexOf('&lang=ru') > 0 && " + std::string(idle)),  // 12
      eval("new URLSearchParams(location.search).get('text')"), {{"do", "console"}},  // 13-14
  });
  const json out = drive_served(s, actions);
  check_console(out[0]["console"], 0);
  const json doc = json::parse(run({"simple", "--text", hostile, "--json"}).out);
  std::vector<std::string> tokens;
  for (const json& t : doc["inputs"]["tokens"]) {
    // The JSON writes a piece of a character as "\\xNN" (bytes.decode's backslashreplace); the text holds no
    // backslash, so each one starts such a byte.
    std::string bytes = t.get<std::string>();
    for (std::size_t at = bytes.find("\\x"); at != std::string::npos; at = bytes.find("\\x", at + 1))
      bytes.replace(at, 4, 1, static_cast<char>(std::stoi(bytes.substr(at + 2, 2), nullptr, 16)));
    tokens.push_back(attn::token_repr(bytes));
  }
  REQUIRE(tokens.size() == 19);
  const std::string shown = "a\\x1b[2J b\\x7f c\\xc2\\x9b31m \\u{202e}d \\u{2066}e";
  REQUIRE(attn::visible(hostile) == shown);
  CHECK(out[1] == shown);  // filled by the server
  CHECK(out[2].get<std::vector<std::string>>() == tokens);
  CHECK(out[4] == true);
  CHECK(out[5] == hostile);  // another control changed: the box's own text sent, not what it shows
  CHECK(out[6].get<std::vector<std::string>>() == tokens);
  CHECK(out[8] == true);
  CHECK(out[9] == shown);  // filled by the script, from the address
  CHECK(out[10].get<std::vector<std::string>>() == tokens);  // the view of the address's own text, as a reload
  CHECK(out[12] == true);
  CHECK(out[13] == hostile);  // and after the script filled it
  check_console(out[14], 0);
}

TEST_CASE("live page in Chromium: the bar's language list redraws the page in Russian, and the address keeps it",
          "[live][browser][translation]") {
  NEED_CHROMIUM();
  attn_test::Scratch s;
  const std::string words =
      "[document.documentElement.lang, document.querySelector('main section.step .title').textContent,"
      " document.getElementById('mode').textContent, document.getElementById('theme').textContent,"
      " document.querySelector('nav.toc h2').textContent, document.getElementById('live-lang').value]";
  const std::string bar_words =
      "[document.documentElement.lang, document.body.classList.contains('slides'), document.getElementById('mode').textContent,"
      " document.querySelector('#live button[type=submit]').textContent, document.getElementById('live').getAttribute('aria-label'),"
      " document.getElementById('live-seed').getAttribute('placeholder'), document.getElementById('live-lang').options[0].textContent]";
  const json actions = json::array({
      {{"do", "load"}, {"url", "{server}/?lesson=simple"}},  // 0
      eval(words),                                           // 1
      eval("(function () { var l = document.getElementById('live-lang'); l.value = 'ru';"
           " l.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"),  // 2
      settled("?lesson=simple&lang=ru"),  // 3
      eval(words),                        // 4
      {{"do", "load"}, {"url", "{server}/?lesson=simple&lang=ru"}},  // 5: a link to the Russian page
      eval(words),                                                   // 6
      {{"do", "console"}},                                           // 7
      // On a slide, the same switch: the mode button says the new page's word for leaving the slides, and the
      // bar's own words (its button, a default in words) follow the page's language.
      {{"do", "load"}, {"url", "{server}/?lesson=mha"}},  // 8
      eval("(function () { document.getElementById('mode').click(); return document.body.classList.contains('slides'); })()"),  // 9
      eval(bar_words),                                                                                                  // 10
      eval("(function () { var l = document.getElementById('live-lang'); l.value = 'ru';"
           " l.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"),  // 11
      settled("?lesson=mha&lang=ru"),  // 12
      eval(bar_words),                 // 13
      {{"do", "console"}},             // 14
  });
  const json out = drive_served(s, actions);
  const json ru = json::parse(run({"simple", "--lang", "ru", "--json"}).out);
  const json en = json::parse(run({"simple", "--json"}).out);
  CHECK(out[1] == json::array({"en", en["steps"][0]["title"], "Slides", out[1][3], "Contents", ""}));
  CHECK(out[3] == true);
  const json russian = json::array({"ru", ru["steps"][0]["title"], "Слайды", out[4][3], "Содержание", "ru"});
  CHECK(out[4] == russian);
  CHECK((out[4][3] == "Тёмная тема" || out[4][3] == "Светлая тема"));  // the theme button, in the new words
  CHECK(out[6] == russian);
  check_console(out[7], 0);
  CHECK(out[9] == true);
  CHECK(out[10] == json::array({"en", true, "Document", "Recompute", "Recompute the lesson", "the book's", "from the environment"}));
  CHECK(out[12] == true);
  CHECK(out[13] == json::array({"ru", true, "Документ", "Пересчитать", "Пересчитать урок", "как в книге", "из окружения"}));
  check_console(out[14], 0);
}
