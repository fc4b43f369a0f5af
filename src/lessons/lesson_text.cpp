#include "lessons/lesson_text.hpp"

#include <stdexcept>

namespace attn {

LessonText::LessonText(Trace& t, const std::string& lesson)
    : t_(&t),
      own_(&t.words.content(lesson)),
      shared_(&t.words.content("shared")) {
  // The lesson's title and summary in the trace's language (the registry's LessonInfo is English).
  t.info.title = own_->piece("lesson/title", "");
  t.info.summary = own_->piece("lesson/summary", "");
}

std::string LessonText::text(const std::string& path, const std::string& variant) const {
  const Content& c = own_->has(path) ? *own_ : *shared_;
  return t_->words.fill_piece(c, path, variant, values_);
}

std::string LessonText::phrase(const TextKey& key) const { return text("phrases/" + key.pattern, key.variant); }

LessonText::StepWords LessonText::step(const TextKey& key) const {
  const std::string base = "steps/" + key.pattern + "/";
  const Content& c = own_->has(base + "title") ? *own_ : *shared_;
  StepWords w{fill(key.pattern, values_, c.path() + ": step " + key.pattern), text(base + "title", key.variant),
          text(base + "explanation", key.variant), text(base + "code", key.variant), std::nullopt, ""};
  if (c.has(base + "run")) w.run = text(base + "run", key.variant);
  if (c.has(base + "show")) w.show = text(base + "show", key.variant);
  return w;
}

Step& LessonText::notebook(StepWords& w, Step& s) const {
  s.run = std::move(w.run);
  s.show = std::move(w.show);
  // Filled again with every step, so it holds the lesson's values as of its last step.
  if (own_->has("phrases/notebook_setup")) t_->notebook_setup = phrase("notebook_setup");
  return s;
}

void LessonText::run_first(const std::string& id, const std::string& code) const {
  for (Step& s : t_->steps)
    if (s.id == id) {
      const std::string rest = s.run ? *s.run : s.code;
      s.run = rest.empty() ? code : code + "\n" + rest;
      return;
    }
  throw std::logic_error("run_first: no step " + id);
}

LessonInfo LessonText::info(const std::string& lesson, const std::string& section, const Words& words) {
  const Content& c = words.content(lesson);
  return {lesson, section, c.piece("lesson/title", ""), c.piece("lesson/summary", "")};
}

}  // namespace attn
