#include "inputs/sources.hpp"

#include "core/torch_random.hpp"
#include "inputs/embeddings.hpp"
#include "inputs/model.hpp"
#include "inputs/text.hpp"

namespace attn {

namespace {

// --random NxD: torch.rand(N, D) after torch.manual_seed(0), tokens named x1..xN.
Inputs random_inputs(std::size_t n, std::size_t d) {
  Inputs in;
  TorchGenerator gen(0);
  in.embeddings = gen.rand(n, d);  // (n, d)
  for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
  in.source = "torch.rand(" + std::to_string(n) + ", " + std::to_string(d) + ") after torch.manual_seed(0)";
  return in;
}

}  // namespace

Inputs load_inputs(const InputOptions& opt, std::istream& stdin_stream,
                   const std::function<void(std::size_t)>& check_memory) {
  if (!opt.model.empty()) return inputs_from_model(opt.model, opt.text.value_or(kBookSentence), opt.layer, check_memory);
  if (opt.text) return inputs_from_text(*opt.text, opt.d_in, opt.embedding_seed);
  if (opt.random) return random_inputs(opt.random->first, opt.random->second);
  return load_embeddings(opt.input.empty() ? default_embeddings_path() : opt.input, stdin_stream);
}

nlohmann::ordered_json inputs_config(const InputOptions& opt, const Inputs& in) {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  config["input"] = in.source;
  if (!opt.model.empty()) {
    config["model"] = opt.model;
    config["text"] = opt.text.value_or(kBookSentence);
    config["layer"] = opt.layer;
  } else if (opt.text) {
    config["text"] = *opt.text;
    config["d_in"] = opt.d_in;
    config["embedding_seed"] = opt.embedding_seed;
  }
  return config;
}

}  // namespace attn
