// attn serve's live page (render/live_page.hpp): the html page of a lesson, as --format html writes it, with
// the control bar after its header, the live script once, and a policy that allows connect-src 'self' and
// nothing else; every value, refusal and help text from outside escaped; and the page of a refused request.
// The bar here is made as the server makes it, from the option table and the registry (no list of options
// or lessons of the test's own); each lesson's default is a made-up text, so a placeholder names its lesson.
#include <catch2/catch.hpp>

#include <map>
#include <regex>

#include "cli/options.hpp"
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

TEST_CASE("live page: the html page with the bar after its header, one control per option, the live script once",
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
    // Each control has its visible label: the option's name.
    CHECK(form.find("<label" + std::string(c.key == "text" ? " class=\"wide\"" : "") + ">" + c.key + " <input id=\"live-" + c.key) !=
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

TEST_CASE("live page: the values shown and the refusal are escaped, whatever they hold", "[live][hostile]") {
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

TEST_CASE("live page: a refused request gives a page of the bar and the refusal, in the page's style", "[live]") {
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

TEST_CASE("live page: the tour is a choice like a lesson, with the controls the tour takes", "[live]") {
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
