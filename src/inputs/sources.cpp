#include "inputs/sources.hpp"

#include <stdexcept>
#include <string>

#include "core/errors.hpp"

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

// The one source `opt` asks for: the bundled one when no other is. Two at once are refused here too, for a
// caller that builds InputOptions without the option table's rules.
const InputSource& asked_source(const InputOptions& opt) {
  const InputSource* asked = nullptr;
  for (const InputSource& s : input_sources()) {
    if (!s.asked(opt)) continue;
    if (asked == nullptr) asked = &s;
    else if (std::string(s.name) != "bundled")
      throw UsageError(std::string("the inputs come from one source: not both ") + asked->name + " and " + s.name);
  }
  if (asked == nullptr) throw std::logic_error("no input source asked for");  // the bundled one always is
  return *asked;
}

}  // namespace

Inputs load_inputs(const InputOptions& opt, std::istream& stdin_stream, const CheckMemory& check_memory,
                   const Words& words) {
  return asked_source(opt).load(opt, stdin_stream, check_memory, words);
}

nlohmann::ordered_json inputs_config(const InputOptions& opt, const Inputs& in) {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  config["input"] = in.source;
  const InputSource& s = asked_source(opt);
  if (s.config != nullptr) s.config(opt, config);
  return config;
}

}  // namespace attn
