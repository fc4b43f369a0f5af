#pragma once
// attn list: the lessons of the registry in book order, as a table for people or as JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "render/style.hpp"

namespace attn {

std::string lesson_table(const Paint& paint, const Words& words = {});
nlohmann::ordered_json lesson_list_json(const Words& words = {});

}  // namespace attn
