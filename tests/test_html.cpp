// --format html and --format svg: the page and the figure as files (self-contained, escaped, the same
// characters and numbers as the text and JSON output), then the page in a real browser: Debian's Chromium,
// headless, with networking off, driven by tests/browser/drive.py (python3-selenium, chromium-driver).
// The browser cases are skipped (as skips: support.hpp's need_program) only where Chromium or its driver
// is missing; the test command installs them, and under CI=true a missing one fails.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/terminal_text.hpp"
#include "render/figure.hpp"
#include "support.hpp"

using attn_test::quote;
using attn_test::run;
using attn_test::Run;
using attn_test::Scratch;
using attn_test::shell;
using nlohmann::json;

namespace {

#define NEED_CHROMIUM()                                                  \
  attn_test::need_program("/usr/bin/chromium", "chromium");              \
  attn_test::need_program("/usr/bin/chromedriver", "chromium-driver")

// Writes what `attn ARGS` prints to DIR/NAME and returns its file:// address.
std::string page(const Scratch& s, const std::string& name, const std::vector<std::string>& args) {
  const Run r = run(args);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  s.file(name, r.out);
  return "file://" + s.dir + "/" + name;
}

// Runs the actions in Chromium (tests/browser/drive.py) and returns one result per action.
json drive(const Scratch& s, const json& actions) {
  const std::string request = s.file("request.json", actions.dump());
  const Run r = shell("/usr/bin/python3 " + quote(ATTN_TESTS_DIR "/browser/drive.py") + " " + quote(request));
  INFO("drive.py's output: " << r.out);
  INFO("drive.py's errors: " << r.err);
  REQUIRE(r.status == 0);
  const json results = json::parse(r.out);
  REQUIRE(results.size() == actions.size());
  return results;
}

json load(const std::string& url) { return {{"do", "load"}, {"url", url}}; }
json eval(const std::string& js) { return {{"do", "eval"}, {"js", js}}; }
json keys(const std::vector<std::string>& k) { return {{"do", "keys"}, {"keys", k}}; }

json lesson_json(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.push_back("--json");
  const Run r = run(a);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

// "lesson/step" for every step of the JSON output (a lesson's, or the tour's "lessons").
std::vector<std::string> step_ids(const json& doc) {
  std::vector<std::string> ids;
  const auto add = [&](const json& lesson) {
    for (const json& s : lesson["steps"]) ids.push_back(lesson["lesson"].get<std::string>() + "/" + s["id"].get<std::string>());
  };
  if (doc.contains("lessons")) {
    for (const json& l : doc["lessons"]) add(l);
  } else {
    add(doc);
  }
  return ids;
}

const char* const kStepIdsJs =
    "Array.from(document.querySelectorAll('section.step')).map(function (s) { return s.dataset.lesson + '/' + s.dataset.step; })";

std::string collapse(const std::string& s) { return std::regex_replace(s, std::regex("\\s+"), " "); }

// Tokens that would be markup, or script, if any reached the page unescaped.
const std::vector<std::string> kHostile = {"<script>window.pwned=1</script>", "<img src=x onerror=\"window.pwned=2\">",
                                           "\"'><svg onload=window.pwned=3>", "</pre><b>bold</b>", "&amp; &lt;",
                                           "]]><!--"};

std::string hostile_file(const Scratch& s) {
  json doc;
  doc["tokens"] = kHostile;
  doc["embeddings"] = json::array();
  for (std::size_t i = 0; i < kHostile.size(); ++i) doc["embeddings"].push_back({0.1 * i, 0.5, -0.2 * i});
  return s.file("<b>hostile.json", doc.dump());
}

}  // namespace

TEST_CASE("html: one self-contained page with every step, its code, and its tensor as the text view prints it", "[html]") {
  const Run r = run({"all-tokens", "--format", "html"});
  REQUIRE(r.status == 0);
  const std::string& html = r.out;
  CHECK(html.rfind("<!DOCTYPE html>\n", 0) == 0);
  CHECK(html.find("</html>\n") == html.size() - 8);
  // Nothing from elsewhere: no address, no linked file, no import; the policy forbids any request.
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(std::regex_search(html, std::regex("url\\((?!#)")) == false);
  CHECK(html.find("content=\"default-src 'none';") != std::string::npos);
  // Every step, in order, with its title and its tensor exactly as the text view prints it.
  const json doc = lesson_json({"all-tokens"});
  std::size_t at = 0;
  for (const json& s : doc["steps"]) {
    const std::string id = s["id"];
    const std::size_t found = html.find("id=\"step-all-tokens-" + id + "\"", at);
    REQUIRE(found != std::string::npos);
    at = found;
    CHECK(html.find(attn::html_escape(s["title"].get<std::string>()), at) != std::string::npos);
    const Run text = run({"all-tokens", "--quiet", "--step", id});
    const std::string tensor = text.out.substr(id.size() + 1, text.out.size() - id.size() - 2);
    CHECK(html.find("<pre class=\"tensor\">" + tensor + "</pre>", at) != std::string::npos);
  }
  // The code is highlighted, and its text is still the book's.
  CHECK(html.find("attn_weights = torch.<span class=\"f\">softmax</span>(attn_scores, dim=-<span class=\"n\">1</span>)") !=
        std::string::npos);
  CHECK(html.find("<span class=\"k\">for</span> i, x_i <span class=\"k\">in</span> <span class=\"f\">enumerate</span>(inputs):\n") !=
        std::string::npos);
  // The heatmap of the weights: 36 cells, each with its exact value and the tokens it relates.
  CHECK(html.find("aria-label=\"query 1 &#39;journey&#39;, key 1 &#39;journey&#39;: 0.23789129\"") != std::string::npos);
}

TEST_CASE("html: the tour page has a table of contents and stays small", "[html]") {
  const Run r = run({"tour", "--format", "html"});
  REQUIRE(r.status == 0);
  CHECK(r.out.size() < 2'000'000);
  CHECK(r.out.find("<nav class=\"toc\" aria-label=\"Contents\">") != std::string::npos);
  for (const std::string& id : step_ids(lesson_json({"tour"}))) {
    const std::string anchor = "step-" + id.substr(0, id.find('/')) + "-" + id.substr(id.find('/') + 1);
    CHECK(r.out.find("<a href=\"#" + anchor + "\">") != std::string::npos);
    CHECK(r.out.find("id=\"" + anchor + "\"") != std::string::npos);
  }
}

TEST_CASE("html: hostile token text and file names are escaped, never markup", "[html][hostile]") {
  Scratch s;
  const std::string file = hostile_file(s);
  const Run r = run({"causal", "--input", file, "--format", "html"});
  REQUIRE(r.status == 0);
  for (const char* raw : {"<script>window", "<img", "<svg onload", "</pre><b>", "<b>hostile"}) CHECK(r.out.find(raw) == std::string::npos);
  CHECK(r.out.find("&lt;script&gt;window.pwned=1&lt;/script&gt;") != std::string::npos);
  CHECK(r.out.find("&lt;b&gt;hostile.json") != std::string::npos);
  CHECK(r.out.find("&amp;amp; &amp;lt;") != std::string::npos);
  // The one script is the page's own.
  std::size_t scripts = 0;
  for (std::size_t at = r.out.find("<script"); at != std::string::npos; at = r.out.find("<script", at + 1)) ++scripts;
  CHECK(scripts == 1);
}

TEST_CASE("svg: one figure, chosen with --step, with a size, a title, labels, a legend and the JSON's numbers", "[html][svg][e2e]") {
  const Run r = run({"causal", "--format", "svg", "--step", "causal_attn_weights"});
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", 0) == 0);
  CHECK(r.out.find("<title id=\"attn-title\">causal_attn_weights") != std::string::npos);
  CHECK(r.out.find("class=\"legend\"") != std::string::npos);
  CHECK(r.out.find(">journey</text>") != std::string::npos);
  CHECK(r.out.find(">keys \xe2\x86\x92</text>") != std::string::npos);     // the axes' names
  CHECK(r.out.find(">queries \xe2\x86\x93</text>") != std::string::npos);
  // Well-formed XML, and its cells hold the JSON's values (masked ones said to be masked).
  Scratch s;
  const std::string file = s.file("w.svg", r.out);
  const Run parsed = shell("/usr/bin/python3 -c " +
                           quote("import sys, xml.etree.ElementTree as E\n"
                                 "for e in E.parse(sys.argv[1]).iter('{http://www.w3.org/2000/svg}rect'):\n"
                                 "    if e.get('class') == 'cell': print(e.get('data-q'), e.get('data-k'), e.get('data-value'))\n") +
                           " " + quote(file));
  REQUIRE(parsed.status == 0);
  const json data = lesson_json({"causal", "--step", "causal_attn_weights"})["steps"][0]["data"];
  std::istringstream cells(parsed.out);
  std::size_t q, k, n = 0;
  std::string value;
  while (cells >> q >> k >> value) {
    ++n;
    if (k > q) {
      CHECK(value == "masked");
    } else {
      CHECK(std::stof(value) == data[q][k].get<float>());
    }
  }
  CHECK(n == 36);
  // Every head of a multi-head step, and a small tensor as a table.
  const Run mha = run({"mha", "--format", "svg", "--step", "attn_weights"});
  REQUIRE(mha.status == 0);
  CHECK(mha.out.find("batch 0 of 2, head 1") != std::string::npos);
  const Run table = run({"trainable", "--format", "svg", "--step", "keys"});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("shape (6, 2); rows are tokens") != std::string::npos);
}

TEST_CASE("svg: a run that does not name one drawable step is a usage error that lists the drawable ones", "[html][svg]") {
  const Run none = run({"causal", "--format", "svg"});
  CHECK(none.status == 2);
  CHECK(none.out.empty());
  CHECK(none.err.find("--format svg draws one figure; choose it with --step ID. attn causal can draw: ") != std::string::npos);
  CHECK(none.err.find("causal_attn_weights") != std::string::npos);
  const Run two = run({"causal", "--format", "svg", "--step", "attn_weights", "--step", "mask_simple"});
  CHECK(two.status == 2);
  CHECK(two.err.find("draws one figure") != std::string::npos);
  const Run scalar = run({"simple", "--format", "svg", "--step", "res"});
  CHECK(scalar.status == 2);
  CHECK(scalar.err.find("--format svg cannot draw res (a single number)") != std::string::npos);
  const Run big = run({"all-tokens", "--random", "20x3", "--format", "svg", "--step", "inputs"});
  CHECK(big.status == 2);
  CHECK(big.err.find("cannot draw inputs (shape (20, 3))") != std::string::npos);
  const Run tour = run({"tour", "--format", "svg"});
  CHECK(tour.status == 2);
  CHECK(tour.err.find("--format svg draws one figure: give one lesson and --step ID") != std::string::npos);
}

TEST_CASE("html in Chromium: every lesson's page and the tour load offline, without a console error, with every step",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  std::vector<std::string> names = attn_test::lesson_names();
  names.push_back("tour");
  json actions = json::array();
  for (const std::string& name : names) {
    actions.push_back(load(page(s, name + ".html", {name, "--format", "html"})));
    actions.push_back(eval(kStepIdsJs));
  }
  // One step's numbers, read from the page's heatmap cells, and its printed tensor.
  actions.push_back(load("file://" + s.dir + "/all-tokens.html"));
  actions.push_back(eval("Array.from(document.querySelectorAll('#step-all-tokens-attn_weights rect.cell'))"
                         ".map(function (c) { return [+c.dataset.q, +c.dataset.k, c.dataset.value]; })"));
  actions.push_back(eval("document.querySelector('#step-all-tokens-attn_weights pre.tensor').textContent"));
  const json results = drive(s, actions);
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(results[2 * i]["console"] == json::array());
    CHECK(results[2 * i]["resources"] == json::array());
    CHECK(results[2 * i + 1].get<std::vector<std::string>>() == step_ids(lesson_json({names[i]})));
  }
  const json data = lesson_json({"all-tokens", "--step", "attn_weights"})["steps"][0]["data"];
  const json& cells = results[results.size() - 2];
  REQUIRE(cells.size() == 36);
  for (const json& c : cells) CHECK(std::stof(c[2].get<std::string>()) == data[c[0].get<int>()][c[1].get<int>()].get<float>());
  const Run text = run({"all-tokens", "--quiet", "--step", "attn_weights"});
  CHECK("attn_weights\n" + results.back().get<std::string>() + "\n" == text.out);
}

TEST_CASE("html in Chromium: slides follow the keys, and the address opens a step", "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string url = page(s, "causal.html", {"causal", "--format", "html"});
  const json ids = lesson_json({"causal"});
  const std::size_t slides = 1 + ids["steps"].size();  // the lesson's first slide, then one per step
  const std::string where =
      "[location.hash, (document.querySelector('section.slide.current') || {}).id || '',"
      " Array.from(document.querySelectorAll('section.slide')).filter(function (e) { return e.offsetParent !== null; }).length,"
      " document.getElementById('counter').textContent]";
  const json r = drive(s, json::array({load(url + "#slide-4"), eval(where),           //
                                       keys({"ArrowRight", "PageDown", "Space"}), eval(where),  //
                                       keys({"ArrowLeft", "PageUp"}), eval(where),        //
                                       keys({"End"}), eval(where), keys({"Home"}), eval(where),  //
                                       keys({"ArrowLeft"}), eval(where),                  //
                                       keys({"Escape"}), eval(where),                     //
                                       {{"do", "click"}, {"css", "#mode"}}, eval(where)}));
  const auto step_at = [&](std::size_t slide) {  // the element id of slide k (1-based)
    return slide == 1 ? std::string("lesson-causal") : "step-causal-" + ids["steps"][slide - 2]["id"].get<std::string>();
  };
  const auto expect = [&](const json& got, std::size_t slide) {
    CHECK(got[0] == "#slide-" + std::to_string(slide));
    CHECK(got[1] == step_at(slide));
    CHECK(got[2] == 1);  // one slide on the screen
    CHECK(got[3] == "slide " + std::to_string(slide) + " of " + std::to_string(slides));
  };
  expect(r[1], 4);
  expect(r[3], 7);
  expect(r[5], 5);
  expect(r[7], slides);
  expect(r[9], 1);
  expect(r[11], 1);  // no slide before the first
  // Escape: the scrolling document again, every slide shown, the address at the step that was on screen.
  CHECK(r[13][0] == "#lesson-causal");
  CHECK(r[13][2] == slides);
  CHECK(r[15][2] == 1);  // the Slides button: slides again
}

TEST_CASE("html in Chromium: the heatmap is drawn, each cell in the legend's colour for its value (whole matrix or by row), "
          "and read on hover and focus",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string url = page(s, "causal.html", {"causal", "--format", "html"});
  const json data = lesson_json({"causal", "--step", "causal_attn_weights"})["steps"][0]["data"];
  const std::string map = "#step-causal-causal_attn_weights ";
  // Every cell of the weights, then the legend's first and last colour, then a masked cell.
  std::vector<std::string> css;
  for (int q = 0; q < 6; ++q)
    for (int k = 0; k <= q; ++k)
      css.push_back(map + "rect.cell[data-q=\"" + std::to_string(q) + "\"][data-k=\"" + std::to_string(k) + "\"]");
  css.push_back(map + "rect.swatch:first-of-type");
  css.push_back(map + ".legend rect:nth-of-type(24)");
  css.push_back(map + "rect.cell[data-q=\"0\"][data-k=\"5\"]");
  const std::string readout = "document.querySelector('" + map + ".readout').textContent";
  const json r = drive(s, json::array({load(url), {{"do", "pixels"}, {"css", css}},  //
                                       {{"do", "hover"}, {"css", map + "rect.cell[data-q=\"2\"][data-k=\"1\"]"}}, eval(readout),
                                       {{"do", "focus"}, {"css", map + "rect.cell[data-q=\"0\"][data-k=\"0\"]"}},
                                       keys({"ArrowDown", "ArrowRight"}), eval(readout), eval("document.activeElement.dataset.k"),
                                       // "Each row": the same cells on their rows' own scales.
                                       {{"do", "click"}, {"css", map + "button.scale[data-scale=\"row\"]"}},
                                       {{"do", "pixels"}, {"css", css}},
                                       eval("Array.from(document.querySelectorAll('" + map +
                                            ".legend text')).map(function (t) { return t.textContent; })")}));
  const json& px = r[1]["samples"];
  CHECK(r[1]["colors"].get<int>() > 50);  // not blank
  const auto near = [](const json& got, const std::string& hex) {
    const int want[3] = {std::stoi(hex.substr(1, 2), nullptr, 16), std::stoi(hex.substr(3, 2), nullptr, 16),
                         std::stoi(hex.substr(5, 2), nullptr, 16)};
    for (int c = 0; c < 3; ++c)
      if (std::abs(got[c].get<int>() - want[c]) > 2) return false;
    return true;
  };
  std::size_t i = 0;
  for (int q = 0; q < 6; ++q)
    for (int k = 0; k <= q; ++k, ++i) {
      INFO("cell " << q << "," << k << " " << px[i].dump());
      CHECK(near(px[i], attn::palette_hex(data[q][k].get<double>())));  // the fixed scale: a weight's colour is its value's
    }
  CHECK(near(px[i], attn::palette_hex(0.0)));      // the legend starts at the palette's first colour (0)...
  CHECK(near(px[i + 1], attn::palette_hex(1.0)));  // ... and ends at its last (1)
  const json& masked = px[i + 2];
  CHECK((masked[0] == masked[1] && masked[1] == masked[2]));  // grey: no colour of the palette
  CHECK(r[3] == "query 2 'starts', key 1 'journey': " + attn::exact_number(data[2][1].get<float>()));
  CHECK(r[6] == "query 1 'journey', key 1 'journey': " + attn::exact_number(data[1][1].get<float>()));
  CHECK(r[7] == "1");
  // Each row from its own min to its max: row 0's one weight at the top, and in every other row the
  // largest weight the palette's last colour and the smallest its first.
  const json& by_row = r[9]["samples"];
  i = 0;
  for (int q = 0; q < 6; ++q) {
    float row_lo = 1.0f, row_hi = 0.0f;
    for (int k = 0; k <= q; ++k) row_lo = std::min(row_lo, data[q][k].get<float>()), row_hi = std::max(row_hi, data[q][k].get<float>());
    for (int k = 0; k <= q; ++k, ++i) {
      INFO("cell " << q << "," << k << " " << by_row[i].dump());
      const double x = q == 0 ? 1.0 : (data[q][k].get<double>() - row_lo) / (row_hi - row_lo);
      CHECK(near(by_row[i], attn::palette_hex(x)));
    }
  }
  CHECK(near(by_row[i + 1], attn::palette_hex(1.0)));  // the legend itself is the same palette
  CHECK(r[10] == json::array({"row min", "row max", "masked (a future key)", "colours: each row from its own min to its max"}));
}

TEST_CASE("html in Chromium: printed to PDF, the handout has every step's title and no navigation", "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const json r = drive(s, json::array({load(page(s, "tour.html", {"tour", "--format", "html"})), {{"do", "pdf"}}}));
  const std::string text = collapse(r[1].get<std::string>());
  const json tour = lesson_json({"tour"});
  std::size_t titles = 0;
  for (const json& lesson : tour["lessons"])
    for (const json& step : lesson["steps"]) {
      INFO(step["title"].get<std::string>());
      CHECK(text.find(collapse(step["id"].get<std::string>() + " " + step["title"].get<std::string>())) != std::string::npos);
      ++titles;
    }
  CHECK(titles > 80);
  CHECK(text.find("Dark theme") == std::string::npos);
  CHECK(text.find("Contents") == std::string::npos);
  CHECK(text.find("Point at a cell") == std::string::npos);
}

TEST_CASE("html in Chromium: hostile token text stays text", "[html][browser][hostile]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string url = page(s, "hostile.html", {"causal", "--input", hostile_file(s), "--format", "html"});
  const json r = drive(s, json::array({load(url), {{"do", "alert"}}, eval("typeof window.pwned"),
                                       eval("[document.scripts.length, document.querySelectorAll('img, b, iframe, object, embed').length,"
                                            " document.querySelectorAll('svg[onload]').length]"),
                                       eval("Array.from(document.querySelectorAll('#step-causal-attn_weights text.query'))"
                                            ".map(function (t) { return t.textContent; })"),
                                       eval("Array.from(document.querySelectorAll('#lesson-causal code.tok'))"
                                            ".map(function (t) { return t.textContent; })")}));
  CHECK(r[0]["console"] == json::array());
  CHECK(r[1] == false);
  CHECK(r[2] == "undefined");
  CHECK(r[3] == json::array({1, 0, 0}));
  std::vector<std::string> clipped;
  for (const std::string& t : kHostile) clipped.push_back(attn::display_width(t) <= 12 ? t : attn::clip_to_width(t, 11) + "\xe2\x80\xa6");
  CHECK(r[4].get<std::vector<std::string>>() == clipped);
  CHECK(r[5].get<std::vector<std::string>>() == kHostile);
}

TEST_CASE("html in Chromium: light and dark follow the system, and the button switches", "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string url = page(s, "simple.html", {"simple", "--format", "html"});
  const std::string bg = "getComputedStyle(document.body).backgroundColor";
  const json click = {{"do", "click"}, {"css", "#theme"}};
  const json r = drive(s, json::array({{{"do", "dark"}, {"value", false}}, load(url), eval(bg), click, eval(bg),
                                       {{"do", "dark"}, {"value", true}}, load(url), eval(bg), click, eval(bg),
                                       eval("document.getElementById('theme').textContent")}));
  CHECK(r[2] == "rgb(255, 255, 255)");
  CHECK(r[4] == "rgb(21, 23, 26)");
  CHECK(r[7] == "rgb(21, 23, 26)");
  CHECK(r[9] == "rgb(255, 255, 255)");
  CHECK(r[10] == "Dark theme");
}

TEST_CASE("pages and figures stay well-formed XML whatever the tokens hold", "[html][svg][e2e]") {
  // Tokens with every kind of character XML 1.0 forbids (U+FFFF once made --format svg write a figure
  // xmllint refused: "Char 0xFFFF out of allowed range"), a NUL, other C0 controls, markup, and text
  // whose bytes split characters (--text's byte tokens).
  Scratch s;
  const std::string input = s.file("hostile.json",
                                   "{\"tokens\": [\"a\\uffff\", \"b\\ufffe\", \"c\\u0001\\u000b\\u001f\", \"e\\u0000f\", "
                                   "\"<x&>'\\\"\", \"\\ud7ff\\ue000\\ufffd\"], \"embeddings\": [[1,2],[3,4],[5,6],[7,8],"
                                   "[9,1],[2,3]]}");
  std::vector<std::string> svgs, pages;
  const auto save = [&](const std::string& name, const std::vector<std::string>& args, std::vector<std::string>& into) {
    const Run r = run(args);
    INFO(name << ": " << r.err);
    REQUIRE(r.status == 0);
    into.push_back(s.file(name, r.out));
  };
  for (const auto& lesson : attn::lessons()) {
    const std::string name = lesson.info.name;
    save(name + ".html", {name, "--input", input, "--format", "html"}, pages);
    for (const std::string& lesson_step : step_ids(lesson_json({name, "--input", input}))) {
      const std::string id = lesson_step.substr(lesson_step.find('/') + 1);
      const Run figure = run({name, "--input", input, "--format", "svg", "--step", id});
      if (figure.status == 0) svgs.push_back(s.file(name + "-" + id + ".svg", figure.out));
    }
  }
  save("tour.html", {"tour", "--input", input, "--format", "html"}, pages);
  save("text.html", {"causal", "--text", "\xef\xbf\xbf \xef\xbf\xbe x\x01y \xf0\x9f\xa6\x99\xf0\x9f\xa7\xbf", "--format", "html"}, pages);
  save("text.svg", {"causal", "--text", "\xef\xbf\xbf \xef\xbf\xbe x\x01y", "--format", "svg", "--step", "causal_attn_weights"},
       svgs);
  CHECK(svgs.size() >= 20);
  // Each figure parsed by a real XML parser; each page (HTML, not XML) holds only characters XML allows,
  // and the figures inside it parse as XML too.
  std::string files;
  for (const auto& f : svgs) files += " svg:" + quote(f);
  for (const auto& f : pages) files += " html:" + quote(f);
  const Run parsed = shell("/usr/bin/python3 -c " + quote(R"(import re, sys, xml.etree.ElementTree as E
bad = re.compile('[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]')
figures = 0
for arg in sys.argv[1:]:
    kind, path = arg.split(':', 1)
    text = open(path, encoding='utf-8', errors='strict').read()
    m = bad.search(text)
    if m: sys.exit('%s: U+%04X at %d' % (path, ord(m.group()), m.start()))
    parts = [text] if kind == 'svg' else re.findall(r'<svg\b.*?</svg>', text, re.S)
    for part in parts:
        E.fromstring(part.split('?>', 1)[1] if part.startswith('<?xml') else part)
        figures += 1
print(figures)
)") + files);
  INFO(parsed.err);
  REQUIRE(parsed.status == 0);
  CHECK(std::stoul(parsed.out) >= svgs.size() + pages.size());  // every page draws at least one figure
  // What the figures show for the forbidden characters: the escapes a terminal shows.
  std::ifstream first(svgs.front());
  const std::string svg((std::istreambuf_iterator<char>(first)), {});
  CHECK(svg.find("a\\u{ffff}") != std::string::npos);
  CHECK(svg.find("c\\x01") != std::string::npos);  // (a long label is clipped to the figure's column)
  CHECK(svg.find("&lt;x&amp;&gt;") != std::string::npos);
}

TEST_CASE("html_escape makes every character XML forbids visible, whoever calls it", "[html]") {
  using attn::html_escape;
  CHECK(html_escape("plain <b> & 'q' \"d\"\n\ttab") == "plain &lt;b&gt; &amp; &#39;q&#39; &quot;d&quot;\n\ttab");
  CHECK(html_escape(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(html_escape("\x01\x0b\x1f\r") == "\\x01\\x0b\\x1f\r");
  CHECK(html_escape("\xef\xbf\xbf\xef\xbf\xbe\xef\xbf\xbd") == "\\u{ffff}\\u{fffe}\xef\xbf\xbd");  // U+FFFD is allowed
  CHECK(html_escape("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate's bytes: not UTF-8
  CHECK(html_escape("\xc3") == "\\xc3");
  CHECK(html_escape("\xf0\x9f\x98\x80 \xe2\x80\xae") == "\xf0\x9f\x98\x80 \xe2\x80\xae");  // XML allows them (markup() hides bidi)
  CHECK(attn::visible("\xef\xbf\xbf") == "\\u{ffff}");  // and a terminal shows them the same way
}
