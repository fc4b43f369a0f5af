// libFuzzer target: any bytes as a model.safetensors file (what --model maps). Parsing succeeds with every
// tensor's bytes inside the file, its byte count what its dtype and shape need and no two tensors
// overlapping, or throws InputError with one line naming the file (output_checks.hpp: no control byte
// reaches a terminal). Every float tensor of a file that parses is read whole. Built by scripts/fuzz.sh.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "model/safetensors.hpp"
#include "output_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using attn_fuzz::check;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const attn::SafetensorsFile f = attn::SafetensorsFile::parse(bytes, "fuzz.safetensors");
    const unsigned char* previous_end = nullptr;  // tensors come in data order
    for (const attn::SafeTensor& t : f.tensors()) {
      check(t.bytes == t.numel() * attn::element_size(t.dtype));
      check(t.bytes <= size);
      if (t.bytes > 0) {
        check(t.data != nullptr && (previous_end == nullptr || t.data >= previous_end));
        previous_end = t.data + t.bytes;
      }
      if (t.is_float() && t.numel() <= (std::size_t{1} << 20)) {
        std::vector<float> out(t.numel());
        t.to_float(out.data());
      }
    }
  } catch (const attn::InputError& e) {
    const std::string message = e.what();
    check(message.rfind("fuzz.safetensors: ", 0) == 0);
    check(message.find('\n') == std::string::npos);
    attn_fuzz::check_terminal_safe(message, false);
  }
  return 0;
}
