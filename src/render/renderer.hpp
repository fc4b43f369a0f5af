#pragma once
// One interface for every output format. A renderer turns a Document (trace/trace.hpp) into text and
// never computes attention; the command line picks one with --format (formats.cpp lists them, one line
// each). Adding a format is one renderer file and its line in formats.cpp (docs/architecture.md).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "render/style.hpp"
#include "document/document.hpp"

namespace attn {

// One piece of output; --pause waits after the pieces that end a step.
struct Chunk {
  std::string text;
  bool pause_after = false;
};

// What a renderer may take into account besides the document: how the text view looks on this terminal.
struct RenderOptions {
  TextStyle style;
};

// What printing a step's tensor as PyTorch prints it takes, at most: PyTorch summarises a tensor past 1,000
// numbers, and each number is at most 16 bytes. For the renderers' working_bytes.
inline std::size_t printed_tensor_bytes(const Step& s) { return std::min<std::size_t>(s.numel(), 1000) * 16; }

class Renderer {
 public:
  virtual ~Renderer() = default;
  // Refuses, with a UsageError, a document this format will not write (e.g. past the JSON number limit).
  // Called before anything is rendered.
  virtual void check(const Document& doc) const { (void)doc; }
  // The memory rendering `doc` takes beyond the document itself, estimated from its plan (shapes only),
  // for the memory budget checked before the work.
  virtual std::size_t working_bytes(const Document& doc) const {
    (void)doc;
    return 0;
  }
  // The whole output, in pieces; joined, they are what a pipe receives.
  virtual std::vector<Chunk> render(const Document& doc) const = 0;
};

struct Format {
  std::string name;  // the value of --format
  std::string help;  // one line for --help and the man page
  bool pausable;     // --pause waits between its pieces (on a terminal)
  std::unique_ptr<Renderer> (*make)(const RenderOptions& options);
};

// Every output format; the first is the default.
const std::vector<Format>& formats();
// The format called `name`, or nullptr.
const Format* find_format(const std::string& name);

// The whole output as one piece, moved in: a braced {{text, false}} would copy it twice (an initializer
// list's elements are copied), and a page can be hundreds of megabytes.
inline std::vector<Chunk> one_chunk(std::string text) {
  std::vector<Chunk> out(1);
  out[0].text = std::move(text);
  return out;
}

// All pieces joined; a single piece is moved, not copied.
std::string join(const std::vector<Chunk>& chunks);
std::string join(std::vector<Chunk>&& chunks);

}  // namespace attn
