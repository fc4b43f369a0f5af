#include "present/deck.hpp"

#include "render/heatmap.hpp"
#include "core/terminal_text.hpp"
#include "text/words.hpp"

#include <algorithm>
#include <sstream>

namespace attn {

Deck::Deck(const Document& doc, bool reveal, bool explain) : doc_(doc), reveal_(reveal), explain_(explain) {
  for (std::size_t l = 0; l < doc.sections.size(); ++l) {
    slides_.push_back({l, std::nullopt});
    for (std::size_t s = 0; s < doc.sections[l].steps.size(); ++s)
      if (doc.shows(doc.sections[l].steps[s])) slides_.push_back({l, s});
  }
  arrive(0, true);
}

bool Deck::has_body(std::size_t slide) const { return slides_[slide].step.has_value(); }

// Coming forward onto a step in reveal mode, its result waits for the next key; coming back, it is shown.
void Deck::arrive(std::size_t slide, bool from_before) {
  at_ = std::min(slide, slides_.size() - 1);
  scroll_ = 0;
  head_.reset();  // a new step shows all its heads, none selected
  selected_.reset();
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
        // Step k of the current lesson, as [k/n] and the status line number it (0: the lesson's intro); a
        // step --step does not show: the nearest shown before it.
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
  const auto grid = [this] { return revealed_ && heads() >= 2; };  // a step of several heads, shown
  switch (key) {
    case Key::Enter:
      if (!head_ && selected_ && grid()) {  // the selected head, opened
        head_ = selected_;
        scroll_ = 0;
        break;
      }
      [[fallthrough]];
    case Key::Next:
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
      if (slides_[at_].lesson + 1 < doc_.sections.size()) arrive(lesson_start(slides_[at_].lesson + 1), true);
      break;
    case Key::Up:
      if (scroll_ > 0) --scroll_;
      break;
    case Key::Down: ++scroll_; break;  // the presenter clamps it to the slide's length
    case Key::GoTo: go_to_ = std::string(); break;
    case Key::Digit: break;
    case Key::Cancel:
      if (head_) {  // back to every head, the one that was open selected
        selected_ = head_;
        head_.reset();
        scroll_ = 0;
      } else {
        quit_ = true;
      }
      break;
    case Key::Quit: quit_ = true; break;
    case Key::Help: help_ = true; break;
    case Key::Numbers: numbers_ = !numbers_; break;
    case Key::Scale:  // fixed, then the matrix's min..max, then each row's own, then fixed again
      scale_ = scale_ == HeatScale::Fixed ? HeatScale::Matrix : scale_ == HeatScale::Matrix ? HeatScale::Row : HeatScale::Fixed;
      break;
    case Key::Tensor:
      tensor_first_ = !tensor_first_;
      scroll_ = 0;
      break;
    case Key::NextHead:
    case Key::PrevHead: {
      const std::size_t n = heads();
      if (!grid()) break;
      if (head_) selected_ = head_;  // past the last or the first: every head, the last one open selected
      if (key == Key::NextHead) {
        head_ = !head_ ? std::optional<std::size_t>(0) : *head_ + 1 < n ? std::optional<std::size_t>(*head_ + 1) : std::nullopt;
      } else {
        head_ = !head_ ? std::optional<std::size_t>(n - 1) : *head_ > 0 ? std::optional<std::size_t>(*head_ - 1) : std::nullopt;
      }
      scroll_ = 0;
      break;
    }
    case Key::Select:
    case Key::SelectPrev: {  // wrapping: from the last head to the first
      if (!grid()) break;
      const std::size_t n = heads();
      std::optional<std::size_t>& at = head_ ? head_ : selected_;
      if (key == Key::Select) {
        at = at ? (*at + 1) % n : 0;
      } else {
        at = at ? (*at + n - 1) % n : n - 1;
      }
      if (head_) scroll_ = 0;
      break;
    }
    case Key::Blank: blank_ = true; break;
  }
}

std::vector<Line> Deck::lines(std::size_t width, bool color) const {
  const Slide& s = slides_[at_];
  const Section& t = doc_.sections[s.lesson];
  LayoutOptions o;
  o.width = width;
  o.color = color;
  o.numbers = numbers_;
  o.scale = scale_;
  o.explain = explain_;
  o.head = head_;
  o.selected = selected();
  o.words = doc_.words;
  o.numbers_hint = doc_.words.screen("numbers_hint");
  SlideText text = s.step ? step_slide(t, *s.step, o) : lesson_slide(t, s.lesson + 1, doc_.sections.size(), o);
  std::vector<Line> out = std::move(text.title);
  const auto part = [&](std::vector<Line>&& lines) {
    if (lines.empty()) return;
    out.push_back({});
    for (auto& l : lines) out.push_back(std::move(l));
  };
  if (!revealed_) {  // --reveal: the explanation and code first
    part(std::move(text.text));
    part(wrap_text(doc_.words.screen("reveal"), width, "  ", Role::Legend));
  } else if (tensor_first_ || text.figure.empty()) {  // t: the text view's order
    part(std::move(text.text));
    part(std::move(text.tensor));
    part(std::move(text.figure));
  } else {  // the figure first, right under the title: on screen without scrolling
    part(std::move(text.figure));
    part(std::move(text.text));
    part(std::move(text.tensor));
  }
  return out;
}

std::size_t Deck::heads() const {
  const Slide& s = slides_[at_];
  if (!s.step) return 0;
  const Section& t = doc_.sections[s.lesson];
  const Step& step = t.steps[*s.step];
  return step.heatmap ? heat_maps(step, t.inputs.tokens, doc_.words).size() : 0;
}

std::string Deck::status(std::size_t width) const {
  const Slide& s = slides_[at_];
  const Section& t = doc_.sections[s.lesson];
  const auto say = [this](const char* name, const TextValues& values = {}) {
    return doc_.words.screen(name, values);
  };
  // Step k/n as the slide's [k/n] says; the lesson's intro is step 0.
  std::string where = say("status_where", {{"name", t.info.name},
                                           {"k", std::to_string(s.lesson + 1)},
                                           {"n", std::to_string(doc_.sections.size())},
                                           {"s", std::to_string(s.step ? *s.step + 1 : 0)},
                                           {"steps", std::to_string(t.steps.size())}});
  if (!s.step) where += say("status_intro");
  if (!revealed_) where += say("status_reveal");
  if (head_) where += say("status_head", {{"h", std::to_string(*head_)}, {"heads", std::to_string(heads())}});
  if (selected())
    where += say("status_selected", {{"h", std::to_string(*selected())}, {"heads", std::to_string(heads())}});
  if (go_to_) return where + say("status_go_to", {{"typed", *go_to_}});
  // The keys, as many as fit (in columns: a Russian letter is two bytes and one column).
  const bool several = heads() >= 2;
  for (const char* keys : {"keys_all", "keys_no_heads", "keys_short", "keys_shorter", "keys_shortest"}) {
    if (!several && std::string(keys) == "keys_all") continue;
    const std::string line = where + say(keys);
    if (display_width(line) <= width) return line;
  }
  return where;
}

std::string Deck::scrolled(std::size_t below) const {
  const auto say = [&](const char* name, std::size_t n) {
    return doc_.words.screen(name, {{"n", std::to_string(n)}});
  };
  return doc_.words.screen("scrolled",
               {{"where", (scroll_ ? say("scroll_up", scroll_) + " " : std::string()) +
                              (below ? say("scroll_down", below) : say("scroll_end", 0))}});
}

std::vector<std::string> Deck::help_lines(const Words& words) {
  std::vector<std::string> lines;
  std::istringstream help(words.screen("help"));
  for (std::string line; std::getline(help, line);) lines.push_back(line);
  return lines;
}

}  // namespace attn
