#include "present/presenter.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <langinfo.h>
#include <optional>
#include <string>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/terminal_text.hpp"
#include "present/deck.hpp"
#include "render/palette.hpp"

// Last, and as functions rather than macros (move, erase, refresh, timeout would clash with other names).
#define NCURSES_NOMACROS
#include <curses.h>

namespace attn {

namespace {

// Colour pairs: the theme's roles, then kLevels steps of the heatmap palette, then kLevels of the diverging one.
enum Pair : short { kBase = 1, kHeading, kId, kCode, kLabel, kLegend, kMasked, kOff, kStatus, kFirstLevel = 16 };
constexpr int kLevels = 32;

struct ThemeColors {
  short fg, bg, heading, id, code, label, legend, masked_fg, masked_bg, off, status_fg, status_bg;
  Palette palette;
};

// xterm 256-colour indices. Every role reads on the theme's background at a projector's contrast; none
// is dim (A_DIM is never used): code and labels are a colour of their own, not a faded one.
ThemeColors colors_of(Theme theme) {
  switch (theme) {
    case Theme::Light:  // black on white; blue ids, brown code; cividis cells
      return {16, 231, 16, 25, 94, 236, 236, 236, 250, 160, 231, 25, Palette::Cividis};
    case Theme::Contrast:  // white on black, yellow ids, cyan code, bold everywhere
      return {231, 16, 231, 226, 51, 231, 231, 231, 241, 196, 16, 226, Palette::Viridis};
    case Theme::Dark:
    default:  // light grey on near-black; sky-blue ids, wheat code
      return {255, 234, 231, 117, 223, 252, 252, 252, 240, 203, 16, 117, Palette::Viridis};
  }
}

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }
const int kStopSignals[] = {SIGTERM, SIGHUP, SIGINT};

// The terminal in ncurses' hands for the object's lifetime; restored by the destructor on every way out
// (a return, an exception), and the signal handlers put back.
class Screen {
 public:
  Screen() {
    if (::isatty(STDIN_FILENO) != 1 || ::isatty(STDOUT_FILENO) != 1)
      throw UsageError(kNeedsTerminal);
    // ncurses draws UTF-8 (labels, ·, shades) only under a UTF-8 character locale. LC_CTYPE only: numbers
    // keep the C locale's decimal point, as PyTorch prints them, whatever LC_NUMERIC the user has.
    std::setlocale(LC_CTYPE, "");
    if (std::strcmp(nl_langinfo(CODESET), "UTF-8") != 0) std::setlocale(LC_CTYPE, "C.UTF-8");
    screen_ = newterm(nullptr, stdout, stdin);
    if (screen_ == nullptr)
      throw UsageError("attn present cannot use this terminal (TERM='" + visible(term_name()) +
                       "' is unknown to terminfo); try attn tour --pause");
    const char* cup = tigetstr(const_cast<char*>("cup"));
    if (cup == nullptr || cup == reinterpret_cast<char*>(-1)) {
      endwin();
      delscreen(screen_);
      screen_ = nullptr;
      throw UsageError("attn present needs a terminal that can place the cursor, which TERM='" + visible(term_name()) +
                       "' cannot; try attn tour --pause");
    }
    raw();  // Ctrl-C and Ctrl-Z arrive as keys: q's way out, never a half-restored terminal
    noecho();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    timeout(100);  // getch returns every 100 ms so a SIGTERM or SIGHUP is noticed
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &sa, &old_[i]);
  }
  ~Screen() {
    if (screen_ == nullptr) return;
    curs_set(1);
    endwin();  // leaves the alternate screen, gives back echo and line mode
    delscreen(screen_);
    for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &old_[i], nullptr);
  }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

 private:
  static std::string term_name() {
    const char* t = std::getenv("TERM");
    return t == nullptr ? std::string() : std::string(t);
  }
  SCREEN* screen_ = nullptr;
  struct sigaction old_[3] {};
};

class Painter {
 public:
  explicit Painter(const PresentOptions& o) : contrast_(o.theme == Theme::Contrast) {
    color_ = o.color && has_colors() && start_color() == OK && COLORS >= 256 && COLOR_PAIRS >= kFirstLevel + 2 * kLevels;
    if (!color_) return;
    const ThemeColors c = colors_of(o.theme);
    init_pair(kBase, c.fg, c.bg);
    init_pair(kHeading, c.heading, c.bg);
    init_pair(kId, c.id, c.bg);
    init_pair(kCode, c.code, c.bg);
    init_pair(kLabel, c.label, c.bg);
    init_pair(kLegend, c.legend, c.bg);
    init_pair(kMasked, c.masked_fg, c.masked_bg);
    init_pair(kOff, c.off, c.bg);
    init_pair(kStatus, c.status_fg, c.status_bg);
    for (int level = 0; level < kLevels; ++level) {
      const Rgb rgb = palette_color(c.palette, level / static_cast<double>(kLevels - 1));
      init_pair(static_cast<short>(kFirstLevel + level), is_light(rgb) ? 16 : 231, static_cast<short>(xterm256(rgb)));
      // then the diverging palette's, for signed matrices centred on 0
      const Rgb signed_rgb = palette_color(Palette::Diverging, level / static_cast<double>(kLevels - 1));
      init_pair(static_cast<short>(kFirstLevel + kLevels + level), is_light(signed_rgb) ? 16 : 231,
                static_cast<short>(xterm256(signed_rgb)));
    }
    bkgd(COLOR_PAIR(kBase));
  }

  bool color() const { return color_; }

  attr_t attr(const Span& s) const {
    const attr_t bold = contrast_ ? A_BOLD : A_NORMAL;
    if (!color_) {  // monochrome: bold for titles, reverse video for the highlights
      return s.role == Role::Heading ? A_BOLD
             : s.role == Role::StepId || s.role == Role::Selected ? A_BOLD | A_REVERSE
                                                                  : A_NORMAL;
    }
    switch (s.role) {
      case Role::Heading: return COLOR_PAIR(kHeading) | A_BOLD;
      case Role::StepId: return COLOR_PAIR(kId) | A_BOLD;
      case Role::Code: return COLOR_PAIR(kCode) | bold;
      case Role::Label: return COLOR_PAIR(kLabel) | bold;
      case Role::Selected: return COLOR_PAIR(kLabel) | A_BOLD | A_REVERSE;
      case Role::Legend: return COLOR_PAIR(kLegend) | bold;
      case Role::Masked: return COLOR_PAIR(kMasked);
      case Role::Off: return COLOR_PAIR(kOff) | A_BOLD;
      case Role::Cell: {
        const int level = std::clamp(static_cast<int>(std::lround(s.shade * (kLevels - 1))), 0, kLevels - 1);
        return COLOR_PAIR(kFirstLevel + (s.diverging ? kLevels : 0) + level);
      }
      case Role::Text:
      case Role::Tensor:
      default: return COLOR_PAIR(kBase) | bold;
    }
  }
  attr_t status() const { return color_ ? COLOR_PAIR(kStatus) | A_BOLD : A_REVERSE; }

 private:
  bool contrast_;
  bool color_ = false;
};

// Writes `text` at the cursor, at most `room` columns of it (the layout fits the width; this only guards
// against the last column, where writing would scroll the screen).
void put(const std::string& text, attr_t a, std::size_t& room) {
  if (room == 0) return;
  const std::string fitted = display_width(text) <= room ? text : clip_to_width(text, room);
  attrset(a);
  addstr(fitted.c_str());
  room -= std::min(room, display_width(fitted));
}

void draw(Deck& deck, const Painter& paint) {
  erase();
  int rows = 0, cols = 0;
  getmaxyx(stdscr, rows, cols);
  if (deck.blank()) {
    refresh();
    return;
  }
  const std::size_t width = static_cast<std::size_t>(std::max(cols, 1));
  const std::size_t height = static_cast<std::size_t>(std::max(rows - 1, 1));  // the last row: the status
  const std::vector<Line> lines = deck.lines(width > 1 ? width - 1 : 1, paint.color());
  const std::size_t max_scroll = lines.size() > height ? lines.size() - height : 0;
  deck.set_scroll(std::min(deck.scroll(), max_scroll));
  for (std::size_t y = 0; y < height && deck.scroll() + y < lines.size(); ++y) {
    move(static_cast<int>(y), 0);
    std::size_t room = width - 1;
    for (const Span& s : lines[deck.scroll() + y]) put(s.text, paint.attr(s), room);
  }
  // The status line, with what is above and below when the slide is taller than the screen.
  const std::string scrolled = max_scroll > 0 ? deck.scrolled(lines.size() - height - deck.scroll()) : std::string();
  const std::size_t scrolled_width = display_width(scrolled);
  const std::string status = scrolled + " " + deck.status(width - 2 - std::min(width - 2, scrolled_width));
  move(rows - 1, 0);
  std::size_t room = width - 1;
  const std::size_t status_width = display_width(status);
  const std::string padded = status_width < width - 1 ? status + std::string(width - 1 - status_width, ' ') : status;
  put(padded, paint.status(), room);
  if (deck.help()) {
    const std::vector<std::string> help = Deck::help_lines(deck.words());
    std::size_t box = 0;
    for (const auto& l : help) box = std::max(box, display_width(l));
    box = std::min(box + 4, width - 1);
    const int top = std::max(0, (rows - static_cast<int>(help.size()) - 2) / 2);
    const int left = std::max(0, (cols - static_cast<int>(box)) / 2);
    for (std::size_t i = 0; i < help.size() + 2 && top + static_cast<int>(i) < rows - 1; ++i) {
      move(top + static_cast<int>(i), left);
      const std::string text = i == 0 || i == help.size() + 1 ? std::string() : "  " + help[i - 1];
      std::size_t r = box;
      put(text + std::string(box > display_width(text) ? box - display_width(text) : 0, ' '), paint.status(), r);
    }
  }
  refresh();
}

// The terminal's key, as what it asks of the deck. Presenter clickers send PageUp/PageDown, arrows, b,
// ., F5 and Esc; all of them mean something here.
std::optional<Deck::Key> key_of(int ch) {
  switch (ch) {
    case KEY_RIGHT: case ' ': case KEY_NPAGE: return Deck::Key::Next;
    case '\n': case '\r': case KEY_ENTER: return Deck::Key::Enter;
    case KEY_LEFT: case KEY_PPAGE: case KEY_BACKSPACE: case 127: case 8: return Deck::Key::Prev;
    case KEY_HOME: case KEY_F(5): return Deck::Key::First;
    case KEY_END: return Deck::Key::Last;
    case '[': return Deck::Key::PrevLesson;
    case ']': return Deck::Key::NextLesson;
    case KEY_UP: case 'k': return Deck::Key::Up;
    case KEY_DOWN: case 'j': return Deck::Key::Down;
    case 'g': return Deck::Key::GoTo;
    case 27: return Deck::Key::Cancel;
    case '?': case 'h': return Deck::Key::Help;
    case 'n': return Deck::Key::Numbers;
    case 's': return Deck::Key::Scale;
    case 't': return Deck::Key::Tensor;
    case '+': case '=': return Deck::Key::NextHead;
    case '-': case '_': return Deck::Key::PrevHead;
    case '\t': return Deck::Key::Select;
    case KEY_BTAB: return Deck::Key::SelectPrev;
    case 'b': case 'B': case '.': return Deck::Key::Blank;
    case 'q': case 'Q': case 3: return Deck::Key::Quit;  // 3: Ctrl-C in raw mode
    default:
      if (ch >= '0' && ch <= '9') return Deck::Key::Digit;
      return std::nullopt;
  }
}

}  // namespace

void present(const Document& doc, const PresentOptions& options) {
  Deck deck(doc, options.reveal, options.explain);
  deck.set_scale(options.scale);
  const Screen screen;
  const Painter paint(options);
  draw(deck, paint);
  while (!deck.quit() && g_stop == 0) {
    const int ch = getch();
    if (ch == ERR) continue;  // the 100 ms timeout: check for a signal
    if (ch == KEY_RESIZE) {   // SIGWINCH: ncurses has the new size; lay the slide out again
      draw(deck, paint);
      continue;
    }
    std::optional<Deck::Key> key = key_of(ch);
    if (!key && (deck.help() || deck.blank())) key = Deck::Key::Next;  // any key closes the help or the blank
    if (!key) continue;
    deck.press(*key, static_cast<char>(ch));
    if (!deck.quit()) draw(deck, paint);
  }
}

}  // namespace attn
