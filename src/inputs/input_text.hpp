#pragma once
// The input steps' words: data/lessons/inputs.json, like every other step's. A source that makes its inputs
// in steps (--text, --model) takes each step's title, explanation, PyTorch code and notebook cell from there,
// in the run's words, filled with the values it knows (a seed, a size, the text itself); and says where the
// inputs came from in those words and in English, for the JSON config.
#include <string>

#include "document/inputs.hpp"
#include "text/words.hpp"

namespace attn {

// The step `id` of the inputs, its words those of inputs.json's `steps/<piece>` ("" for `id`) in its
// `variant` where the piece has variants ("text", "model"), filled from `values`: title, explanation and
// code, and the notebook's run and show where the content gives them.
InputStep input_step(const Words& words, std::string id, const TextValues& values, AnyTensor tensor,
                     const std::string& piece = "", const std::string& variant = "");

// inputs.json's phrase `name`, filled from `values`: a clause of a step's explanation that only some inputs
// need ("; a character it has no token for splits into its bytes").
std::string input_phrase(const Words& words, const std::string& name, const TextValues& values);

// Where the inputs came from, as inputs.json's phrase `name` says it: `in.source` in English (the JSON
// config's "input"), `in.source_words` in the run's words.
void describe_source(Inputs& in, const Words& words, const std::string& name, const TextValues& values);

}  // namespace attn
