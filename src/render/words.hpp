#pragma once
// The renderers' own words (header lines, axis names, legends, buttons, the presenter's status line), as
// content like the lessons' (lessons/content.hpp): data/lessons/<file>.json's "phrases", translated in
// data/lessons/<language>/<file>.json. A renderer looks a phrase up in the document's language; it never
// writes English prose inline.
#include <string>

#include "lessons/content.hpp"
#include "trace/trace.hpp"

namespace attn {

// The phrase `name` of data/lessons/<file>.json in `language` ("" for English), its placeholders and plurals
// filled from `values`: words("screen", doc.language, "inputs", {{"n", "6"}}).
std::string words(const std::string& file, const std::string& language, const std::string& name,
                  const TextValues& values = {});

// Where a lesson is in the book, in `language`: "book section 3.3.1", "bonus material ch04/03_kv-cache in the
// book's repository" (trace/trace.hpp's where_in_book, which --help and the man page use, is the English).
std::string book_place(const LessonInfo& info, const std::string& language);

}  // namespace attn
