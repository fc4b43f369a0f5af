#pragma once
// The second half of the application: a computed Document, rendered, to a sink. Output is built whole
// before its first byte is written (so a failure never leaves half a document), except with --pause, which
// writes step by step and waits for a key; --save-npy's files are staged before stdout is written and put
// in place only once stdout has taken everything (run/npy.hpp), with signals held off meanwhile.
#include <istream>
#include <ostream>
#include <string>

#include "render/renderer.hpp"
#include "render/style.hpp"

namespace attn {

struct Sink {
  std::ostream& out;
  std::istream& in;    // what --pause reads Enter or q from
  std::ostream& err;   // where a failure to save is reported
  bool pause = false;  // only ever set when stdin and stdout are terminals
  bool color = false;  // the pause prompt's
  std::string save_npy;  // --save-npy DIR; empty: no files
  // With pause: the terminal --pause reads each key from as it is pressed (q quits at once; io/keys.hpp),
  // the process's standard input when `in` is it; -1: lines from `in` (a test's stream).
  int key_fd = -1;
};

// Renders `doc` and writes it to `sink`; returns the exit status (a failed save is reported to sink.err;
// a write error on out is left for the caller to report, with errno set).
int emit(const Document& doc, const Renderer& renderer, const Sink& sink);

}  // namespace attn
