#include "document/document.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/limits.hpp"

namespace attn {

namespace {

// `id` is among the --step ids, or there are none.
bool listed(const std::vector<std::string>& only, const std::string& id) {
  return only.empty() || std::find(only.begin(), only.end(), id) != only.end();
}

std::size_t string_bytes(const std::string& s) { return sizeof(std::string) + s.capacity(); }

}  // namespace

std::size_t Step::numel() const {
  std::size_t n = 1;
  for (std::size_t d : shape) n = saturating_product({n, d});
  return n;
}

std::string where_in_book(const LessonInfo& info) { return book_place(info, Words()); }

std::string book_place(const LessonInfo& info, const Words& words) {
  return words.page(info.section.rfind("ch", 0) == 0 ? "where_bonus" : "where_section", {{"section", info.section}});
}

const Step& Section::step(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return s;
  throw std::out_of_range("no step '" + id + "' in lesson " + info.name);
}

bool Section::has_step(const std::string& id) const {
  return std::any_of(steps.begin(), steps.end(), [&](const Step& s) { return s.id == id; });
}

bool Section::shows(const std::string& id) const { return listed(only, id); }

std::size_t Section::text_bytes() const {
  std::size_t bytes = 0;
  for (const std::string& token : inputs.tokens) bytes = saturating_sum(bytes, string_bytes(token));
  for (const Step& s : steps) {
    std::size_t words = sizeof(Step);
    for (const std::string* w : {&s.id, &s.title, &s.explanation, &s.code, &s.show}) words += w->capacity();
    if (s.run) words += s.run->capacity();
    for (const std::string& note : s.head_notes) words += string_bytes(note);
    bytes = saturating_sum(bytes, words);
  }
  return bytes;
}

std::size_t Section::shown_bytes() const {
  std::size_t bytes = saturating_sum(saturating_product({inputs.embeddings.size(), sizeof(float)}), text_bytes());
  for (const auto& s : steps)
    if (shows(s.id)) bytes = saturating_sum(bytes, saturating_product({s.numel(), sizeof(float)}));
  return bytes;
}

bool Document::shows(const Step& step) const { return listed(only, step.id); }

}  // namespace attn
