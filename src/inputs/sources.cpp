#include "inputs/sources.hpp"

#include <stdexcept>

#include "inputs/embeddings.hpp"
#include "inputs/model.hpp"
#include "inputs/random.hpp"
#include "inputs/text.hpp"

namespace attn {

const std::vector<InputSource>& input_sources() {
  static const std::vector<InputSource> sources{file_source(), random_source(), text_source(), model_source(),
                                                bundled_source()};
  return sources;
}

namespace {

const InputSource& asked_source(const InputOptions& opt) {
  for (const InputSource& s : input_sources())
    if (s.asked(opt)) return s;
  throw std::logic_error("no input source asked for");  // the bundled one always is
}

}  // namespace

Inputs load_inputs(const InputOptions& opt, std::istream& stdin_stream, const CheckMemory& check_memory) {
  return asked_source(opt).load(opt, stdin_stream, check_memory);
}

nlohmann::ordered_json inputs_config(const InputOptions& opt, const Inputs& in) {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  config["input"] = in.source;
  const InputSource& s = asked_source(opt);
  if (s.config != nullptr) s.config(opt, config);
  return config;
}

}  // namespace attn
