#include "cli/lesson_list.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "text/words.hpp"
#include "lessons/lesson_text.hpp"
#include "lessons/registry.hpp"

namespace attn {

// `attn list`: the lessons in book order.
std::string lesson_table(const Paint& paint, const Words& words) {
  const auto say = [&](const char* name) { return words.screen(name); };
  std::string out = paint.bold(say("list_title")) + "\n\n";
  // Columns as wide as the widest name and section ("ch04/03_kv-cache").
  std::size_t name_width = 0, section_width = 0;
  for (const Lesson& lesson : lessons()) {
    name_width = std::max(name_width, lesson.info.name.size());
    section_width = std::max(section_width, lesson.info.section.size());
  }
  const std::string indent(4 + name_width + 1 + section_width + 1, ' ');
  std::size_t k = 0;
  for (const Lesson& lesson : lessons()) {
    const LessonInfo info = LessonText::info(lesson.info.name, lesson.info.section, words);
    char number[16];
    std::snprintf(number, sizeof number, "%2zu  ", ++k);
    out += number + info.name + std::string(name_width + 1 - info.name.size(), ' ') + info.section +
           std::string(section_width + 1 - info.section.size(), ' ') + info.title + "\n";
    out += indent + info.summary + "\n";
    out += indent + paint.cyan("attn " + info.name) + "\n";
  }
  // Every way to see every lesson, as the README's "In class" and docs/classroom.md give them.
  const std::vector<std::pair<std::string, std::string>> every{
      {"attn present", say("list_present")},
      {"attn tour --pause", say("list_pause")},
      {"attn tour --format html > tour.html", say("list_html")}};
  std::size_t command_width = 0;
  for (const auto& way : every) command_width = std::max(command_width, way.first.size());
  out += "\n" + say("list_every") + "\n";
  for (const auto& [command, what] : every)
    out += "  " + paint.cyan(command) + std::string(command_width + 2 - command.size(), ' ') + what + "\n";
  out += say("list_help") + "\n";
  return out;
}

nlohmann::ordered_json lesson_list_json(const Words& words) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Lesson& lesson : lessons()) {
    const LessonInfo info = LessonText::info(lesson.info.name, lesson.info.section, words);
    list.push_back({{"name", info.name},
                    {"section", info.section},
                    {"title", info.title},
                    {"summary", info.summary},
                    {"command", "attn " + info.name}});
  }
  return list;
}

}  // namespace attn
