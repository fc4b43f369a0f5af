#include "render/text.hpp"

#include <sstream>

#include "render/torch_print.hpp"

namespace attn {

namespace {

constexpr std::size_t kWidth = 80;

// Greedy word wrap of `text` into lines of at most kWidth columns, each starting with `indent`.
std::string wrap(const std::string& text, const std::string& indent) {
  std::istringstream words(text);
  std::string word, line, out;
  while (words >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > kWidth) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

// The book's code as a Python prompt would echo it: ">>> " on the first line, "... " after.
std::string prompt(const std::string& code) {
  std::istringstream lines(code);
  std::string line, out;
  bool first = true;
  while (std::getline(lines, line)) {
    const std::string marker = first ? "  >>>" : "  ...";
    out += line.empty() ? marker + "\n" : marker + " " + line + "\n";
    first = false;
  }
  return out;
}

std::string token_list(const std::vector<std::string>& tokens) {
  constexpr std::size_t kShown = 12;
  std::string out;
  for (std::size_t i = 0; i < tokens.size() && i < kShown; ++i) out += (i ? " " : "") + tokens[i];
  if (tokens.size() > kShown) out += " ... (" + std::to_string(tokens.size() - kShown) + " more)";
  return out;
}

}  // namespace

std::string torch_size(const AnyTensor& t) {
  std::string out = "torch.Size([";
  for (std::size_t d = 0; d < t.dimension(); ++d) out += (d ? ", " : "") + std::to_string(t.shape()[d]);
  return out + "])";
}

std::string render_text(const Trace& trace) {
  std::string out;
  out += "attn " + trace.info.name + " -- " + trace.info.section + " " + trace.info.title + "\n";
  out += "inputs: " + std::to_string(trace.inputs.num_tokens()) + " tokens x " +
         std::to_string(trace.inputs.d_in()) + " dims from " + trace.inputs.source + "\n";
  out += "tokens: " + token_list(trace.inputs.tokens) + "\n";
  for (const auto& note : trace.notes) out += note + "\n";
  for (const auto& m : trace.modules)
    out += "module: " + m.name + " = " + m.code + ", " + with_commas(m.num_params) + " parameters\n";

  const std::size_t total = trace.steps.size();
  for (std::size_t i = 0; i < total; ++i) {
    const Step& s = trace.steps[i];
    out += "\n[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + s.id + " -- " + s.title + "\n";
    out += wrap(s.explanation, "  ");
    out += prompt(s.code);
    out += "  shape: " + torch_size(s.tensor) + "\n";
    out += torch_str(s.tensor) + "\n";
  }
  return out;
}

}  // namespace attn
