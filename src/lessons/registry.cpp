// The lessons, in book order (a chapter's bonus material after its sections): one line each in ATTN_LESSONS.
// A lesson's file defines `Lesson NAME_lesson()`;
// adding a lesson is that file, its line here, its docs page and its golden data (docs/architecture.md).
#include "lessons/registry.hpp"

#include <algorithm>

#define ATTN_LESSONS(X) \
  X(simple)             \
  X(all_tokens)         \
  X(trainable)          \
  X(causal)             \
  X(dropout)            \
  X(mha_wrapper)        \
  X(mha)                \
  X(heads)              \
  X(dummy_gpt)          \
  X(layer_norm)         \
  X(gelu)               \
  X(feed_forward)       \
  X(shortcut)           \
  X(block)              \
  X(gpt)                \
  X(generate)           \
  X(gqa)                \
  X(kv_cache)

namespace attn {

#define ATTN_DECLARE_LESSON(name) Lesson name##_lesson();
ATTN_LESSONS(ATTN_DECLARE_LESSON)
#undef ATTN_DECLARE_LESSON

std::vector<Lesson> make_lessons() {
#define ATTN_LIST_LESSON(name) name##_lesson(),
  return {ATTN_LESSONS(ATTN_LIST_LESSON)};
#undef ATTN_LIST_LESSON
}

const std::vector<Lesson>& lessons() {
  static const std::vector<Lesson> all = make_lessons();
  return all;
}

const Lesson* find_lesson(const std::string& name) {
  const auto& all = lessons();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Lesson& l) { return l.info.name == name; });
  return it == all.end() ? nullptr : &*it;
}

LessonConfig book_config(const std::string& name) {
  const Lesson* lesson = find_lesson(name);
  return lesson == nullptr ? LessonConfig{} : lesson->modes.front().defaults;
}

bool LessonMode::takes(Opt o) const {
  return std::any_of(options.begin(), options.end(), [o](const OptionUse& u) { return u.opt == o; });
}

std::vector<Lesson::Use> Lesson::option_uses() const {
  std::vector<Use> out;
  for (const LessonMode& mode : modes)
    for (const OptionUse& use : mode.options)
      if (std::none_of(out.begin(), out.end(), [&](const Use& u) { return u.use->opt == use.opt; }))
        out.push_back({&mode, &use});
  return out;
}

bool Lesson::takes(Opt o) const {
  return std::any_of(modes.begin(), modes.end(), [o](const LessonMode& m) { return m.takes(o); });
}

std::size_t bytes_per_element(CacheDType t) { return t == CacheDType::FP32 ? 4 : 2; }

std::string to_string(CacheDType t) {
  switch (t) {
    case CacheDType::FP32: return "fp32";
    case CacheDType::BF16: return "bf16";
    case CacheDType::FP16: return "fp16";
  }
  return "?";
}

}  // namespace attn
