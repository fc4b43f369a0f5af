// libFuzzer target: any bytes as a JSON or CSV embeddings file. Loading either succeeds with a
// well-formed Inputs or throws InputError; for small inputs the whole pipeline (a lesson and both
// renderers) must then run without crashing. Built by scripts/fuzz.sh (clang, -fsanitize=fuzzer).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/embeddings.hpp"
#include "lessons/lessons.hpp"
#include "render/json.hpp"
#include "render/text.hpp"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void exercise(const attn::Inputs& in) {
  check(in.num_tokens() >= 1 && in.d_in() >= 1 && in.tokens.size() == in.num_tokens());
  for (float v : in.embeddings) check(std::isfinite(v));
  if (in.num_tokens() * in.d_in() > 256) return;  // keep each run fast
  const attn::Trace t = attn::run_all_tokens(in, {});
  check(!attn::render_text(t).empty());
  check(!attn::render_json(t).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (auto parse : {attn::parse_embeddings_json, attn::parse_embeddings_table}) {
    try {
      exercise(parse(text, "fuzz"));
    } catch (const attn::InputError&) {
      // refused with a message: what a bad file should get
    }
  }
  return 0;
}
