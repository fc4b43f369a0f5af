// libFuzzer target: any bytes as an embeddings file, read as JSON, as a table, as .npy and as the format
// the content says (what --input - does). Loading succeeds with a well-formed Inputs or throws
// InputError. For small inputs that load, every lesson runs with the text, JSON and HTML renderers, and
// the output is checked (output_checks.hpp): the text view holds no control byte the input held, the JSON
// is strict and gives back the exact tokens, and the page's every tag is one attn writes. Built by scripts/fuzz.sh (clang, -fsanitize=fuzzer).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "inputs/embeddings.hpp"
#include "lessons/registry.hpp"
#include "output_checks.hpp"
#include "render/json.hpp"
#include "render/renderer.hpp"
#include "render/text.hpp"

namespace {

using attn_fuzz::check;

void exercise(const attn::Inputs& in) {
  check(in.num_tokens() >= 1 && in.d_in() >= 1 && in.tokens.size() == in.num_tokens());
  for (float v : in.embeddings) check(std::isfinite(v));
  if (in.num_tokens() * in.d_in() > 64) return;  // keep each run fast
  for (const attn::Lesson& lesson : attn::lessons()) {
    const attn::LessonMode& mode = lesson.modes.front();
    attn::LessonConfig cfg = mode.defaults;
    cfg.query.reset();  // the default query for this input (0 for one token)
    if (!mode.uses_inputs) continue;
    if (lesson.info.name == "kv-cache" && in.num_tokens() < 2) {
      // The one refusal a valid input can meet: nothing to decode after the first token.
      bool refused = false;
      try {
        (void)mode.run(in, cfg, {});
      } catch (const attn::UsageError&) {
        refused = true;
      }
      check(refused);
      continue;
    }
    attn::Trace t = [&] {
      try {
        return mode.run(in, cfg, {});
      } catch (const attn::UsageError&) {  // d_out 4 with 4 heads is fine; nothing else should refuse
        check(false);
        throw;
      }
    }();
    attn_fuzz::check_terminal_safe(attn::render_text(t), false);
    attn::TextStyle coloured_maps;  // colour and heatmaps: labels clipped, colour escapes attn's own
    coloured_maps.color = coloured_maps.heatmaps = true;
    attn_fuzz::check_terminal_safe(attn::render_text(t, coloured_maps), true);
    const auto doc = attn_fuzz::check_strict_json(attn::render_json(t));
    check(doc["inputs"]["tokens"].get<std::vector<std::string>>() == in.tokens);
    const attn::Document page{lesson.info.name, {t}, {}};
    attn_fuzz::check_html_safe(attn::join(attn::find_format("html")->make({})->render(page)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (auto format : {attn::InputFormat::Json, attn::InputFormat::Table, attn::InputFormat::Npy,
                      attn::format_of_content(bytes)}) {
    try {
      exercise(attn::parse_embeddings(bytes, "fuzz", format));
    } catch (const attn::InputError&) {
      // refused with a message: what a bad file should get
    }
  }
  return 0;
}
