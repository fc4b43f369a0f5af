#include "run/emit.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <optional>

#include "core/errors.hpp"
#include "io/keys.hpp"
#include "run/npy.hpp"

namespace attn {

namespace {

// Writes the chunks; with pause, waits after each step for Enter (the next step) and stops on q or the end
// of input: keys as pressed from the terminal `key_fd`, or lines from `in` when there is none.
void write_chunks(const std::vector<Chunk>& chunks, bool pause, std::ostream& out, std::istream& in, int key_fd,
                  const Paint& paint) {
  // pause is only ever set when stdin and stdout are terminals.
  if (!pause) {
    for (const Chunk& c : chunks) out << c.text;  // not joined first: that would hold the output twice
    return;
  }
  std::optional<TerminalKeys> keys;  // the terminal's mode, set for the prompts and back after them
  if (key_fd >= 0) keys.emplace(key_fd);
  const bool by_key = keys && keys->ok();
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    out << chunks[i].text << std::flush;
    if (!chunks[i].pause_after || i + 1 == chunks.size()) continue;
    out << paint.dim("-- Enter: next step, q: quit (back and forth: attn present) --") << std::flush;
    bool next = false;
    if (by_key) {
      next = keys->next() == TerminalKeys::Key::Next;
    } else {
      std::string line;
      next = std::getline(in, line) && line != "q" && line != "Q";
    }
    if (!next) {
      out << "\n" << std::flush;
      return;
    }
    // Take the prompt away again: a key left the cursor on its line (no echo), a line one below it.
    out << (by_key ? "\r\x1b[2K" : "\x1b[1A\x1b[2K") << std::flush;
  }
}

// While --save-npy's files are staged and moved: a signal that would end the process is noted instead,
// so the staged files can be removed (or the moves finished or undone) before it ends. SIGPIPE is ignored
// (a closed pipe becomes a write error on stdout); SIGINT, SIGTERM and SIGHUP interrupt a --pause prompt
// (no SA_RESTART). A signal the process ignored already (nohup, `cmd &`) stays ignored. end() gives each
// its old handling back and raises the ones that came, so the process ends as it would have; so does the
// destructor, after which a signal held back by block() arrives.
constexpr std::array<int, 4> kSaveSignals{SIGPIPE, SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t g_save_signals[kSaveSignals.size()] = {};
extern "C" void note_save_signal(int signal) {
  for (std::size_t i = 0; i < kSaveSignals.size(); ++i)
    if (kSaveSignals[i] == signal) g_save_signals[i] = 1;
}

class SaveSignals {
 public:
  SaveSignals() {
    struct sigaction note {};
    note.sa_handler = note_save_signal;
    sigemptyset(&note.sa_mask);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (std::size_t i = 0; i < kSaveSignals.size(); ++i) {
      g_save_signals[i] = 0;
      sigaction(kSaveSignals[i], nullptr, &old_[i]);
      const bool ignored = old_[i].sa_handler == SIG_IGN;
      sigaction(kSaveSignals[i], kSaveSignals[i] == SIGPIPE || ignored ? &ignore : &note, nullptr);
    }
  }
  bool caught() const {
    for (const auto flag : g_save_signals)
      if (flag != 0) return true;
    return false;
  }
  // Holds the signals back until the handling is restored (the moves take milliseconds).
  void block() {
    sigset_t set;
    sigemptyset(&set);
    for (const int signal : kSaveSignals) sigaddset(&set, signal);
    blocked_ = sigprocmask(SIG_BLOCK, &set, &old_mask_) == 0;
  }
  // The old handling back, and each signal that came raised under it; SIGPIPE too for a write that failed
  // with EPIPE (`error`), which would have ended the process by SIGPIPE.
  void end(int error) {
    restore();
    if (error == EPIPE) std::raise(SIGPIPE);
  }
  ~SaveSignals() { restore(); }
  SaveSignals(const SaveSignals&) = delete;
  SaveSignals& operator=(const SaveSignals&) = delete;

 private:
  void restore() {
    if (restored_) return;
    restored_ = true;
    for (std::size_t i = 0; i < kSaveSignals.size(); ++i) sigaction(kSaveSignals[i], &old_[i], nullptr);
    for (std::size_t i = 0; i < kSaveSignals.size(); ++i)
      if (g_save_signals[i] != 0) std::raise(kSaveSignals[i]);  // noted while the files waited
    if (blocked_) sigprocmask(SIG_SETMASK, &old_mask_, nullptr);  // one held back arrives now
  }
  std::array<struct sigaction, kSaveSignals.size()> old_{};
  sigset_t old_mask_{};
  bool blocked_ = false, restored_ = false;
};

}  // namespace

int emit(const Document& doc, const Renderer& renderer, const Sink& sink) {
  std::ostream& out = sink.out;
  const std::vector<Chunk> chunks = renderer.render(doc);
  // The .npy files are written before stdout (a failure leaves nothing half-printed) but put in place only
  // after it has taken the whole output; until then DIR is as it was (run/npy.hpp).
  std::optional<SaveSignals> signals;  // before the files are staged, so no signal can strand them
  std::optional<NpySave> npy;
  if (!sink.save_npy.empty()) {
    signals.emplace();
    npy.emplace(doc, sink.save_npy);
    if (signals->caught()) {  // stopped while the files were written: nothing is saved or printed
      npy.reset();
      signals->end(0);
      return kExitRuntime;  // (a signal the process ignores: nothing ends it, and the run stops here)
    }
  }
  write_chunks(chunks, sink.pause, out, sink.in, sink.key_fd, Paint{sink.color});
  if (npy) {
    out.flush();
    const int error = errno;
    signals->block();  // from here the moves, and undoing them if one fails, are not cut short
    if (!out || signals->caught()) {  // stdout failed, or the run was stopped: nothing is saved
      npy.reset();
      signals->end(error);  // a closed pipe, Ctrl-C, SIGTERM: the process ends as that signal would have ended it
      errno = error;
      return kExitRuntime;  // a full disk: main reports the write error
    }
    try {
      npy->commit();
    } catch (...) {  // reported before a signal held back meanwhile can end the process
      const int status = report_failure(sink.err, doc.command);
      signals.reset();
      return status;
    }
  }
  return kExitOk;
}

}  // namespace attn
