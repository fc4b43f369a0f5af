#include "present/deck.hpp"

#include <algorithm>

namespace attn {

Deck::Deck(const Document& doc, bool reveal) : doc_(doc), reveal_(reveal) {
  for (std::size_t l = 0; l < doc.traces.size(); ++l) {
    slides_.push_back({l, std::nullopt});
    for (std::size_t s = 0; s < doc.traces[l].steps.size(); ++s)
      if (doc.shows(doc.traces[l].steps[s])) slides_.push_back({l, s});
  }
  arrive(0, true);
}

bool Deck::has_body(std::size_t slide) const { return slides_[slide].step.has_value(); }

// Coming forward onto a step in reveal mode, its result waits for the next key; coming back, it is shown.
void Deck::arrive(std::size_t slide, bool from_before) {
  at_ = std::min(slide, slides_.size() - 1);
  scroll_ = 0;
  revealed_ = !(reveal_ && from_before && has_body(at_));
}

std::size_t Deck::lesson_start(std::size_t lesson) const {
  for (std::size_t i = 0; i < slides_.size(); ++i)
    if (slides_[i].lesson == lesson) return i;
  return 0;
}

void Deck::press(Key key, char digit) {
  if (help_ && key != Key::Quit) {  // any key closes the help
    help_ = false;
    return;
  }
  if (blank_ && key != Key::Quit) {  // any key brings the slide back
    blank_ = false;
    return;
  }
  if (go_to_) {  // typing a step number after g
    if (key == Key::Digit && go_to_->size() < 6) {
      *go_to_ += digit;
    } else if (key == Key::Prev && !go_to_->empty()) {  // Backspace
      go_to_->pop_back();
    } else if (key == Key::Enter || key == Key::Next) {
      if (!go_to_->empty()) {
        // Step k of the current lesson, as the status line counts them (0: the lesson's first slide).
        const std::size_t lesson = slides_[at_].lesson, k = std::stoul(*go_to_);
        std::size_t target = lesson_start(lesson);
        for (std::size_t i = target; i < slides_.size() && slides_[i].lesson == lesson; ++i)
          if (slides_[i].step && *slides_[i].step + 1 <= k) target = i;
        arrive(target, true);
      }
      go_to_.reset();
    } else if (key == Key::Cancel || key == Key::GoTo) {
      go_to_.reset();
    } else if (key == Key::Quit) {
      quit_ = true;
    }
    return;
  }
  const std::size_t last = slides_.size() - 1;
  switch (key) {
    case Key::Next:
    case Key::Enter:
      if (!revealed_) {
        revealed_ = true;
      } else if (at_ < last) {
        arrive(at_ + 1, true);
      }
      break;
    case Key::Prev:
      if (at_ > 0) arrive(at_ - 1, false);
      break;
    case Key::First: arrive(0, true); break;
    case Key::Last: arrive(last, true); break;
    case Key::PrevLesson: {
      const std::size_t start = lesson_start(slides_[at_].lesson);
      // Within a lesson, [ goes back to its start; at its start, to the lesson before.
      if (at_ != start || slides_[at_].lesson == 0) {
        arrive(start, true);
      } else {
        arrive(lesson_start(slides_[at_].lesson - 1), true);
      }
      break;
    }
    case Key::NextLesson:
      if (slides_[at_].lesson + 1 < doc_.traces.size()) arrive(lesson_start(slides_[at_].lesson + 1), true);
      break;
    case Key::Up:
      if (scroll_ > 0) --scroll_;
      break;
    case Key::Down: ++scroll_; break;  // the presenter clamps it to the slide's length
    case Key::GoTo: go_to_ = std::string(); break;
    case Key::Digit: break;
    case Key::Cancel:
    case Key::Quit: quit_ = true; break;
    case Key::Help: help_ = true; break;
    case Key::Numbers: numbers_ = !numbers_; break;
    case Key::Scale:  // fixed, then the matrix's min..max, then each row's own, then fixed again
      scale_ = scale_ == HeatScale::Fixed ? HeatScale::Matrix : scale_ == HeatScale::Matrix ? HeatScale::Row : HeatScale::Fixed;
      break;
    case Key::Blank: blank_ = true; break;
  }
}

std::vector<Line> Deck::lines(std::size_t width, bool color) const {
  const Slide& s = slides_[at_];
  const Trace& t = doc_.traces[s.lesson];
  LayoutOptions o;
  o.width = width;
  o.color = color;
  o.numbers = numbers_;
  o.scale = scale_;
  o.numbers_hint = "(n: every number)";
  SlideText text = s.step ? step_slide(t, *s.step, o) : lesson_slide(t, s.lesson + 1, doc_.traces.size(), o);
  std::vector<Line> out = std::move(text.head);
  if (!text.body.empty()) {
    out.push_back({});
    if (revealed_) {
      for (auto& l : text.body) out.push_back(std::move(l));
    } else {
      for (auto& l : wrap_text("What will it be? The result appears on the next key.", width, "  ", Role::Legend))
        out.push_back(std::move(l));
    }
  }
  return out;
}

std::string Deck::status(std::size_t width) const {
  const Slide& s = slides_[at_];
  const Trace& t = doc_.traces[s.lesson];
  std::string where = "attn " + t.info.name + "  lesson " + std::to_string(s.lesson + 1) + "/" +
                      std::to_string(doc_.traces.size()) + "  ";
  where += s.step ? "step " + std::to_string(*s.step + 1) + "/" + std::to_string(t.steps.size()) : "intro";
  if (!revealed_) where += "  (next key: result)";
  if (go_to_) return where + "  go to step: " + *go_to_ + "_  (Enter: go, Esc: cancel)";
  // The keys, as many as fit.
  for (const char* keys : {"  |  <- -> steps  [ ] lessons  g go to  n numbers  s scale  ? help  q quit",
                           "  |  <- -> steps  [ ] lessons  ? help  q quit", "  |  ? help  q quit"}) {
    if (where.size() + std::char_traits<char>::length(keys) <= width) return where + keys;
  }
  return where;
}

std::vector<std::string> Deck::help_lines() {
  return {"Keys",
          "",
          "next step       -> Space PageDown Enter",
          "previous step   <- PageUp Backspace",
          "first, last     Home (F5)  End",
          "lessons         [ previous   ] next",
          "go to step      g, a number, Enter",
          "scroll a step   Up Down (j k)",
          "numbers         n  every number of a heatmap",
          "scale           s  colours: fixed 0-1, matrix, each row",
          "blank screen    b .  (any key brings it back)",
          "quit            q Esc Ctrl-C",
          "",
          "With --reveal each step shows its code first:",
          "the result appears on the next key.",
          "",
          "Any key closes this help."};
}

}  // namespace attn
