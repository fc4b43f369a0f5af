#pragma once
// The input sources, listed once (inputs/sources.cpp), and the inputs the options ask for.
#include <istream>
#include <vector>

#include "inputs/source.hpp"

namespace attn {

// Every input source, in the order --help lists their options; the bundled six tokens, asked for when no
// other is, last. At most one other is asked for: their options' rules refuse two at once before any is
// asked (and --text with --model is the model's text, not a source of its own).
const std::vector<InputSource>& input_sources();

// The inputs `opt` asks for, from the first source asked, their steps in `words`.
Inputs load_inputs(const InputOptions& opt, std::istream& stdin_stream, const CheckMemory& check_memory,
                   const Words& words = {});

// What reproduces the inputs, as a lesson's JSON config begins: "input" (where they came from), then the
// source's own keys (--model's directory, text and layer; --text's text, d_in and seed).
nlohmann::ordered_json inputs_config(const InputOptions& opt, const Inputs& in);

}  // namespace attn
