#include "inputs/input_text.hpp"

#include <utility>

namespace attn {

InputStep input_step(const Words& words, std::string id, const TextValues& values, AnyTensor tensor,
                     const std::string& piece, const std::string& variant) {
  const Content& c = words.content("inputs");
  const std::string base = "steps/" + (piece.empty() ? id : piece) + "/";
  InputStep s;
  s.id = std::move(id);
  s.title = words.fill_piece(c, base + "title", variant, values);
  s.explanation = words.fill_piece(c, base + "explanation", variant, values);
  s.code = words.fill_piece(c, base + "code", variant, values);
  if (c.has(base + "run")) s.run = words.fill_piece(c, base + "run", variant, values);
  if (c.has(base + "show")) s.show = words.fill_piece(c, base + "show", variant, values);
  s.tensor = std::move(tensor);
  return s;
}

std::string input_phrase(const Words& words, const std::string& name, const TextValues& values) {
  return words.phrase("inputs", name, values);
}

void describe_source(Inputs& in, const Words& words, const std::string& name, const TextValues& values) {
  in.source = Words().phrase("inputs", name, values);
  in.source_words = words.phrase("inputs", name, values);
}

}  // namespace attn
