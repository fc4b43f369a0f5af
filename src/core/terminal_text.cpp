#include "core/terminal_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include <utf8proc.h>

namespace attn {

namespace {

bool is_bidi_control(utf8proc_int32_t cp) { return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069); }

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", b);
  return buf;
}

// The next code point of `s` at `at`: its length in bytes, and the code point (-1 when the bytes there are
// not valid UTF-8; the length is then 1).
utf8proc_ssize_t next_code_point(const std::string& s, std::size_t at, utf8proc_int32_t& cp) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(s.data()) + at;
  const utf8proc_ssize_t n = utf8proc_iterate(bytes, static_cast<utf8proc_ssize_t>(s.size() - at), &cp);
  if (n <= 0) {
    cp = -1;
    return 1;
  }
  return n;
}

// Columns of a grapheme cluster: as wide as its first code point; an invalid byte (-1) takes one.
std::size_t cluster_width(utf8proc_int32_t first) {
  return first < 0 ? 1 : static_cast<std::size_t>(std::max(0, utf8proc_charwidth(first)));
}

// Calls f(end, first_code_point) for each grapheme cluster of `s` (an invalid byte is one cluster); stops
// early when f returns false.
template <class F>
void for_each_grapheme(const std::string& s, F f) {
  std::size_t at = 0;
  while (at < s.size()) {
    utf8proc_int32_t first = 0, cp = 0;
    at += static_cast<std::size_t>(next_code_point(s, at, first));
    utf8proc_int32_t previous = first, state = 0;
    while (first >= 0 && at < s.size()) {
      const utf8proc_ssize_t n = next_code_point(s, at, cp);
      if (cp < 0 || utf8proc_grapheme_break_stateful(previous, cp, &state)) break;
      previous = cp;
      at += static_cast<std::size_t>(n);
    }
    if (!f(at, first)) return;
  }
}

// `text` with each code point `as_bytes` picks written as its bytes in \xNN, each `braced` picks as
// \u{xxxx}, and the rest kept; a byte that is not UTF-8 has code point -1.
template <class AsBytes, class Braced>
std::string escape_where(const std::string& text, AsBytes as_bytes, Braced braced) {
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    utf8proc_int32_t cp = 0;
    const auto n = static_cast<std::size_t>(next_code_point(text, at, cp));
    if (as_bytes(cp)) {
      for (std::size_t k = 0; k < n; ++k) out += hex_byte(static_cast<unsigned char>(text[at + k]));
    } else if (braced(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(text, at, n);
    }
    at += n;
  }
  return out;
}

// U+FFFE and U+FFFF, the two characters XML 1.0 forbids that are valid UTF-8 and not controls.
bool xml_noncharacter(utf8proc_int32_t cp) { return cp == 0xFFFE || cp == 0xFFFF; }

}  // namespace

std::string visible(const std::string& text) {
  return escape_where(
      text, [](utf8proc_int32_t cp) { return cp < 0 || utf8proc_category(cp) == UTF8PROC_CATEGORY_CC; },
      [](utf8proc_int32_t cp) { return is_bidi_control(cp) || xml_noncharacter(cp); });
}

std::string xml_safe(const std::string& text) {
  // XML 1.0's Char: tab, newline, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000 on (surrogates are not
  // UTF-8, so they arrive here as bad bytes).
  return escape_where(
      text, [](utf8proc_int32_t cp) { return cp < 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r'); },
      xml_noncharacter);
}

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_@%+=:,./-", c) != nullptr;
  });
  if (plain) return text;
  if (visible(text) == text) {
    std::string out = "'";
    for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  // bash's $'...': \\ and \' first, so that the \xNN escapes added next stay the only ones; every code point
  // visible() escapes as its UTF-8 bytes (a bidirectional override too: bash's \uXXXX depends on the locale).
  std::string escaped;
  for (const char c : text) escaped += c == '\\' ? std::string("\\\\") : c == '\'' ? std::string("\\'") : std::string(1, c);
  return "$'" +
         escape_where(
             escaped,
             [](utf8proc_int32_t cp) {
               return cp < 0 || utf8proc_category(cp) == UTF8PROC_CATEGORY_CC || is_bidi_control(cp) || xml_noncharacter(cp);
             },
             [](utf8proc_int32_t) { return false; }) +
         "'";
}

bool valid_utf8(const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    utf8proc_int32_t cp = 0;
    at += static_cast<std::size_t>(next_code_point(text, at, cp));
    if (cp < 0) return false;
  }
  return true;
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for_each_grapheme(text, [&](std::size_t, utf8proc_int32_t first) {
    width += cluster_width(first);
    return true;
  });
  return width;
}

std::string clip_to_width(const std::string& text, std::size_t width) {
  std::size_t used = 0, end = 0;
  for_each_grapheme(text, [&](std::size_t stop, utf8proc_int32_t first) {
    used += cluster_width(first);
    if (used > width) return false;
    end = stop;
    return true;
  });
  return text.substr(0, end);
}

}  // namespace attn
