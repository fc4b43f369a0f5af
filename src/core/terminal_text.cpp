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

// The end of the grapheme cluster of `s` that starts at `at`, and its first code point (-1 for a byte
// that is not UTF-8, a cluster of its own).
std::size_t grapheme_end(const std::string& s, std::size_t at, utf8proc_int32_t& first) {
  utf8proc_int32_t cp = 0;
  at += static_cast<std::size_t>(next_code_point(s, at, first));
  utf8proc_int32_t previous = first, state = 0;
  while (first >= 0 && at < s.size()) {
    const utf8proc_ssize_t n = next_code_point(s, at, cp);
    if (cp < 0 || utf8proc_grapheme_break_stateful(previous, cp, &state)) break;
    previous = cp;
    at += static_cast<std::size_t>(n);
  }
  return at;
}

// Calls f(end, first_code_point) for each grapheme cluster of `s` (an invalid byte is one cluster); stops
// early when f returns false.
template <class F>
void for_each_grapheme(const std::string& s, F f) {
  std::size_t at = 0;
  while (at < s.size()) {
    utf8proc_int32_t first = 0;
    at = grapheme_end(s, at, first);
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

namespace {

// Python's str.isprintable() for one code point: not a control, format character, surrogate, private-use
// or unassigned code point, nor a separator other than the space (CPython's Py_UNICODE_ISPRINTABLE).
bool python_printable(utf8proc_int32_t cp) {
  if (cp == ' ') return true;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS: case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP: case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

const char* const kSpaceMark = "\xe2\x90\xa3";  // U+2423 OPEN BOX, "␣"
constexpr utf8proc_int32_t kSpaceMarkCodePoint = 0x2423;

// The quote repr() picks: ' unless the text holds a ' and no ".
char repr_quote(const std::string& text) {
  return text.find('\'') != std::string::npos && text.find('"') == std::string::npos ? '"' : '\'';
}

// The escape repr() writes for an ASCII character that is not printed as itself, or "" for one that is.
std::string ascii_escape(unsigned char c, char quote) {
  if (c == static_cast<unsigned char>(quote) || c == '\\') return std::string("\\") + static_cast<char>(c);
  if (c == '\t') return "\\t";
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  if (c < 0x20 || c == 0x7f) return hex_byte(c);
  return "";
}

// Python's repr() of bytes (b'...'), with the space marked: what token_repr shows for a token that is not
// whole UTF-8.
std::string bytes_repr(const std::string& bytes) {
  const char quote = repr_quote(bytes);
  std::string out = std::string("b") + quote;
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == ' ') out += kSpaceMark;
    else if (c >= 0x80) out += hex_byte(c);
    else if (const std::string e = ascii_escape(c, quote); !e.empty()) out += e;
    else out += ch;
  }
  return out + quote;
}

}  // namespace

// Written here: Python's repr() rules are a dozen lines over utf8proc's categories, and no library of the
// project gives them.
namespace {

// Python's repr() of the text, a str (valid UTF-8) or bytes; `mark_spaces` shows each space as ␣.
std::string repr_of(const std::string& token, bool mark_spaces) {
  if (!valid_utf8(token)) return bytes_repr(token);
  const char quote = repr_quote(token);
  std::string out(1, quote);
  std::size_t at = 0;
  while (at < token.size()) {
    utf8proc_int32_t cp = 0;
    const auto n = static_cast<std::size_t>(next_code_point(token, at, cp));
    if (cp == ' ' && mark_spaces) {
      out += kSpaceMark;
    } else if (cp < 0x80) {
      const std::string e = ascii_escape(static_cast<unsigned char>(cp), quote);
      out += e.empty() ? std::string(1, static_cast<char>(cp)) : e;
    } else if (python_printable(cp) && (cp != kSpaceMarkCodePoint || !mark_spaces)) {
      out.append(token, at, n);
    } else if (cp <= 0xff) {
      out += hex_byte(static_cast<unsigned char>(cp));
    } else {
      char buf[16];
      std::snprintf(buf, sizeof buf, cp <= 0xffff ? "\\u%04x" : "\\U%08x", static_cast<unsigned>(cp));
      out += buf;
    }
    at += n;
  }
  return out + quote;
}

}  // namespace

std::string token_repr(const std::string& token) { return repr_of(token, true); }

std::string py_repr(const std::string& text) { return repr_of(text, false); }

std::string backslash_replaced(const std::string& bytes) {
  return escape_where(bytes, [](utf8proc_int32_t cp) { return cp < 0; }, [](utf8proc_int32_t) { return false; });
}

namespace {

// The length of the backslash escape at `at` (text[at] is a backslash): \xNN, \uNNNN, \UNNNNNNNN, \u{...}
// or \N{...}, else the backslash and the character after it.
std::size_t escape_length(const std::string& text, std::size_t at) {
  if (at + 1 >= text.size()) return 1;
  const char kind = text[at + 1];
  std::size_t length = 2;
  if ((kind == 'u' || kind == 'N') && at + 2 < text.size() && text[at + 2] == '{') {
    const std::size_t close = text.find('}', at + 2);
    length = close == std::string::npos ? 2 : close - at + 1;
  } else if (kind == 'x' || kind == 'u' || kind == 'U') {
    const std::size_t digits = kind == 'x' ? 2 : kind == 'u' ? 4 : 8;
    std::size_t k = 0;
    while (k < digits && at + 2 + k < text.size() && std::isxdigit(static_cast<unsigned char>(text[at + 2 + k]))) ++k;
    length = k == digits ? 2 + digits : 2;
  }
  return std::min(length, text.size() - at);
}

}  // namespace

std::string clip_label(const std::string& text, std::size_t width) {
  if (display_width(text) <= width) return text;
  if (width == 0) return "";
  std::size_t used = 0, at = 0;
  while (at < text.size()) {
    std::size_t end = 0, columns = 0;
    if (text[at] == '\\') {
      end = at + escape_length(text, at);
      columns = end - at;
    } else {
      utf8proc_int32_t first = 0;
      end = grapheme_end(text, at, first);
      columns = cluster_width(first);
    }
    if (used + columns > width - 1) break;
    used += columns;
    at = end;
  }
  return text.substr(0, at) + "\xe2\x80\xa6";  // "…"
}

}  // namespace attn
