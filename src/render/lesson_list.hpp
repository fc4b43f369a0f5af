#pragma once
// attn list: the lessons of the registry in book order, as a table for people or as JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "render/style.hpp"

namespace attn {

std::string lesson_table(const Paint& paint, const std::string& language = "");
nlohmann::ordered_json lesson_list_json(const std::string& language = "");

}  // namespace attn
