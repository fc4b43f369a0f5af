#pragma once
// The renderers' own words (header lines, axis names, legends, buttons, the presenter's status line), as
// content like the lessons' (lessons/content.hpp): data/lessons/<file>.json's "phrases", translated in
// data/lessons/<language>/<file>.json. A renderer looks a phrase up in the document's language; it never
// writes English prose inline.
#include <string>

#include "lessons/content.hpp"

namespace attn {

// The phrase `name` of data/lessons/<file>.json in `language` ("" for English), its placeholders and plurals
// filled from `values`: words("screen", doc.language, "inputs", {{"n", "6"}}).
std::string words(const std::string& file, const std::string& language, const std::string& name,
                  const TextValues& values = {});

}  // namespace attn
