#include "trace/trace.hpp"

#include <algorithm>
#include <stdexcept>

namespace attn {

Trace::Trace(LessonInfo lesson_info, const Inputs& in) : info(std::move(lesson_info)), inputs(in) {}

std::string where_in_book(const LessonInfo& info) {
  if (info.section.rfind("ch", 0) == 0) return "bonus material " + info.section + " in the book's repository";
  return "book section " + info.section;
}

const Step& Trace::step(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return s;
  throw std::out_of_range("no step '" + id + "' in lesson " + info.name);
}

bool Trace::has_step(const std::string& id) const {
  return std::any_of(steps.begin(), steps.end(), [&](const Step& s) { return s.id == id; });
}

bool Document::shows(const Step& step) const {
  return only.empty() || std::find(only.begin(), only.end(), step.id) != only.end();
}

}  // namespace attn
