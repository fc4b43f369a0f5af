#pragma once
// Numbers as people read them, shared by lessons, renderers and the benchmark.
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

// A double as Python's repr prints it: 0.0, 0.5, 0.25.
std::string py_float(double v);

// 2360064 -> "2,360,064"
std::string with_commas(std::size_t n);

// A float32 in its shortest form that reads back as the same float ("0.23789129"), as the JSON output and
// the pages' cells give it; nan, inf, -inf for the others.
std::string exact_number(float v);

// A shape as Python prints a tuple: "(6, 2)", "(6,)", "()".
std::string shape_tuple(const std::vector<std::size_t>& shape);

// "1 token", "6 tokens"
std::string count_of(std::size_t n, const std::string& noun);

// Greedy word wrap: the words of `text` in lines of at most `width` terminal columns (a longer word stands
// alone on its line). Whitespace, line breaks included, only separates words.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width);

// "never, auto or always": words listed as a sentence says them.
std::string or_list(const std::vector<std::string>& words);

// Of `names`, the one nearest `word` (by edit distance, with '_' read as '-' and any case), if one is near
// enough to be what was meant ("mha_wrapper" -> "mha-wrapper"); else "". For "did you mean".
std::string nearest_word(const std::string& word, const std::vector<std::string>& names);

}  // namespace attn
