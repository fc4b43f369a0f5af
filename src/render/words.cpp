#include "render/words.hpp"

namespace attn {

std::string words(const std::string& file, const std::string& language, const std::string& name,
                  const TextValues& values) {
  const Content& c = lesson_content(file, language);
  const std::string path = "phrases/" + name;
  return fill(c.piece(path, ""), values, c.path() + ": " + path, c.language(path, ""));
}

std::string book_place(const LessonInfo& info, const std::string& language) {
  return words("page", language, info.section.rfind("ch", 0) == 0 ? "where_bonus" : "where_section",
               {{"section", info.section}});
}

}  // namespace attn
