#pragma once
// The presenter's slides and where the class is in them, without a terminal: which slide, how far it is
// scrolled, whether its result is revealed, and what each key does. present/presenter.cpp draws a Deck
// with ncurses and turns the terminal's keys into Deck::Key; the tests drive a Deck directly as well.
#include <optional>
#include <string>
#include <vector>

#include "render/layout.hpp"
#include "document/document.hpp"

namespace attn {

class Deck {
 public:
  // What a key asks for, whichever key it was (presenter.cpp maps the terminal's keys and clicker keys).
  enum class Key {
    Next,        // → Space PageDown (what clickers send)
    Prev,        // ← PageUp Backspace
    First,       // Home F5
    Last,        // End
    PrevLesson,  // [
    NextLesson,  // ]
    Up,          // ↑ k: scroll the slide
    Down,        // ↓ j
    GoTo,        // g: then a number N and Enter: step N of the lesson, as [N/n] numbers it (0: its intro)
    Digit,       // 0-9 after g
    Enter,       // Enter: ends g's number; on a grid of heads with one selected (Tab), opens it; else Next
    Cancel,      // Esc: ends g's number; closes an open head (back to every head, that one selected); else quits
    Help,        // ?
    Numbers,     // n: every number of a heatmap
    Scale,       // s: the heatmap's colour scale, fixed -> matrix -> row -> fixed
    Tensor,      // t: the printed tensor before the heatmap (again: the heatmap first)
    NextHead,    // + (=): a step of several heads: the next head alone, enlarged, with every number; past the
                 // last, every head again
    PrevHead,    // -: the head before; before the first, every head again
    Select,      // Tab: a step of several heads: select the next head of the grid (wrapping), or, with one open,
                 // open the next; Enter opens the selected head
    SelectPrev,  // Shift-Tab: the head before
    Blank,       // b or .: a blank screen, as a clicker's "black screen" key
    Quit,        // q, Ctrl-C
  };

  struct Slide {
    std::size_t lesson;                // index into the document's traces
    std::optional<std::size_t> step;   // index into its steps; none: the lesson's first slide
  };

  // `explain`: each step's explanation and code (--no-explain: the title and the result only).
  Deck(const Document& doc, bool reveal, bool explain = true);

  void press(Key key, char digit = 0);

  // The slide's lines at `width` columns: the title, then, once revealed, a step's heatmap first, its
  // explanation and code, and its tensor (t: the tensor before the heatmap, as the text view orders them).
  std::vector<Line> lines(std::size_t width, bool color) const;
  // The status line's text: lesson, step k/n (k as the slide's [k/n]; 0: the lesson's intro), and as many of
  // the keys as fit in `width` columns.
  std::string status(std::size_t width) const;
  // What the status line says first of a slide taller than the screen, scrolled by scroll() with `below`
  // lines under the screen: " [3 up 20 down, Up/Down]".
  std::string scrolled(std::size_t below) const;

  const std::vector<Slide>& slides() const { return slides_; }
  std::size_t at() const { return at_; }
  bool revealed() const { return revealed_; }
  bool quit() const { return quit_; }
  bool help() const { return help_; }
  bool blank() const { return blank_; }
  bool numbers() const { return numbers_; }
  HeatScale scale() const { return scale_; }
  void set_scale(HeatScale s) { scale_ = s; }
  bool tensor_first() const { return tensor_first_; }
  // The head drawn alone, enlarged (+ and -, or Enter on the selected head), counted from 0; none: every head.
  const std::optional<std::size_t>& head() const { return head_; }
  // The head selected in the grid of every head (Tab, Shift-Tab; Esc leaves the head it closes selected), counted
  // from 0; none: none selected, or a head is open.
  std::optional<std::size_t> selected() const { return head_ ? std::nullopt : selected_; }
  // The number of heads the slide's step draws (render/heatmap.hpp's heat_maps): 0 without a heatmap.
  std::size_t heads() const;
  const std::optional<std::string>& go_to() const { return go_to_; }
  // Lines scrolled off the top; the presenter clamps it to what the screen can show (set_scroll).
  std::size_t scroll() const { return scroll_; }
  void set_scroll(std::size_t s) { scroll_ = s; }

  // The help overlay's lines.
  static std::vector<std::string> help_lines(const Words& words);
  // The deck's words (the document's).
  const Words& words() const { return doc_.words; }

 private:
  void arrive(std::size_t slide, bool from_before);
  std::size_t lesson_start(std::size_t lesson) const;
  bool has_body(std::size_t slide) const;

  const Document& doc_;
  bool reveal_;
  bool explain_;
  std::vector<Slide> slides_;
  std::size_t at_ = 0;
  std::size_t scroll_ = 0;
  bool revealed_ = true;
  bool quit_ = false, help_ = false, blank_ = false, numbers_ = false, tensor_first_ = false;
  HeatScale scale_ = HeatScale::Fixed;
  std::optional<std::size_t> head_;
  std::optional<std::size_t> selected_;
  std::optional<std::string> go_to_;
};

}  // namespace attn
