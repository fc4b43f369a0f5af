#include "text/words.hpp"

#include <stdexcept>
#include <utility>

namespace attn {

Words::Words(std::string language) : language_(std::move(language)) {
  // English is "": the one spelling, so that two Words of one language compare equal.
  if (language_ == "en") throw std::logic_error("Words(\"en\"): English is Words() (chosen_language gives \"\")");
}

std::string Words::fill_piece(const Content& c, const std::string& path, const std::string& variant,
                              const TextValues& values) const {
  return attn::fill(c.piece(path, variant), values, c.path() + ": " + path, c.language(path, variant));
}

std::string Words::phrase(const std::string& file, const std::string& name, const TextValues& values) const {
  return fill_piece(content(file), "phrases/" + name, "", values);
}

}  // namespace attn
