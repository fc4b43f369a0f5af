// --format html and --format svg: the page and the figure as files (self-contained, escaped, the same
// characters and numbers as the text and JSON output), then the page in a real browser: Debian's Chromium,
// headless, with networking off, driven by tests/browser/drive.py (python3-selenium, chromium-driver).
// The browser cases are skipped (as skips: support.hpp's need_program) only where Chromium or its driver
// is missing; the test command installs them, and under CI=true a missing one fails.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <xtensor/xmanipulation.hpp>

#include "core/terminal_text.hpp"
#include "inputs/embeddings.hpp"
#include "lessons/registry.hpp"
#include "render/figure.hpp"
#include "render/renderer.hpp"
#include "gpt2_model.hpp"
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


// attn heads' steps, made by hand until the lesson lands: two layers of overview steps (heads, T, T) from
// mha's attn_weights (batch 0), with a few words under each head, in a page of their own.
attn::Document overview_document() {
  const attn::Inputs in = attn::load_embeddings(attn::default_embeddings_path());
  attn::Document doc;
  doc.command = "mha";
  for (const auto& lesson : attn::lessons())
    if (lesson.info.name == "mha") doc.sections.push_back(lesson.modes.front().run(in, lesson.modes.front().defaults, {}));
  REQUIRE(doc.sections.size() == 1);
  attn::Section& t = doc.sections.front();
  const auto found = std::find_if(t.steps.begin(), t.steps.end(), [](const attn::Step& s) { return s.id == "attn_weights"; });
  REQUIRE(found != t.steps.end());
  std::vector<attn::Step> layers;
  for (int layer = 0; layer < 2; ++layer) {
    attn::Step o = *found;
    o.id = "layer_" + std::to_string(layer);
    o.title = "Every head of layer " + std::to_string(layer);
    o.tensor = xt::view(found->tensor, 0);  // (heads, T, T)
    if (layer == 1) o.tensor = xt::flip(o.tensor, 0);
    o.shape = {2, 6, 6};
    o.overview = true;
    o.head_notes = layer == 0 ? std::vector<std::string>{"mostly first token", "mostly <self>"}
                              : std::vector<std::string>{"mostly <self>", "mostly first token"};
    layers.push_back(o);
  }
  t.steps = {layers[0], layers[1], *found};
  return doc;
}

std::string html_of(const attn::Document& doc) { return attn::join(attn::find_format("html")->make({})->render(doc)); }
std::string svg_of(const attn::Document& doc) { return attn::join(attn::find_format("svg")->make({})->render(doc)); }

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
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
  // The token "&amp; &lt;" as every token is shown (token_repr: '&amp;␣&lt;'), then escaped.
  CHECK(r.out.find("&#39;&amp;amp;\xe2\x90\xa3&amp;lt;&#39;") != std::string::npos);
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
  CHECK(r.out.find(">&#39;journey&#39;</text>") != std::string::npos);  // 'journey', as every token is shown
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

TEST_CASE("html: a step's figure comes before its printed tensor, numbered as [k/n], a hint said once", "[html]") {
  const Run r = run({"mha", "--format", "html"});
  REQUIRE(r.status == 0);
  const std::string& html = r.out;
  const json doc = lesson_json({"mha"});
  const std::size_t n = doc["steps"].size();
  CHECK(html.find("id=\"lesson-mha\" data-lesson=\"mha\" data-step=\"0\" data-k=\"0\" data-n=\"" + std::to_string(n) + "\"") !=
        std::string::npos);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string id = doc["steps"][i]["id"];
    INFO(id);
    const std::size_t at = html.find("id=\"step-mha-" + id + "\"");
    REQUIRE(at != std::string::npos);
    const std::size_t end = html.find("</section>", at);
    const std::string section = html.substr(at, end - at);
    CHECK(section.find("data-k=\"" + std::to_string(i + 1) + "\" data-n=\"" + std::to_string(n) + "\"") != std::string::npos);
    CHECK(section.find("[" + std::to_string(i + 1) + "/" + std::to_string(n) + "]") != std::string::npos);
    const std::size_t figure = section.find("<figure"), tensor = section.find("<pre class=\"tensor\">");
    REQUIRE(tensor != std::string::npos);
    if (figure != std::string::npos) CHECK(figure < tensor);
  }
  // mha's attn_weights, (2, 2, 6, 6): a grid of two heads, each a button that enlarges it, and their lines.
  const std::size_t at = html.find("id=\"step-mha-attn_weights\"");
  const std::string section = html.substr(at, html.find("</section>", at) - at);
  CHECK(html.find("<section class=\"slide step has-figure\" id=\"step-mha-attn_weights\"") != std::string::npos);
  CHECK(count(section, "<div class=\"head\" tabindex=\"0\" role=\"button\" aria-expanded=\"false\"") == 2);
  CHECK(count(section, "<g class=\"head-lines\" data-head=\"") == 2);
  CHECK(count(section, "class=\"head-toggle\"") == 2);
  CHECK(count(section, "<line ") == 2 * 21);  // the 21 cells on and under the diagonal of each head
  CHECK(count(section, "class=\"tok q\"") == 6);
  CHECK(count(section, "class=\"tok k\"") == 6);
  const json weights = lesson_json({"mha", "--step", "attn_weights"})["steps"][0]["data"][0];
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 6; ++q)
      for (int k = 0; k <= q; ++k) {
        char op[16];
        std::snprintf(op, sizeof op, "%.3f", weights[h][q][k].get<double>());
        CHECK(section.find("stroke-opacity=\"" + std::string(op) + "\" vector-effect=\"non-scaling-stroke\" data-head=\"" +
                           std::to_string(h) + "\" data-q=\"" + std::to_string(q) + "\" data-k=\"" + std::to_string(k) + "\"") !=
              std::string::npos);
      }
  // Said once per lesson, not under every figure.
  CHECK(count(html, "<p class=\"hint\">") == 1);
  CHECK(html.find("Point at a cell") == std::string::npos);
  // The tour: once per lesson with a figure, as each lesson's own page says it; a page without one (simple's
  // and trainable's, which print their tensors alone) has no hint. Some lessons of each kind are named, so
  // that the check cannot hold by every page having a figure, or none.
  const Run tour = run({"tour", "--format", "html"});
  std::size_t with_figure = 0;
  std::set<std::string> figureless;
  for (const auto& name : attn_test::lesson_names()) {
    INFO("attn " << name << " --format html");
    const std::string page = run({name, "--format", "html"}).out;
    const bool figure = page.find("<figure class=\"heatmaps") != std::string::npos;
    CHECK(count(page, "<p class=\"hint\">") == (figure ? 1 : 0));
    if (figure) ++with_figure;
    else figureless.insert(name);
  }
  for (const char* name : {"simple", "trainable"}) CHECK(figureless.count(name) == 1);
  for (const char* name : {"all-tokens", "causal", "dropout", "mha-wrapper", "mha", "heads", "gqa", "kv-cache"})
    CHECK(figureless.count(name) == 0);
  CHECK(count(tour.out, "<p class=\"hint\">") == with_figure);
}

TEST_CASE("html: the inputs' source is said without the folders of a local path", "[html]") {
  const Run r = run({"causal", "--format", "html"});
  REQUIRE(r.status == 0);
  const std::string path = attn::default_embeddings_path();
  CHECK(r.out.find(path) == std::string::npos);
  CHECK(r.out.find(path.substr(0, path.rfind('/'))) == std::string::npos);
  CHECK(r.out.find("<li>inputs: 6 tokens x 3 dims from " + path.substr(path.rfind('/') + 1) + "</li>") != std::string::npos);
  const Run text = run({"causal", "--text", "Hi there", "--format", "html"});
  CHECK(text.out.find("from --text: GPT-2&#39;s tokenizer, then nn.Embedding(50257, 3)") != std::string::npos);
}

TEST_CASE("html: overview steps of shape heads x T x T are rows of small colour-only maps, one per head, with the lesson's words "
          "under each, and consecutive ones make one model view",
          "[html]") {
  const attn::Document doc = overview_document();
  const std::string html = html_of(doc);
  // The model view is drawn with the first overview step: two layers, two heads each.
  const std::size_t first = html.find("id=\"step-mha-layer_0\"");
  const std::size_t second = html.find("id=\"step-mha-layer_1\"");
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  const std::string model = html.substr(first, second - first);
  CHECK(count(model, "<figure class=\"heatmaps overview\"") == 1);
  CHECK(count(model, "<div class=\"layer\" data-step=\"") == 2);
  CHECK(count(model, "class=\"figure fit small\"") == 4);
  CHECK(count(model, "class=\"figure fit full\"") == 4);  // enlarged with their numbers
  // Every head has its own note (no two of a layer share one), under it, escaped; the columns are named.
  CHECK(count(model, "<div class=\"note\">mostly first token</div>") == 2);
  CHECK(count(model, "<div class=\"note\">mostly &lt;self&gt;</div>") == 2);
  CHECK(count(model, "<div class=\"name\">head 0</div><div class=\"name\">head 1</div>") == 1);
  CHECK(count(model, "<div class=\"layer-name\">layer 1</div>") == 1);  // the number its id ends with
  // Small maps: colour-only cells, no numbers, no labels; the full maps keep both.
  const std::string small = model.substr(model.find("class=\"figure fit small\""));
  const std::string one = small.substr(0, small.find("</svg>"));
  CHECK(count(one, "<rect ") == 36);
  CHECK(one.find("class=\"v\"") == std::string::npos);
  CHECK(one.find("journey") == std::string::npos);
  CHECK(count(model, "class=\"v\"") == 4 * 21);
  // The colours: weights on the fixed 0..1 scale, each cell the palette's colour at its weight.
  const attn::AnyTensor& w = doc.sections[0].steps[0].tensor;  // layer 0: (heads, 6, 6)
  for (std::size_t q = 0; q < 6; ++q)
    for (std::size_t k = 0; k <= q; ++k) {
      INFO(q << "," << k);
      CHECK(one.find("fill=\"" + attn::palette_hex(w(0, q, k)) + "\"") != std::string::npos);
    }
  // The second layer's step draws its own heads as a grid of named heatmaps, with their notes; the third
  // step is an ordinary grid of heads.
  const std::string rest = html.substr(second), layer_1 = rest.substr(0, rest.find("</section>"));
  CHECK(count(layer_1, "<div class=\"layer\"") == 0);
  CHECK(count(layer_1, "<figure class=\"heatmaps grid\"") == 1);
  CHECK(count(layer_1, "<div class=\"name\">head 1<span class=\"said\">: mostly first token</span></div>") == 1);  // said when opened
  CHECK(count(layer_1, "<div class=\"note\">mostly first token</div>") == 1);
  CHECK(count(layer_1, "class=\"legend\"") == 1);  // one legend for the grid
  CHECK(count(model, ">colours: 0 to 1, the same scale for every map</text>") == 1);  // one key for the model view
  // --format svg: the heads as a grid of named heatmaps with their words, and one legend.
  attn::Document one_step = doc;
  one_step.only = {"layer_0"};
  const std::string svg = svg_of(one_step);
  CHECK(count(svg, "<g transform=\"translate(") == 3);  // two heads, then the legend
  CHECK(count(svg, "class=\"legend\"") == 1);
  CHECK(svg.find(">colours: a fixed scale, as probabilities are (here ") != std::string::npos);
  CHECK(svg.find("<g transform=\"translate(0,82)\">") != std::string::npos);  // under the caption and its name
  CHECK(svg.find(">head 0</text>") != std::string::npos);
  CHECK(svg.find(">mostly first token</text>") != std::string::npos);
}

TEST_CASE("svg: a multi-head step is a grid of about a slide's shape, its heads named, one legend, the caption once",
          "[html][svg]") {
  const std::regex placed("<g transform=\"translate\\((\\d+),(\\d+)\\)\">");
  // Where each head is drawn (the last <g> placed is the legend, at the left under the grid).
  const auto places = [&](const std::string& svg) {
    std::vector<std::pair<int, int>> out;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), placed); it != std::sregex_iterator(); ++it)
      out.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]));
    REQUIRE(!out.empty());
    CHECK(out.back().first == 0);
    CHECK(out.back().second > out.front().second);
    out.pop_back();
    return out;
  };
  const auto size = [](const std::string& svg) {
    std::smatch m;
    REQUIRE(std::regex_search(svg, m, std::regex("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"(\\d+)\" height=\"(\\d+)\"")));
    return std::pair<int, int>{std::stoi(m[1]), std::stoi(m[2])};
  };
  const Run mha = run({"mha", "--format", "svg", "--step", "attn_weights"});
  REQUIRE(mha.status == 0);
  const std::vector<std::pair<int, int>> at = places(mha.out);
  REQUIRE(at.size() == 2);
  CHECK(at[0].second == at[1].second);  // one row
  CHECK(at[1].first > at[0].first);
  CHECK(count(mha.out, "class=\"legend\"") == 1);
  CHECK(count(mha.out, ">rows are queries, columns are keys; batch 0 of 2</text>") == 1);
  CHECK(count(mha.out, "font-weight=\"bold\">head 0</text>") == 1);
  CHECK(count(mha.out, "font-weight=\"bold\">head 1</text>") == 1);
  CHECK(count(mha.out, "head 1</text>") == 1);  // no map's own caption repeats it
  const Run gqa = run({"gqa", "--format", "svg", "--step", "attn_weights"});
  const std::vector<std::pair<int, int>> g = places(gqa.out);
  REQUIRE(g.size() == 4);
  CHECK(g[0].second == g[1].second);  // two by two
  CHECK(g[2].second > g[0].second);
  CHECK(g[2].first == g[0].first);
  // Twelve heads: four across, three down, wider than tall (it was a tall stack of two columns).
  const Run twelve = run({"mha", "--d-out", "24", "--heads", "12", "--format", "svg", "--step", "attn_weights"});
  const std::vector<std::pair<int, int>> t = places(twelve.out);
  REQUIRE(t.size() == 12);
  std::set<int> xs, ys;
  for (const auto& [x, y] : t) xs.insert(x), ys.insert(y);
  CHECK(xs.size() == 4);
  CHECK(ys.size() == 3);
  CHECK(size(twelve.out).first > size(twelve.out).second);
  CHECK(count(twelve.out, "class=\"legend\"") == 1);
  CHECK(attn::grid_columns(12, 500, 480) == 4);
  CHECK(attn::grid_columns(4, 500, 480) == 2);
  CHECK(attn::grid_columns(2, 500, 480) == 2);
  CHECK(attn::grid_columns(3, 100, 1000) == 3);  // tall maps side by side
  CHECK(attn::grid_columns(1, 2000, 100) == 1);
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
  const std::size_t n = ids["steps"].size();  // the lesson's first slide is step 0, then steps 1..n
  const std::string where =
      "[location.hash, (document.querySelector('section.slide.current') || {}).id || '',"
      " Array.from(document.querySelectorAll('section.slide')).filter(function (e) { return e.offsetParent !== null; }).length,"
      " document.getElementById('counter').textContent,"
      " ((document.querySelector('section.slide.current .num') || {}).textContent || '')]";
  const json r = drive(s, json::array({load(url + "#slide=" + ids["steps"][2]["id"].get<std::string>()), eval(where),  //
                                       keys({"ArrowRight", "PageDown", "Space"}), eval(where),  //
                                       keys({"ArrowLeft", "PageUp"}), eval(where),        //
                                       keys({"End"}), eval(where), keys({"Home"}), eval(where),  //
                                       keys({"ArrowLeft"}), eval(where),                  //
                                       keys({"Escape"}), eval(where),                     //
                                       {{"do", "click"}, {"css", "#mode"}}, eval(where),
                                       // The addresses of before: #slide-N, the N-th slide, still open it.
                                       load(url + "#slide-4"), eval(where), load(url + "#slide=0"), eval(where),
                                       load("about:blank"), load(url + "#slide=no_such_step"), eval(where)}));
  const auto expect = [&](const json& got, std::size_t k) {  // step k of the lesson (0: its first slide)
    const std::string id = k == 0 ? "0" : ids["steps"][k - 1]["id"].get<std::string>();
    CHECK(got[0] == "#slide=" + id);
    CHECK(got[1] == (k == 0 ? std::string("lesson-causal") : "step-causal-" + id));
    CHECK(got[2] == 1);  // one slide on the screen
    CHECK(got[3] == "causal - step " + std::to_string(k) + " of " + std::to_string(n));
    if (k > 0) CHECK(got[4] == "[" + std::to_string(k) + "/" + std::to_string(n) + "]");  // the counter is [k/n]
  };
  expect(r[1], 3);
  expect(r[3], 6);
  expect(r[5], 4);
  expect(r[7], n);
  expect(r[9], 0);
  expect(r[11], 0);  // no slide before the first
  // Escape: the scrolling document again, every slide shown, the address at the step that was on screen.
  CHECK(r[13][0] == "#lesson-causal");
  CHECK(r[13][2] == n + 1);
  CHECK(r[15][2] == 1);  // the Slides button: slides again
  expect(r[17], 3);      // #slide-4: the fourth slide, step 3, and the address says so now
  expect(r[19], 0);
  CHECK(r[22][2] == n + 1);  // an id the page does not have: the document
}

TEST_CASE("html in Chromium: #slide=LESSON/ID opens a step of the tour, and --step keeps each step's number",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string tour = page(s, "tour.html", {"tour", "--format", "html"});
  const std::string some = page(s, "some.html", {"causal", "--step", "attn_weights", "--step", "causal_attn_weights", "--format", "html"});
  const json mha = lesson_json({"mha"}), causal = lesson_json({"causal"});
  std::size_t k = 0, ck = 0;
  for (std::size_t i = 0; i < mha["steps"].size(); ++i)
    if (mha["steps"][i]["id"] == "attn_weights") k = i + 1;
  for (std::size_t i = 0; i < causal["steps"].size(); ++i)
    if (causal["steps"][i]["id"] == "causal_attn_weights") ck = i + 1;
  REQUIRE(k > 0);
  REQUIRE(ck > 0);
  const std::string where = "[location.hash, document.querySelector('section.slide.current').id,"
                            " document.getElementById('counter').textContent]";
  const json r = drive(s, json::array({load(tour + "#slide=mha/attn_weights"), eval(where), keys({"ArrowRight"}), eval(where),
                                       load(tour + "#slide=causal/0"), eval(where), load(some + "#slide=causal_attn_weights"),
                                       eval(where), keys({"ArrowLeft"}), eval(where)}));
  CHECK(r[1] == json::array({"#slide=mha/attn_weights", "step-mha-attn_weights",
                             "mha - step " + std::to_string(k) + " of " + std::to_string(mha["steps"].size())}));
  CHECK(r[3][0] == "#slide=mha/" + mha["steps"][k]["id"].get<std::string>());
  CHECK(r[5] == json::array({"#slide=causal/0", "lesson-causal", "causal - step 0 of " + std::to_string(causal["steps"].size())}));
  CHECK(r[7][2] == "causal - step " + std::to_string(ck) + " of " + std::to_string(causal["steps"].size()));
  std::size_t ak = 0;
  for (std::size_t i = 0; i < causal["steps"].size(); ++i)
    if (causal["steps"][i]["id"] == "attn_weights") ak = i + 1;
  CHECK(r[9][2] == "causal - step " + std::to_string(ak) + " of " + std::to_string(causal["steps"].size()));
}

// The current slide's figure as drawn: its maps' bounding box, how many maps, the first map's cells'
// width and its numbers' size in pixels (the SVG's 11.5-unit font times the map's scale), the window.
const char* const kFigureOnScreenJs = R"JS((function () {
  var s = document.querySelector('section.slide.current');
  var maps = Array.prototype.filter.call(s.querySelectorAll('figure svg.fit'), function (e) { return e.getClientRects().length > 0; });
  var box = [1e9, 1e9, -1e9, -1e9];
  maps.forEach(function (e) {
    var r = e.getBoundingClientRect();
    box = [Math.min(box[0], r.left), Math.min(box[1], r.top), Math.max(box[2], r.right), Math.max(box[3], r.bottom)];
  });
  var first = maps[0], cells = first ? first.querySelector('g.cells') : null;
  return {id: s.id, maps: maps.length, box: box, cells: cells ? cells.getBoundingClientRect().width : 0,
          text: first ? 11.5 * first.getBoundingClientRect().width / first.viewBox.baseVal.width : 0,
          keys: cells ? new Set(Array.prototype.map.call(cells.querySelectorAll('rect.cell'), function (c) { return c.dataset.k; })).size : 0,
          window: [window.innerWidth, window.innerHeight], scrolled: [window.scrollX, window.scrollY]};
})())JS";

// The current slide's figure as a learner sees it: the box of everything it shows (maps, names, caption,
// legend), the share of the window it covers, the texts that overlap another (a pair of slanted key labels
// of one map aside: their boxes overlap where the letters do not), the heads' and layers' names, and the
// smallest number shown in a cell, in pixels.
const char* const kSlideFigureJs = R"JS((function () {
  var f = document.querySelector('section.slide.current figure.heatmaps');
  function shown(e) { return e.getClientRects().length > 0 && !e.closest('.readout'); }
  // An element's text as drawn: an SVG text's box, an HTML element's letters (clipped where it clips them).
  function rectOf(e) {
    if (e instanceof SVGElement) return e.getBoundingClientRect();
    var range = document.createRange();
    range.selectNodeContents(e);
    var r = range.getBoundingClientRect(), c = e.getBoundingClientRect();
    if (getComputedStyle(e).overflow !== 'hidden') return r;
    return {left: Math.max(r.left, c.left), right: Math.min(r.right, c.right), top: Math.max(r.top, c.top), bottom: Math.min(r.bottom, c.bottom)};
  }
  var box = [1e9, 1e9, -1e9, -1e9];
  f.querySelectorAll('svg, .name, .layer-name, p.common, .note').forEach(function (e) {
    if (!shown(e) || (e.parentElement && e.parentElement.closest('svg'))) return;
    var r = rectOf(e);
    box = [Math.min(box[0], r.left), Math.min(box[1], r.top), Math.max(box[2], r.right), Math.max(box[3], r.bottom)];
  });
  var texts = Array.prototype.filter.call(f.querySelectorAll('svg text, .name, .layer-name, p.common, .note'), function (e) {
    return shown(e) && e.textContent.trim() !== '';
  });
  var rects = texts.map(rectOf), overlaps = [];
  for (var i = 0; i < texts.length; ++i)
    for (var j = i + 1; j < texts.length; ++j) {
      var a = rects[i], b = rects[j], p = texts[i], q = texts[j];
      if (p.contains(q) || q.contains(p)) continue;
      if (p.classList.contains('key') && q.classList.contains('key') && p.ownerSVGElement === q.ownerSVGElement) continue;
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1)
        overlaps.push(p.textContent + ' / ' + q.textContent);
    }
  var smallest = null;
  f.querySelectorAll('text.v').forEach(function (t) {
    if (!shown(t)) return;
    var svg = t.ownerSVGElement, px = 11.5 * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    smallest = smallest === null ? px : Math.min(smallest, px);
  });
  var names = function (css) {  // each name's own text (an opened head's words follow it in a span)
    return Array.prototype.filter.call(f.querySelectorAll(css), shown).map(function (e) { return e.firstChild.textContent; });
  };
  return {box: box, area: (box[2] - box[0]) * (box[3] - box[1]) / (window.innerWidth * window.innerHeight),
          overlaps: overlaps.slice(0, 6), overlapping: overlaps.length, texts: texts.length, numbers: smallest,
          names: names('.head .name, .model > .name'), layers: names('.layer-name').length,
          maps: Array.prototype.filter.call(f.querySelectorAll('svg.fit'), shown).length, enlarged: f.classList.contains('enlarged')};
})())JS";

// What every figure slide holds to (kSlideFigureJs's answer): wholly inside the window, at least 35% of it
// (`area`: a head opened from a grid may be a strip, kv-cache's one query by six keys, as wide as the room
// and no more), no text over another, and numbers only where a cell is big enough for them (9 px and more).
void check_slide_figure(const json& slide, int width, int height, bool area = true) {
  const json& box = slide["box"];
  CHECK(box[0].get<double>() >= 0.0);
  CHECK(box[1].get<double>() >= 0.0);
  CHECK(box[2].get<double>() <= width + 0.5);
  CHECK(box[3].get<double>() <= height + 0.5);
  if (area) CHECK(slide["area"].get<double>() >= 0.35);
  CHECK(slide["overlapping"] == 0);
  CHECK(slide["texts"].get<int>() > 0);
  if (!slide["numbers"].is_null()) CHECK(slide["numbers"].get<double>() >= 9.0);
}

// Every weight step with a figure, as "lesson/id", from the pages.
const char* const kWeightFiguresJs =
    "Array.from(document.querySelectorAll('section.step.has-figure')).filter(function (s) { return /weights/.test(s.dataset.step); })"
    ".map(function (s) { return s.dataset.lesson + '/' + s.dataset.step; })";

TEST_CASE("html in Chromium: on a slide at 1920x1080 and 1280x720, every lesson's weight figures come first, fully on "
          "screen, at least 35% of the width, their numbers at least 16 px on a projector, coloured on the fixed scale",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  json find = json::array();
  std::map<std::string, std::string> urls;
  for (const std::string& name : attn_test::lesson_names()) {
    urls[name] = page(s, name + ".html", {name, "--format", "html"});
    find.push_back(load(urls[name]));
    find.push_back(eval(kWeightFiguresJs));
  }
  const json found = drive(s, find);
  std::vector<std::string> steps;
  std::set<std::string> lessons;
  for (std::size_t i = 1; i < found.size(); i += 2)
    for (const json& id : found[i]) {
      steps.push_back(id.get<std::string>());
      lessons.insert(steps.back().substr(0, steps.back().find('/')));
    }
  // Every lesson whose plan has a weight matrix drawn as a heatmap (simple and trainable have none: their
  // weights are one query's vector, a tensor printed), from the registry rather than a list written here.
  std::set<std::string> expected;
  std::istringstream none;
  const attn::Inputs book = attn::load_embeddings(attn::default_embeddings_path(), none);
  for (const auto& lesson : attn::lessons()) {
    attn::Selection plan;
    plan.plan_only = true;
    const attn::Trace t = lesson.modes.front().run(book, lesson.modes.front().defaults, plan);
    for (const attn::Step& st : t.steps)
      if (st.heatmap && st.id.find("weights") != std::string::npos) expected.insert(lesson.info.name);
  }
  CHECK(expected.size() >= 8);
  CHECK(lessons == expected);
  REQUIRE(steps.size() >= 15);
  json actions = json::array();
  for (const auto& size : {std::vector<int>{1920, 1080}, std::vector<int>{1280, 720}}) {
    actions.push_back({{"do", "viewport"}, {"size", size}});
    for (const std::string& step : steps) {
      const std::string lesson = step.substr(0, step.find('/')), id = step.substr(step.find('/') + 1);
      actions.push_back(load(urls[lesson] + "#slide=" + id));
      actions.push_back(eval(kFigureOnScreenJs));
      actions.push_back(eval(kSlideFigureJs));
      // The first map's last cell (the last query's last key: never masked), on the screen: an overview's
      // small map (its cells carry no class; the hidden full map after it does) or a heatmap's cell.
      actions.push_back({{"do", "pixels"},
                         {"css", {"section.slide.current figure .head svg.small g.cells rect:last-of-type, "
                                  "section.slide.current figure .head rect.cell:last-of-type"}}});
      // A multi-head step's first head, enlarged (a click on it).
      actions.push_back({{"do", "click"}, {"css", "section.slide.current figure .head[tabindex]"}});
      actions.push_back(eval(kFigureOnScreenJs));
      actions.push_back(eval(kSlideFigureJs));
    }
  }
  // The clicks on single maps have no head to click: drive.py fails on a missing element, so ask first.
  json safe = json::array();
  for (const json& a : actions) {
    if (a["do"] == "click")
      safe.push_back(eval("(function () { var h = document.querySelector('section.slide.current figure .head[tabindex]');"
                          " if (h) h.click(); return !!h; })()"));
    else
      safe.push_back(a);
  }
  const json r = drive(s, safe);
  std::size_t at = 0;
  for (const int width : {1920, 1280}) {
    const int height = width == 1920 ? 1080 : 720;
    CHECK(r[at++] == json::array({width, height}));
    for (const std::string& step : steps) {
      INFO(step << " at " << width << "x" << height);
      const json& shown = r[at + 1];
      const json& pixel = r[at + 3]["samples"][0];
      const bool heads = r[at + 4].get<bool>();
      const json& enlarged = r[at + 5];
      // The figure as a whole (its maps, names, caption and legend), and a head opened large: wholly on
      // the screen, no text over another; the figure at least 35% of it (an opened head: its cells, below).
      for (const std::size_t k : {at + 2, at + 6}) {
        INFO(r[k].dump());
        check_slide_figure(r[k], width, height, k == at + 2);
      }
      if (heads) CHECK(r[at + 2]["names"].size() == r[at + 2]["maps"]);  // every head of a grid named
      // Its colour on the fixed scale: 0..1 for weights, 0..max for dropout's scaled ones (up to 2).
      const json data = lesson_json({step.substr(0, step.find('/')), "--step", step.substr(step.find('/') + 1)})["steps"][0]["data"];
      json last = data;
      while (last[0].is_array() && last[0][0].is_array()) last = last[0];  // the first map: (rows, keys)
      const double value = last.back().back().get<double>();
      double hi = 1.0;
      const std::function<void(const json&)> largest = [&](const json& j) {
        if (j.is_array()) {
          for (const json& e : j) largest(e);
        } else if (j.is_number()) {
          hi = std::max(hi, j.get<double>());
        }
      };
      largest(data);
      const std::string want = attn::palette_hex(value / hi);
      INFO("cell " << value << " of 0.." << hi << ": " << want << ", drawn " << pixel.dump());
      for (int c = 0; c < 3; ++c) CHECK(std::abs(pixel[c].get<int>() - std::stoi(want.substr(1 + 2 * c, 2), nullptr, 16)) <= 2);
      INFO(shown.dump());
      CHECK(shown["id"] == "step-" + step.substr(0, step.find('/')) + "-" + step.substr(step.find('/') + 1));
      CHECK(shown["scrolled"] == json::array({0, 0}));
      const json& box = shown["box"];
      CHECK(box[0].get<double>() >= 0.0);  // the whole figure on the screen, no scrolling
      CHECK(box[1].get<double>() >= 0.0);
      CHECK(box[2].get<double>() <= width + 0.5);
      CHECK(box[3].get<double>() <= height + 0.5);
      CHECK(box[2].get<double>() - box[0].get<double>() >= 0.35 * width);
      // One map (several heads: each on its own once enlarged) is at least 35% wide, and with the book's six
      // tokens so are its cells alone (kv-cache's first calls have 1 to 5 keys: a row of a few cells).
      const json& one = heads ? enlarged : shown;
      INFO(one.dump());
      CHECK(one["maps"] == 1);
      CHECK(one["box"][2].get<double>() - one["box"][0].get<double>() >= 0.35 * width);
      CHECK(one["box"][3].get<double>() <= height + 0.5);
      if (one["keys"] == 6) {
        CHECK(one["cells"].get<double>() >= 0.35 * width);
        if (width == 1920) CHECK(one["text"].get<double>() >= 16.0);
      }
      at += 7;
    }
  }
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
  // No local path: the inputs' file by its name only.
  const std::string path = attn::default_embeddings_path();
  CHECK(text.find(path.substr(0, path.rfind('/'))) == std::string::npos);
  CHECK(text.find("from " + path.substr(path.rfind('/') + 1)) != std::string::npos);
}

TEST_CASE("html in Chromium: printed, no step of the tour is split across pages unless taller than a page", "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  // Chromium's PDF: US Letter with 0.4 in margins, 7.7 x 10.2 in of content, 739 x 979 CSS pixels; a step
  // within 5% of that, as measured on the screen's layout, may still not fit the print's.
  const json r = drive(s, json::array({load(page(s, "tour.html", {"tour", "--format", "html"})),
                                       {{"do", "pdfboxes"}, {"css", "section.slide"}}, {{"do", "pdfpages"}},
                                       {{"do", "viewport"}, {"size", {739, 979}}}, {{"do", "media"}, {"value", "print"}},
                                       eval("Array.from(document.querySelectorAll('section.slide')).map(function (e) {"
                                            " return [e.id, e.getBoundingClientRect().height]; })"),
                                       // The same handout in one column, for the two columns' saving.
                                       eval("(function () { var s = document.createElement('style');"
                                            " s.textContent = '@media print { main { column-count: 1 !important } }';"
                                            " document.head.appendChild(s); return true; })()"),
                                       {{"do", "pdfpages"}}}));
  const json& pages = r[1];
  const json& heights = r[5];
  REQUIRE(pages.size() == heights.size());
  REQUIRE(pages.size() > 100);
  std::size_t tall = 0;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    INFO(heights[i][0].get<std::string>() << " " << pages[i].dump() << " " << heights[i][1].get<double>() << " px");
    REQUIRE(pages[i][0].is_number());
    REQUIRE(pages[i][1].is_number());
    if (heights[i][1].get<double>() > 0.95 * 979) {
      ++tall;
    } else {
      CHECK(pages[i][0] == pages[i][1]);
    }
  }
  CHECK(tall * 10 < pages.size());  // few are taller than a page: the check holds for the rest
  const int two_columns = r[2].get<int>(), one_column = r[7].get<int>();
  WARN("the tour prints to " << two_columns << " pages, " << one_column << " in one column");
  // Two columns save at least a third of the paper (issue 28: 112 pages in one column, 58 in two), however
  // many lessons the tour has.
  CHECK(r[6] == true);
  CHECK(two_columns * 3 < one_column * 2);
  // And the handout stays dense as lessons are added: three slides a page or more on average (250 slides
  // on 74 pages when this was written).
  CHECK(two_columns * 3 < static_cast<int>(pages.size()));
}

// The heads of the current slide's figure that are on the screen, and whether one is enlarged.
const char* const kHeadsJs = R"JS((function () {
  var f = document.querySelector('section.slide.current figure');
  return {enlarged: f.classList.contains('enlarged'),
          heads: Array.prototype.filter.call(f.querySelectorAll('.head'), function (h) { return h.getClientRects().length > 0; })
            .map(function (h) { var r = h.getBoundingClientRect(); return [+h.dataset.head, Math.round(r.left), Math.round(r.top),
                                                                          Math.round(r.width), h.getAttribute('aria-expanded')]; }),
          numbers: Array.prototype.filter.call(f.querySelectorAll('text.v'), function (t) { return t.getClientRects().length > 0; }).length,
          focused: document.activeElement.dataset.head === undefined ? null : +document.activeElement.dataset.head,
          counter: document.getElementById('counter').textContent};
})())JS";

// The lines the current slide's lines view shows: [head, query, key, opacity], and the focused token.
const char* const kLinesJs = R"JS((function () {
  var svg = document.querySelector('section.slide.current svg.lines');
  var shown = Array.prototype.filter.call(svg.querySelectorAll('line'), function (l) { return l.getClientRects().length > 0; });
  var a = document.activeElement;
  return {visible: svg.getClientRects().length > 0,
          heatmaps: Array.prototype.filter.call(document.querySelectorAll('section.slide.current .heads svg'),
                                                function (e) { return e.getClientRects().length > 0; }).length,
          lines: shown.map(function (l) { return [+l.dataset.head, +l.dataset.q, +l.dataset.k, +l.getAttribute('stroke-opacity')]; }),
          focus: a.classList && a.classList.contains('tok') ? (a.dataset.q !== undefined ? 'q' + a.dataset.q : 'k' + a.dataset.k) : null};
})())JS";

TEST_CASE("html in Chromium: a multi-head step is a grid of heads, each enlarged by a click or Enter and restored by "
          "Escape or a click",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string url = page(s, "gqa.html", {"gqa", "--format", "html"});
  const std::string head = "section.slide.current figure .head[data-head=\"";
  const json r = drive(s, json::array({{{"do", "viewport"}, {"size", {1920, 1080}}}, load(url + "#slide=attn_weights"), eval(kHeadsJs),
                                       {{"do", "click"}, {"css", head + "2\"]"}}, eval(kHeadsJs),  //
                                       keys({"Escape"}), eval(kHeadsJs),                            //
                                       {{"do", "focus"}, {"css", head + "1\"]"}}, keys({"Enter"}), eval(kHeadsJs),
                                       {{"do", "click"}, {"css", head + "1\"]"}}, eval(kHeadsJs),
                                       // In the document, too: side by side at 1280 px.
                                       {{"do", "viewport"}, {"size", {1280, 900}}}, load(url + "#step-gqa-attn_weights"),
                                       eval("Array.from(document.querySelectorAll('#step-gqa-attn_weights .head'))"
                                            ".map(function (h) { var r = h.getBoundingClientRect(); return [r.left, r.top]; })")}));
  const json& grid = r[2];
  INFO(grid.dump());
  REQUIRE(grid["heads"].size() == 4);
  CHECK(grid["enlarged"] == false);
  // Two by two: heads 0 and 1 on one row, 2 and 3 under them.
  CHECK(grid["heads"][0][2] == grid["heads"][1][2]);
  CHECK(grid["heads"][1][1].get<int>() > grid["heads"][0][1].get<int>());
  CHECK(grid["heads"][2][2].get<int>() > grid["heads"][0][2].get<int>());
  CHECK(grid["numbers"] == 4 * 21);
  const json& big = r[4];
  INFO(big.dump());
  CHECK(big["enlarged"] == true);
  REQUIRE(big["heads"].size() == 1);
  CHECK(big["heads"][0][0] == 2);
  CHECK(big["heads"][0][3].get<int>() > grid["heads"][0][3].get<int>());
  CHECK(big["heads"][0][4] == "true");
  CHECK(big["counter"] == grid["counter"]);  // still the same slide
  CHECK(r[6]["enlarged"] == false);          // Escape restores, and stays on the slide
  CHECK(r[6]["heads"].size() == 4);
  CHECK(r[6]["counter"] == grid["counter"]);
  CHECK(r[9]["enlarged"] == true);  // Enter on a focused head
  CHECK(r[9]["heads"].size() == 1);
  CHECK(r[9]["heads"][0][0] == 1);
  CHECK(r[9]["focused"] == 1);
  CHECK(r[11]["enlarged"] == false);  // a click on the enlarged head
  const json& doc = r[14];
  REQUIRE(doc.size() == 4);
  CHECK(doc[0][1] == doc[1][1]);
  CHECK(doc[1][0].get<double>() > doc[0][0].get<double>());
}

TEST_CASE("html in Chromium: the lines view draws each query's weights as lines, keeps a token's own on hover and focus, "
          "chooses heads with coloured toggles, and follows the keys",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  const std::string url = page(s, "mha.html", {"mha", "--format", "html"});
  const std::string tok = "section.slide.current svg.lines text.tok";
  const json r = drive(s, json::array({{{"do", "viewport"}, {"size", {1280, 720}}}, load(url + "#slide=attn_weights"),
                                       keys({"l"}), eval(kLinesJs),                                             // 3
                                       {{"do", "hover"}, {"css", tok + ".q[data-q=\"2\"]"}}, eval(kLinesJs),     // 5
                                       {{"do", "click"}, {"css", "section.slide.current .tools button.head-toggle[data-head=\"1\"]"}},
                                       eval(kLinesJs),                                                          // 7
                                       {{"do", "focus"}, {"css", tok + ".q[data-q=\"0\"]"}}, keys({"ArrowDown", "ArrowDown"}),
                                       eval(kLinesJs),                                                          // 10
                                       keys({"ArrowRight"}), eval(kLinesJs),                                    // 12
                                       keys({"Enter"}), {{"do", "focus"}, {"css", "#theme"}}, eval(kLinesJs),  // 15: pinned
                                       {{"do", "click"}, {"css", "section.slide.current .tools button.view"}}, eval(kLinesJs)}));
  const json weights = lesson_json({"mha", "--step", "attn_weights"})["steps"][0]["data"][0];  // batch 0: (heads, 6, 6)
  const json& all = r[3];
  CHECK(all["visible"] == true);
  CHECK(all["heatmaps"] == 0);
  CHECK(all["lines"].size() == 2 * 21);
  for (const json& l : all["lines"]) {
    INFO(l.dump());
    CHECK(std::abs(l[3].get<double>() - weights[l[0].get<int>()][l[1].get<int>()][l[2].get<int>()].get<double>()) < 6e-4);
  }
  const auto only = [](const json& lines, int head, char side, int at) {
    std::set<std::pair<int, int>> seen;
    for (const json& l : lines) {
      if (head >= 0 && l[0] != head) return std::set<std::pair<int, int>>{};
      if ((side == 'q' ? l[1] : l[2]) != at) return std::set<std::pair<int, int>>{};
      seen.insert({l[0].get<int>(), side == 'q' ? l[2].get<int>() : l[1].get<int>()});
    }
    return seen;
  };
  CHECK(only(r[5]["lines"], -1, 'q', 2) == std::set<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}});
  CHECK(r[7]["lines"].size() == 21);  // head 1 off (and the pointer off the tokens)
  CHECK(only(r[7]["lines"], 0, 'q', r[7]["lines"][0][1].get<int>()).empty());  // every query's, not one's
  CHECK(r[10]["focus"] == "q2");
  CHECK(only(r[10]["lines"], 0, 'q', 2) == std::set<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}});
  CHECK(r[12]["focus"] == "k2");
  CHECK(only(r[12]["lines"], 0, 'k', 2) == std::set<std::pair<int, int>>{{0, 2}, {0, 3}, {0, 4}, {0, 5}});
  CHECK(r[15]["focus"] == nullptr);  // Enter pinned key 2: its lines stay when the focus leaves
  CHECK(r[15]["lines"] == r[12]["lines"]);
  CHECK(r[17]["visible"] == false);  // the button: the heatmaps again
  CHECK(r[17]["heatmaps"] == 2);
}

TEST_CASE("html in Chromium: the model view of overview steps, a row per layer and a column per head, enlarges any map "
          "with its numbers",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  s.file("heads.html", html_of(overview_document()));
  const std::string url = "file://" + s.dir + "/heads.html";
  const std::string head = "section.slide.current .layer[data-step=\"layer_1\"] .head[data-head=\"0\"]";
  const json r = drive(s, json::array({{{"do", "viewport"}, {"size", {1920, 1080}}}, load(url + "#slide=layer_0"), eval(kHeadsJs),
                                       {{"do", "click"}, {"css", head}}, eval(kHeadsJs), keys({"Escape"}), eval(kHeadsJs),
                                       {{"do", "focus"}, {"css", head}}, keys({"Enter"}), eval(kHeadsJs), eval(kFigureOnScreenJs)}));
  CHECK(r[1]["console"] == json::array());
  const json& model = r[2];
  INFO(model.dump());
  REQUIRE(model["heads"].size() == 4);
  CHECK(model["numbers"] == 0);  // colour only
  CHECK(model["heads"][0][2] == model["heads"][1][2]);  // layer 0's two heads side by side
  CHECK(model["heads"][1][1].get<int>() > model["heads"][0][1].get<int>());
  CHECK(model["heads"][2][2].get<int>() > model["heads"][0][2].get<int>());  // layer 1 under it
  CHECK(model["heads"][2][1] == model["heads"][0][1]);
  CHECK(model["heads"][0][3].get<int>() >= 0.15 * 1920);  // the model view fills the slide's height
  const json& big = r[4];
  INFO(big.dump());
  CHECK(big["enlarged"] == true);
  REQUIRE(big["heads"].size() == 1);
  CHECK(big["numbers"] == 21);  // enlarged with its numbers
  CHECK(r[6]["enlarged"] == false);
  CHECK(r[6]["heads"].size() == 4);
  CHECK(r[9]["enlarged"] == true);
  CHECK(r[9]["numbers"] == 21);
  const json& shown = r[10];  // the enlarged map fills the slide as a weight figure does
  CHECK(shown["box"][3].get<double>() <= 1080.5);
  CHECK(shown["cells"].get<double>() >= 0.35 * 1920);
}

TEST_CASE("html in Chromium: one layer of 12 heads, the model view of a GPT-2-small-shaped model and of the tiny models, "
          "and 12 heads of mha fit 1920x1080 and 1280x720, named, at least 35% of the slide, and a map opens large with its "
          "lines",
          "[html][browser]") {
  NEED_CHROMIUM();
  Scratch s;
  // 124M random weights as scripts/bench-gpt2.py writes them (about 500 MB, in the scratch directory).
  const std::string gpt2 = attn_test::gpt2_model(s.dir + "/gpt2", 768, 12, 12, 1024, attn_test::Weights::Random);
  const std::string text = "The cat sat on the mat.";  // 7 tokens
  struct Slide {
    std::string url;
    std::size_t names, layers;  // the heads named over the figure, its layers' names
  };
  const std::string small = page(s, "gpt2.html", {"heads", "--model", gpt2, "--text", text, "--format", "html"});
  std::vector<Slide> slides{{small + "#slide=attn_weights_layer_0", 12, 12},  // the model view: 12 x 12
                            {small + "#slide=attn_weights_layer_5", 12, 0},   // one layer: 4 x 3
                            {page(s, "mha12.html", {"mha", "--d-out", "24", "--heads", "12", "--format", "html"}) + "#slide=attn_weights", 12, 0},
                            {page(s, "mha.html", {"mha", "--format", "html"}) + "#slide=attn_weights", 2, 0}};
  for (const char* tiny : {"tiny-f32", "tiny-bf16"}) {  // 3 layers of 2 heads, 2 layers of 4
    const std::string dir = ATTN_TESTS_DIR "/golden/models/" + std::string(tiny);
    std::ifstream file(dir + "/config.json");
    const json config = json::parse(file);
    const std::string url = page(s, std::string(tiny) + ".html", {"heads", "--model", dir, "--text", text, "--format", "html"});
    slides.push_back({url + "#slide=attn_weights_layer_0", config["n_head"], config["n_layer"]});
    slides.push_back({url + "#slide=attn_weights_layer_1", config["n_head"], 0});
  }
  const std::string thumbnail = "section.slide.current .layer[data-step=\"attn_weights_layer_3\"] .head[data-head=\"5\"]";
  const char* const kOpenJs = R"JS((function () {
    var f = document.querySelector('section.slide.current figure.heatmaps'), big = f.querySelector('.head.big');
    var lines = big ? Array.prototype.filter.call(big.querySelectorAll('svg.lines line'), function (l) { return l.getClientRects().length > 0; }) : [];
    return {enlarged: f.classList.contains('enlarged'), lines: lines.length,
            thumbnails: Array.prototype.filter.call(f.querySelectorAll('svg.small'), function (e) { return e.getClientRects().length > 0; }).length,
            labels: big ? Array.prototype.filter.call(big.querySelectorAll('svg.full text.key'), function (e) { return e.getClientRects().length > 0; })
                                .map(function (e) { return e.textContent; }) : [],
            readout: f.querySelector('.readout').textContent};
  })())JS";
  json actions = json::array();
  for (const auto& size : {std::vector<int>{1920, 1080}, std::vector<int>{1280, 720}}) {
    actions.push_back({{"do", "viewport"}, {"size", size}});
    for (const Slide& slide : slides) {
      actions.push_back(load(slide.url));
      actions.push_back(eval(kSlideFigureJs));
    }
    // The model view: a map read on hover, opened large by a click, its lines (l), and back (Escape).
    actions.push_back(load(slides[0].url));
    actions.push_back({{"do", "hover"}, {"css", thumbnail}});
    actions.push_back(eval(kOpenJs));
    actions.push_back({{"do", "click"}, {"css", thumbnail}});
    actions.push_back(eval(kOpenJs));
    actions.push_back(eval(kSlideFigureJs));
    actions.push_back(keys({"l"}));
    actions.push_back(eval(kOpenJs));
    actions.push_back(eval(kSlideFigureJs));
    actions.push_back(keys({"Escape"}));
    actions.push_back(eval(kOpenJs));
    // The next map opened is a heatmap again, not the lines the last one was left in.
    actions.push_back({{"do", "click"}, {"css", "section.slide.current .layer[data-step=\"attn_weights_layer_0\"] .head[data-head=\"0\"]"}});
    actions.push_back(eval(kOpenJs));
    // Closed again by a click on it (the same address loads the same document at the next size).
    actions.push_back(eval("(function () { var h = document.querySelector('section.slide.current .head.big'); if (h) h.click(); return !!h; })()"));
  }
  const json r = drive(s, actions);
  std::size_t at = 0;
  for (const int width : {1920, 1280}) {
    const int height = width == 1920 ? 1080 : 720;
    CHECK(r[at++] == json::array({width, height}));
    for (const Slide& slide : slides) {
      INFO(slide.url << " at " << width << "x" << height);
      CHECK(r[at]["console"] == json::array());
      const json& shown = r[at + 1];
      INFO(shown.dump());
      check_slide_figure(shown, width, height);
      std::vector<std::string> names;
      for (std::size_t h = 0; h < slide.names; ++h) names.push_back("head " + std::to_string(h));
      CHECK(shown["names"] == json(names));
      CHECK(shown["layers"] == slide.layers);
      // Numbers where a cell has room: mha's two heads on a projector; not in one layer's 12 heads at 720p.
      if (&slide == &slides[3] && width == 1920) CHECK(shown["numbers"].get<double>() >= 12.0);
      if (&slide == &slides[1] && width == 1280) CHECK(shown["numbers"].is_null());
      at += 2;
    }
    INFO("the model view at " << width << "x" << height);
    const json& hover = r[at + 2];
    CHECK(hover["enlarged"] == false);
    CHECK(hover["thumbnails"] == 144);
    CHECK(hover["readout"].get<std::string>().find("layer 3, head 5") == 0);
    CHECK(hover["readout"].get<std::string>().find("'\xe2\x90\xa3" "cat'") != std::string::npos);  // its tokens
    const json& open = r[at + 4];
    CHECK(open["enlarged"] == true);
    CHECK(open["thumbnails"] == 0);
    CHECK(open["labels"] == json::array({"'The'", "'\xe2\x90\xa3" "cat'", "'\xe2\x90\xa3" "sat'", "'\xe2\x90\xa3" "on'",
                                         "'\xe2\x90\xa3" "the'", "'\xe2\x90\xa3" "mat'", "'.'"}));
    CHECK(open["lines"] == 0);
    INFO(r[at + 5].dump());
    check_slide_figure(r[at + 5], width, height);
    const json& lines = r[at + 7];
    CHECK(lines["enlarged"] == true);
    CHECK(lines["lines"] == 28);  // 7 queries, each over its own and the earlier keys
    CHECK(lines["labels"] == json::array());
    INFO(r[at + 8].dump());
    check_slide_figure(r[at + 8], width, height);
    const json& back = r[at + 10];
    CHECK(back["enlarged"] == false);
    CHECK(back["thumbnails"] == 144);
    CHECK(back["lines"] == 0);
    const json& next = r[at + 12];
    CHECK(next["enlarged"] == true);
    CHECK(next["lines"] == 0);
    CHECK(next["labels"].size() == 7);
    CHECK(r[at + 13] == true);
    at += 14;
  }
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
  // Each token as token_repr shows it ('<img␣src=x␣onerror="window.pwned=2">'), a label cut to 12 columns.
  std::vector<std::string> shown, clipped;
  for (const std::string& t : kHostile) shown.push_back(attn::token_repr(t));
  for (const std::string& t : shown) clipped.push_back(attn::clip_label(t, 12));
  CHECK(clipped.front() == "'<script>wi\xe2\x80\xa6");
  CHECK(r[4].get<std::vector<std::string>>() == clipped);
  CHECK(r[5].get<std::vector<std::string>>() == shown);
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
    if (!lesson.modes.front().uses_inputs) {  // chapter 4's: no tokens reach them, their page is checked as it is
      save(name + ".html", {name, "--format", "html"}, pages);
      continue;
    }
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
  CHECK(svg.find("&#39;a\\uffff&#39;") != std::string::npos);  // a token as Python's repr shows it: 'a\uffff'
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
