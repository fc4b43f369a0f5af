// Honest colour (issue 28): --scale fixed|matrix|row places a heatmap's cells the same way in every format,
// weights are coloured on a fixed 0..1 scale by default, signed steps on a diverging palette centred on 0,
// and every legend states its scale.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "render/figure.hpp"
#include "render/heatmap.hpp"
#include "render/layout.hpp"
#include "support.hpp"

using namespace attn;
using json = nlohmann::json;

namespace {

// A heatmap step of `shape` holding `values`, labelled by tokens t0, t1, ...
Step step_of(std::vector<std::size_t> shape, const std::vector<float>& values, bool causal = false) {
  Step s;
  s.id = "w";
  s.shape = shape;
  s.tensor = AnyTensor(shape);
  std::copy(values.begin(), values.end(), s.tensor.data());
  s.computed = true;
  s.show_heatmap(causal);
  return s;
}

std::vector<std::string> tokens(std::size_t n) {
  std::vector<std::string> t;
  for (std::size_t i = 0; i < n; ++i) t.push_back("t" + std::to_string(i));
  return t;
}

json lesson_json(const std::vector<std::string>& args) {
  std::vector<std::string> all = args;
  all.push_back("--json");
  const attn_test::Run r = attn_test::run(all);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

// Each cell's fill in a standalone SVG, by (query, key).
std::map<std::pair<int, int>, std::string> svg_fills(const std::string& svg) {
  std::map<std::pair<int, int>, std::string> fills;
  const std::regex cell(R"re(<rect class="cell"[^>]* fill="(#[0-9a-f]{6})"[^>]* data-q="(\d+)" data-k="(\d+)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), cell), end; it != end; ++it)
    fills[{std::stoi((*it)[2]), std::stoi((*it)[3])}] = (*it)[1];
  return fills;
}

}  // namespace

TEST_CASE("scale: weights that barely differ keep their colours close on the fixed scale, and spread on matrix", "[scale]") {
  // kv-cache's attn_weights_5 lies between 0.162 and 0.173: on the fixed scale its cells sit at their values,
  // close together; only the matrix's own min..max paints them from the darkest to the brightest colour.
  const Step s = step_of({2, 3}, {0.162f, 0.170f, 0.173f, 0.5f, 0.3f, 0.2f});
  const HeatMap m = heat_maps(s, tokens(3)).at(0);
  CHECK(m.shade(0, 0, HeatScale::Fixed) == Approx(0.162));
  CHECK(m.shade(0, 2, HeatScale::Fixed) == Approx(0.173));
  CHECK(m.shade(1, 0, HeatScale::Fixed) == Approx(0.5));
  CHECK_FALSE(m.diverging(HeatScale::Fixed));
  CHECK(m.low_end(HeatScale::Fixed) == "0");
  CHECK(m.high_end(HeatScale::Fixed) == "1");
  CHECK(m.scale_words(HeatScale::Fixed) == "a fixed scale, as probabilities are (here 0.16 to 0.50)");
  // matrix: the min at 0, the max at 1
  CHECK(m.shade(0, 0, HeatScale::Matrix) == Approx(0.0));
  CHECK(m.shade(1, 0, HeatScale::Matrix) == Approx(1.0));
  CHECK(m.shade(0, 1, HeatScale::Matrix) == Approx((0.170 - 0.162) / (0.5 - 0.162)).epsilon(1e-4));
  CHECK(m.low_end(HeatScale::Matrix) == "0.16");
  // row: each row from its own min to its max
  CHECK(m.shade(0, 0, HeatScale::Row) == Approx(0.0));
  CHECK(m.shade(0, 2, HeatScale::Row) == Approx(1.0));
  CHECK(m.shade(1, 2, HeatScale::Row) == Approx(0.0));
  CHECK(m.shade(1, 1, HeatScale::Row) == Approx(1.0 / 3.0).epsilon(1e-4));
  CHECK(m.low_end(HeatScale::Row) == "row min");
  CHECK(m.scale_words(HeatScale::Row) == "each row from its own min to its max");
}

TEST_CASE("scale: a signed step is centred on 0 on a diverging palette, the same for every head", "[scale]") {
  // Two heads of one batch element: head 0 all positive, head 1 signed. The step is signed, so both heads
  // are centred on 0, from -2 to 2 (the largest magnitude of the step).
  const Step s = step_of({1, 2, 2, 2}, {0.5f, 1.0f, 0.25f, 0.0f, -2.0f, 1.0f, 0.0f, 2.0f});
  const std::vector<HeatMap> maps = heat_maps(s, tokens(2));
  REQUIRE(maps.size() == 2);
  for (const HeatMap& m : maps) {
    CHECK(m.diverging(HeatScale::Fixed));
    CHECK_FALSE(m.diverging(HeatScale::Matrix));
    CHECK(m.low_end(HeatScale::Fixed) == "-2");
    CHECK(m.high_end(HeatScale::Fixed) == "2");
  }
  CHECK(maps[0].shade(0, 0, HeatScale::Fixed) == Approx(0.625));  // 0.5 of -2..2
  CHECK(maps[0].shade(1, 1, HeatScale::Fixed) == Approx(0.5));    // 0: the middle, white
  CHECK(maps[1].shade(0, 0, HeatScale::Fixed) == Approx(0.0));    // -2: the bluest
  CHECK(maps[1].shade(1, 1, HeatScale::Fixed) == Approx(1.0));    // 2: the reddest
  CHECK(maps[1].scale_words(HeatScale::Fixed) == "centred on 0, blue below, red above (here -2.00 to 2.00)");
  // The palette's middle is white, its ends blue and red.
  CHECK(palette_hex(0.5, true) == "#f7f7f7");
  CHECK(palette_hex(0.0, true) == "#053061");
  CHECK(palette_hex(1.0, true) == "#67001f");
  // Non-negative values past 1 (dropout's rescaled weights): from 0 to the step's largest value.
  const HeatMap d = heat_maps(step_of({2, 2}, {0.0f, 2.0f, 1.0f, 0.5f}), tokens(2)).at(0);
  CHECK(d.high_end(HeatScale::Fixed) == "2");
  CHECK(d.shade(1, 0, HeatScale::Fixed) == Approx(0.5));
}

TEST_CASE("scale: the terminal's legend states the scale, and monochrome shows only the shades its cells use", "[scale]") {
  LayoutOptions o;
  o.width = 100;
  o.color = false;
  // Every number in its cell: no shading without colour, so no ramp in the legend.
  const Step small = step_of({2, 2}, {1.0f, 0.0f, 0.25f, 0.75f});
  std::string text;
  for (const Line& l : heatmap_lines(small, tokens(2), o)) text += plain(l) + "\n";
  CHECK(text.find("colours: 0 to 1, a fixed scale, as probabilities are (here 0.00 to 1.00)") != std::string::npos);
  for (const char* shade : {"\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93", "\xe2\x96\x88"}) CHECK(text.find(shade) == std::string::npos);
  // 20 keys: colour-only cells, shaded with blocks; the legend lists exactly the shades in the grid.
  std::vector<float> values(20 * 20, 0.0f);
  for (std::size_t i = 0; i < 20; ++i) values[i * 20] = 1.0f, values[i * 20 + 1] = 0.5f;  // only 0, 0.5 and 1
  const Step big = step_of({20, 20}, values);
  std::set<std::string> in_cells, in_legend;
  for (const Line& l : heatmap_lines(big, tokens(20), o)) {
    const bool legend = !l.empty() && plain(l).rfind("  colours:", 0) == 0;
    for (const Span& sp : l)
      if (sp.role == Role::Cell) (legend ? in_legend : in_cells).insert(sp.text.substr(0, sp.text[0] == ' ' ? 1 : 3));
  }
  CHECK(in_cells.size() == 3);  // " ", "▒", "█"
  CHECK(in_legend == in_cells);
  // --scale row, stated
  o.scale = HeatScale::Row;
  text.clear();
  for (const Line& l : heatmap_lines(small, tokens(2), o)) text += plain(l) + "\n";
  CHECK(text.find("colours: row min to row max, each row from its own min to its max") != std::string::npos);
  // A narrow terminal: the scale's words on lines of their own, nothing wider than the screen.
  o.width = 40;
  o.scale = HeatScale::Fixed;
  for (const Line& l : heatmap_lines(small, tokens(2), o)) CHECK(line_width(l) <= 40);
}

TEST_CASE("scale: --scale colours the svg figure's cells, the legend says which, in every lesson's weights", "[scale]") {
  const json data = lesson_json({"causal", "--step", "causal_attn_weights"})["steps"][0]["data"];
  double min = 1.0;
  for (int q = 0; q < 6; ++q)
    for (int k = 0; k <= q; ++k) min = std::min(min, data[q][k].get<double>());
  for (const std::string scale : {"fixed", "matrix", "row"}) {
    INFO("--scale " << scale);
    const attn_test::Run r = attn_test::run({"causal", "--format", "svg", "--step", "causal_attn_weights", "--scale", scale});
    REQUIRE(r.status == 0);
    const auto fills = svg_fills(r.out);
    REQUIRE(fills.size() == 21);  // the lower triangle: masked cells are hatched
    for (int q = 0; q < 6; ++q) {
      double lo = 1.0, hi = 0.0;
      for (int k = 0; k <= q; ++k) lo = std::min(lo, data[q][k].get<double>()), hi = std::max(hi, data[q][k].get<double>());
      for (int k = 0; k <= q; ++k) {
        const double v = data[q][k].get<double>();
        const double x = scale == "fixed" ? v : scale == "matrix" ? (v - min) / (1.0 - min) : q == 0 ? 1.0 : (v - lo) / (hi - lo);
        INFO("cell " << q << "," << k);
        CHECK(fills.at({q, k}) == palette_hex(std::clamp(x, 0.0, 1.0)));
      }
    }
    const std::string words = scale == "fixed" ? "colours: a fixed scale, as probabilities are (here 0.15 to 1.00)"
                              : scale == "matrix" ? "colours: this matrix&#39;s min to its max"
                                                  : "colours: each row from its own min to its max";
    CHECK(r.out.find(">" + words + "</text>") != std::string::npos);
  }
  // A signed step (mha's masked scores) on the diverging palette: 0 would be white, the largest score red.
  const attn_test::Run r = attn_test::run({"mha", "--format", "svg", "--step", "masked"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("centred on 0, blue below, red above") != std::string::npos);
  CHECK(r.out.find("fill=\"" + palette_hex(1.0, true) + "\"") != std::string::npos);  // the legend's last swatch
}

TEST_CASE("scale: --scale is taken by every lesson, the tour and present, and refuses other values", "[scale][cli]") {
  const attn_test::Run bad = attn_test::run({"causal", "--scale", "log"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--scale") != std::string::npos);
  CHECK(bad.err.find("fixed") != std::string::npos);
  const attn_test::Run tour = attn_test::run({"tour", "--scale", "row", "--heatmap", "always"});
  REQUIRE(tour.status == 0);
  CHECK(tour.out.find("each row from its own min to its max") != std::string::npos);
  CHECK(tour.out.find("a fixed scale") == std::string::npos);
  // attn present takes it (and says it draws on a terminal, not that it does not know --scale)
  const attn_test::Run present = attn_test::run({"present", "--scale", "matrix"});
  CHECK(present.status == 2);
  CHECK(present.err.find("--scale") == std::string::npos);
  CHECK(present.err.find("terminal") != std::string::npos);
}

TEST_CASE("key labels: one line when every label fits its cell, else two lines of whole labels, every other key on each",
          "[heatmap]") {
  using attn::key_label_lines;
  // Numbers' labels (positions) fit: one line, each right-aligned over its cell of 6 after the indent of 4.
  CHECK(key_label_lines({"0", "1", "10"}, 4, 6) == std::vector<std::string>{"         0     1    10"});
  // The book's tokens as token_repr shows them do not fit 5 columns: two lines, each label whole and ending
  // where its own column ends (indent 12 + 6 per key), with a space at least between labels on one line.
  const std::vector<std::string> book{"'Your'", "'journey'", "'starts'", "'with'", "'one'", "'step'"};
  const auto two = key_label_lines(book, 12, 6);
  REQUIRE(two.size() == 2);
  CHECK(two[0] == "            'Your'    'starts'       'one'");    // ending at columns 18, 30, 42
  CHECK(two[1] == "               'journey'      'with'      'step'");  // and at 24, 36, 48
  for (const auto& line : two) CHECK(line.size() <= 12 + 6 * book.size());
  // Past two cells less a column (11 here), a label is cut between whole characters, with an ellipsis.
  const auto cut = key_label_lines({"'a'", "'abcdefghijklmno'", "'b'"}, 12, 6);
  REQUIRE(cut.size() == 2);
  CHECK(cut[1] == "             'abcdefghi\xe2\x80\xa6");  // 11 columns, ending at 24
  // One key alone: one line, the label whole, reaching into the indent if it must.
  CHECK(key_label_lines({"'journey'"}, 12, 6) == std::vector<std::string>{"         'journey'"});
}
