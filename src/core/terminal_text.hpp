#pragma once
// Text from outside (token text, file names, cells of an input file, option values, subcommand names) as
// it may be shown on a terminal, and how many columns it takes there.
#include <cstddef>
#include <string>

namespace attn {

// `text` with everything that could act on a terminal made visible: each control character (C0, DEL,
// and C1 U+0080-U+009F) and each byte that is not part of valid UTF-8 as \xNN, and the bidirectional
// overrides and isolates (U+202A-U+202E, U+2066-U+2069) as \u{XXXX}. So no input can move the cursor,
// clear the screen, set the window title, fake colours, write to the clipboard (OSC 52) or reorder what
// is displayed. Printable text, wide characters and emoji included, is kept as it is. Never used for
// JSON, which keeps the exact strings (RFC 8259 escaping).
std::string visible(const std::string& text);

// `text` with every character XML 1.0 forbids shown as visible() shows it: bytes that are not UTF-8 and
// C0 controls other than tab, newline and CR as \xNN, U+FFFE and U+FFFF as \u{fffe}. What html_escape
// (render/figure) applies before its entities, so no page or figure can hold a character that makes it
// ill-formed, whoever calls it.
std::string xml_safe(const std::string& text);

// `text` as one word of a command line a user can paste into bash, and safe to show on a terminal: as it
// is when it holds only letters, digits and _@%+=:,./- (and is not empty); in single quotes when visible()
// would leave it unchanged (a ' as '\''); otherwise in bash's $'...', with \\ and \', and every code
// point visible() escapes written as its bytes, \xNN: bash reads the word back as the exact bytes, and
// visible() leaves it as it is.
std::string shell_word(const std::string& text);

// True if `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), as
// utf8proc decodes it.
bool valid_utf8(const std::string& text);

// Terminal columns `text` takes (utf8proc's character widths: 2 for CJK and emoji, 0 for combining
// marks), counted by grapheme cluster, each as wide as its first code point. For text already made
// visible; an invalid byte counts as one column.
std::size_t display_width(const std::string& text);

// The longest prefix of `text` that fits in `width` columns, cut only between grapheme clusters, so a
// label never ends inside a character, an emoji sequence or a \xNN escape (which visible() makes of
// ASCII characters that each take one column: cut it is still plain text).
std::string clip_to_width(const std::string& text, std::size_t width);

// A token as attn shows it everywhere but in JSON (which keeps the token's exact string): Python's repr(),
// as the book prints a string, with each space shown as U+2423 "␣" (so GPT-2's leading space, its "Ġ", is
// seen, and a quoted token stays one word when a line is wrapped; a real U+2423 is written \u2423, so the
// form stays unambiguous). Single quotes unless the token holds a ' and no ", then double quotes; \\,
// \', \t, \n, \r, \xNN, \uNNNN and \UNNNNNNNN as repr writes them for what is not printable (controls,
// format characters such as the bidi overrides, separators, unassigned code points), so the result never
// acts on a terminal (visible() leaves it as it is). `token` is the token's bytes: when they are not whole
// UTF-8 (GPT-2's pieces of a character split over tokens) they are shown as Python shows bytes, as the
// book's tokenizer.decode_single_token_bytes() gives them: b'\xf0\x9f', b'␣\xf0\x9f'.
// 'Your', '␣journey', "'t", '\n', b'\xa7'.
std::string token_repr(const std::string& token);
// Python's own repr() of `text`, spaces as spaces: a literal Python reads back as the same str (or bytes,
// when `text` is not UTF-8), for the code attn writes (--format py): 'Your journey', "it's", '\u202e'.
std::string py_repr(const std::string& text);

// `text` as Python's bytes.decode("utf-8", "backslashreplace") gives it: each byte that is not part of
// valid UTF-8 as the four characters \xNN, the rest kept. How JSON writes a token's bytes as a string.
std::string backslash_replaced(const std::string& bytes);

// `text` (display text: visible() or token_repr() output) in at most `width` columns: as it is when it
// fits, else its longest prefix that leaves a column for "…", then "…". Cut only between grapheme clusters
// and never inside a backslash escape (\xNN, \uNNNN, \UNNNNNNNN, \u{...}, \n, \\, ...), so a label
// never ends in "\xf0\x9" nor half a character. "" when width is 0.
std::string clip_label(const std::string& text, std::size_t width);

}  // namespace attn
