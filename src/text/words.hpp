#pragma once
// The words of one run in its one language: what every renderer, the presenter, the live page and the
// lessons' helpers ask for their phrases, so that none of them carries a language string or passes one by
// hand. A Words is made once, where the options are bound (chosen_language), and travels with the Request,
// the Selection and the Document; copying it is copying a short string.
#include <string>

#include "text/content.hpp"

namespace attn {

class Words {
 public:
  Words() = default;  // English
  // `language` as chosen_language gives it: "" for English, else the name of a translation's folder,
  // data/lessons/<language>/ (--lang takes only supported_languages(); a test's fixture may have its own).
  explicit Words(std::string language);

  // "" for English, else "ru": the key of a content file's translation (data/lessons/<language>/).
  const std::string& language() const { return language_; }
  bool english() const { return language_.empty(); }

  // The phrase `name` of data/lessons/<file>.json in this language, its placeholders and plurals filled from
  // `values`: screen("inputs", {{"n", "6"}}).
  std::string phrase(const std::string& file, const std::string& name, const TextValues& values = {}) const;
  // The terminal's words (data/lessons/screen.json): header lines, heatmap captions and legends, the
  // presenter's slides, status line and key help, attn list.
  std::string screen(const std::string& name, const TextValues& values = {}) const {
    return phrase("screen", name, values);
  }
  // The page's words (data/lessons/page.json): the html page's buttons and labels, the svg figures' axes and
  // legends, the words the page's script writes, the live page's bar.
  std::string page(const std::string& name, const TextValues& values = {}) const { return phrase("page", name, values); }

  // A content file in this language (lesson_content): for a piece that is no phrase (a lesson's title).
  const Content& content(const std::string& file) const { return lesson_content(file, language_); }
  // A piece of `c` filled in: its text in the language it is in (a translation may lack an entry, which
  // stays English and takes English plurals); `where` names it in errors.
  std::string fill_piece(const Content& c, const std::string& path, const std::string& variant,
                         const TextValues& values) const;
  // `format` filled with this language's plurals (placeholders from `values`); `where` names it in errors.
  std::string fill(const std::string& format, const TextValues& values, const std::string& where) const {
    return attn::fill(format, values, where, language_);
  }

  // A whole number as this language writes it in a sentence (grouped_number): 50,257 or 50 257.
  std::string number(unsigned long long n) const { return grouped_number(n, language_); }

  bool operator==(const Words& other) const { return language_ == other.language_; }
  bool operator!=(const Words& other) const { return !(*this == other); }

 private:
  std::string language_;
};

}  // namespace attn
