#pragma once
// What the layout tests share: a slide's lines as text, whether a layout cut any word of its source, and
// whether text is written in Cyrillic (the Russian tests' "is it translated").
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "core/terminal_text.hpp"
#include "render/layout.hpp"

namespace attn_test {

inline std::string text_of(const std::vector<attn::Line>& lines) {
  std::string out;
  for (const attn::Line& l : lines) out += attn::plain(l) + "\n";
  return out;
}

// The words of `s` (split at white space).
inline std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// True if every word of `source` is a whole word of `laid_out`, in the same order: nothing was cut. Only a
// word too wide for any line of `width` columns (a long line of code without spaces) may be split, into
// pieces that follow each other.
inline bool words_kept(const std::string& source, const std::string& laid_out, std::size_t width) {
  const std::vector<std::string> want = words_of(source), got = words_of(laid_out);
  std::size_t at = 0;
  for (const std::string& w : want) {
    if (attn::display_width(w) > width - 8) {
      std::string joined;
      while (at < got.size() && joined.size() < w.size()) joined += got[at++];
      if (joined.find(w) == std::string::npos) {
        UNSCOPED_INFO("wide word not in consecutive pieces: '" << w << "'");
        return false;
      }
      continue;
    }
    while (at < got.size() && got[at] != w) ++at;
    if (at == got.size()) {
      UNSCOPED_INFO("word cut or missing: '" << w << "'");
      return false;
    }
    ++at;
  }
  return true;
}

// Whether `text` has a Cyrillic letter (U+0400..U+04FF: 0xD0 or 0xD1, then a continuation byte).
inline bool has_cyrillic(const std::string& text) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if ((b == 0xD0 || b == 0xD1) && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) return true;
  }
  return false;
}

}  // namespace attn_test
