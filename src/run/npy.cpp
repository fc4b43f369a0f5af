#include "run/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xtensor/xnpy.hpp>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "io/files.hpp"

namespace attn {

namespace {

// The step's value as np.load should give it back.
std::string npy_bytes(const Step& s) {
  if (s.python_int) return xt::dump_npy(xt::xarray<std::int64_t>(*s.python_int));  // ()
  if (s.python_float) return xt::dump_npy(xt::xarray<double>(*s.python_float));    // ()
  if (s.integer) return xt::dump_npy(xt::xarray<std::int64_t>(xt::cast<std::int64_t>(s.tensor)));
  return xt::dump_npy(s.tensor);  // float32, the step's shape
}

[[noreturn]] void fail(const std::string& what, int error) {
  throw SystemError("--save-npy: " + what + ": " + std::strerror(error));
}

// A path without its trailing slashes ("/" stays "/").
std::string trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string parent_of(const std::string& dir) {
  const std::string d = trimmed(dir);
  const auto slash = d.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : d.substr(0, slash);
}

std::string base_of(const std::string& dir) {
  const std::string d = trimmed(dir);
  return d.substr(d.rfind('/') == std::string::npos ? 0 : d.rfind('/') + 1);
}

// What of DIR is missing, as mkdir -p would make it: the nearest path up from DIR that is there (or that
// cannot be looked at), and the names below it still to create, outermost first ("npy/mha" with no npy:
// ".", then {"npy", "mha"}). A path below a file (ENOTDIR) is missing too, so that the file is what is named.
struct Missing {
  std::string there;
  std::vector<std::string> names;
};
Missing missing_part(const std::string& dir) {
  Missing m{trimmed(dir), {}};
  struct stat st {};
  while (::stat(m.there.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    const std::string up = parent_of(m.there);
    if (up == m.there) break;  // "." or "/" itself missing: nothing above to make it in
    m.names.insert(m.names.begin(), base_of(m.there));
    m.there = trimmed(up);
  }
  return m;
}

// A directory below `parent`, never through a symbolic link.
FileDescriptor open_subdir(int parent, const std::string& name) {
  return FileDescriptor(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

}  // namespace

std::size_t npy_working_bytes(const Document& planned) {
  std::size_t largest = 0;
  for (const Section& t : planned.sections)
    for (const Step& s : t.steps)
      if (planned.shows(s)) largest = std::max(largest, s.numel());
  return saturating_sum(std::size_t{1} << 20, saturating_product({largest, 8, 3}));  // int64, cast copy, the file's bytes
}

void prepare_npy_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw SystemError("--save-npy " + dir + ": is " + describe_file_type(st.st_mode) + ", not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw SystemError("--save-npy " + dir + ": cannot write to the directory: " + std::strerror(errno));
    return;
  }
  if (errno != ENOENT && errno != ENOTDIR) throw SystemError("--save-npy " + dir + ": " + std::strerror(errno));
  // Created, after the work, with the missing directories above it (as mkdir -p), only if the nearest one
  // there is a directory that can hold them.
  const std::string there = missing_part(dir).there, cannot = "--save-npy " + dir + ": cannot create the directory: ";
  if (::stat(there.c_str(), &st) != 0) throw SystemError(cannot + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw SystemError(cannot + there + " is " + describe_file_type(st.st_mode));
  if (::access(there.c_str(), W_OK | X_OK) != 0) throw SystemError(cannot + std::strerror(errno));
}

// One file of the run: `lesson` is its subdirectory ("" when it goes in DIR itself).
struct Entry {
  std::string lesson, name;
  enum class Move { None, Exchanged, Placed, AsideThenPlaced } move = Move::None;
  dev_t dev = 0;  // the staged file's identity, to take back only this run's file
  ino_t ino = 0;
};

// Moves with renameat2's flags, as one system call each: RENAME_EXCHANGE swaps the staged file with the
// earlier one (which lands in the stage, where a rollback swaps it back), RENAME_NOREPLACE moves it in
// only if nothing has appeared there since. EINVAL: a filesystem without them (then a two-step move).
int exchange(int from, const std::string& a, int to, const std::string& b) {
  return ::renameat2(from, a.c_str(), to, b.c_str(), RENAME_EXCHANGE);
}
int place(int from, const std::string& a, int to, const std::string& b) {
  return ::renameat2(from, a.c_str(), to, b.c_str(), RENAME_NOREPLACE);
}

// renameat2's flags refused: a filesystem without them (EINVAL), or a kernel or sandbox without the call.
bool unsupported(int error) { return error == EINVAL || error == ENOSYS; }

// A name only this run knows: random, and made with mkdirat, which fails on anything already there.
std::string new_stage(int dir_fd) {
  std::random_device random;
  const char* const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = ".attn-save-";
    for (int i = 0; i < 12; ++i) name += letters[random() % 62];
    if (::mkdirat(dir_fd, name.c_str(), 0700) == 0) return name;
    if (errno != EEXIST) return {};
  }
  errno = EEXIST;
  return {};
}

struct NpySave::State {
  std::string dir, stage_name;  // DIR as given, the staging directory's name inside it
  // The directories this run made, outermost first, each as (its parent, opened, and its name): DIR and the
  // missing ones above it (empty when DIR was there).
  std::vector<std::pair<FileDescriptor, std::string>> created_dirs;
  bool committed = false, keep_stage = false;
  FileDescriptor dir_fd, stage_fd, old_fd;  // DIR, DIR/<stage>, DIR/<stage>/old
  std::vector<Entry> entries;
  std::vector<std::string> created_lessons;  // DIR/<lesson> directories this run made

  std::string shown(const Entry& e) const { return dir + "/" + (e.lesson.empty() ? "" : e.lesson + "/") + e.name; }

  // The directory `lesson` under `parent` (DIR, the stage or old), made if `create`; -1 if it is not there.
  FileDescriptor lesson_dir(int parent, const std::string& lesson, bool create) const {
    if (lesson.empty()) return FileDescriptor(::fcntl(parent, F_DUPFD_CLOEXEC, 0));
    if (create && ::mkdirat(parent, lesson.c_str(), 0777) != 0 && errno != EEXIST) return FileDescriptor();
    return open_subdir(parent, lesson);
  }

  // DIR/<lesson> could not be opened or made (`errno`): a link (ELOOP) or a file is no directory to write in.
  [[noreturn]] void not_a_lesson_dir(const Entry& e) const {
    fail("cannot write " + shown(e) + " (" + dir + "/" + e.lesson + " is not a directory attn can write into)",
         errno == ELOOP || errno == ENOTDIR ? ENOTDIR : errno);
  }

  // What is at DIR/<lesson>/<name> now: nothing, or a regular file this run may replace; anything else
  // (a directory, a link, a FIFO), or what cannot be looked at, is refused.
  bool existing_file(const Entry& e) const {
    const FileDescriptor in = lesson_dir(dir_fd.get(), e.lesson, false);
    if (in.get() < 0) {
      if (errno == ENOENT) return false;
      not_a_lesson_dir(e);
    }
    struct stat st {};
    if (::fstatat(in.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return false;
      fail("cannot write " + shown(e), errno);
    }
    if (!S_ISREG(st.st_mode))
      throw SystemError("--save-npy: cannot write " + shown(e) + ": " + describe_file_type(st.st_mode) +
                        " is in its place (attn replaces only files it could have written)");
    return true;
  }

  // Moves one staged file into DIR/<lesson> (`in`), replacing a regular file there.
  void move_in(Entry& e, int in) {
    const FileDescriptor staged = lesson_dir(stage_fd.get(), e.lesson, false);
    struct stat st {};
    if (staged.get() < 0 || ::fstatat(staged.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      fail("cannot write " + shown(e), errno);
    e.dev = st.st_dev;
    e.ino = st.st_ino;
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (existing_file(e)) {
        if (exchange(staged.get(), e.name, in, e.name) == 0) {
          e.move = Entry::Move::Exchanged;
          return;
        }
        if (errno == ENOENT) continue;  // gone since it was looked at: try again
        if (!unsupported(errno)) fail("cannot replace " + shown(e), errno);
        // No RENAME_EXCHANGE here: the earlier file aside into old/, then this run's in.
        const FileDescriptor old = lesson_dir(old_fd.get(), e.lesson, false);
        if (::renameat(in, e.name.c_str(), old.get(), e.name.c_str()) != 0) fail("cannot replace " + shown(e), errno);
        e.move = Entry::Move::AsideThenPlaced;
        if (::renameat(staged.get(), e.name.c_str(), in, e.name.c_str()) != 0) fail("cannot write " + shown(e), errno);
        return;
      }
      if (place(staged.get(), e.name, in, e.name) == 0) {
        e.move = Entry::Move::Placed;
        return;
      }
      if (errno == EEXIST) continue;  // appeared since it was looked at: look again
      if (!unsupported(errno)) fail("cannot write " + shown(e), errno);
      // The two-step fallbacks cannot refuse a file that appears between the look and the move.
      if (::renameat(staged.get(), e.name.c_str(), in, e.name.c_str()) != 0) fail("cannot write " + shown(e), errno);
      e.move = Entry::Move::Placed;
      return;
    }
    fail("cannot write " + shown(e) + " (it keeps changing)", EBUSY);
  }

  // Undoes every move, newest first, so DIR is as it was; false if an earlier file could not be put back
  // (it is then kept in the staging directory, which stays).
  bool roll_back() {
    bool restored = true;
    for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
      if (e->move == Entry::Move::None) continue;
      const FileDescriptor in = lesson_dir(dir_fd.get(), e->lesson, false);
      const FileDescriptor staged = lesson_dir(stage_fd.get(), e->lesson, false);
      struct stat st {};
      const bool ours = ::fstatat(in.get(), e->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == e->dev &&
                        st.st_ino == e->ino;  // still the file this run put there
      if (e->move == Entry::Move::Exchanged) {
        restored = ours && exchange(staged.get(), e->name, in.get(), e->name) == 0 && restored;
      } else {
        // This run's file, if it is still the one there, back into the stage (someone else's is left alone).
        if (ours) ::renameat(in.get(), e->name.c_str(), staged.get(), e->name.c_str());
        if (e->move == Entry::Move::AsideThenPlaced) {
          const FileDescriptor old = lesson_dir(old_fd.get(), e->lesson, false);
          restored = (place(old.get(), e->name, in.get(), e->name) == 0 ||
                      (unsupported(errno) && ::renameat(old.get(), e->name.c_str(), in.get(), e->name.c_str()) == 0)) &&
                     restored;
        }
      }
      e->move = Entry::Move::None;
    }
    for (const std::string& lesson : created_lessons) ::unlinkat(dir_fd.get(), lesson.c_str(), AT_REMOVEDIR);
    created_lessons.clear();
    if (!restored) keep_stage = true;
    return restored;
  }

  // The staging directory and everything left in it (this run's files, or the ones it replaced).
  void remove_stage() {
    if (stage_name.empty() || keep_stage) return;
    for (const int parent : {stage_fd.get(), old_fd.get()}) {
      if (parent < 0) continue;
      for (const Entry& e : entries) {
        const FileDescriptor in = lesson_dir(parent, e.lesson, false);
        if (in.get() >= 0) ::unlinkat(in.get(), e.name.c_str(), 0);
      }
      for (const Entry& e : entries)
        if (!e.lesson.empty()) ::unlinkat(parent, e.lesson.c_str(), AT_REMOVEDIR);
    }
    if (stage_fd.get() >= 0) ::unlinkat(stage_fd.get(), "old", AT_REMOVEDIR);
    ::unlinkat(dir_fd.get(), stage_name.c_str(), AT_REMOVEDIR);
    stage_name.clear();
    stage_fd = FileDescriptor();
    old_fd = FileDescriptor();
  }

  // A run that did not commit takes back every directory it made, DIR first, then the ones above it:
  // no half-made path is left (each goes only if empty, so what someone else put there since stays).
  void remove_created_dirs() {
    if (committed || keep_stage) return;
    for (auto d = created_dirs.rbegin(); d != created_dirs.rend(); ++d) ::unlinkat(d->first.get(), d->second.c_str(), AT_REMOVEDIR);
    created_dirs.clear();
  }

  // Makes DIR and the missing directories above it, from the nearest one there, each made with mkdirat
  // in the one above, opened without following a link, and remembered in created_dirs. -1 (and errno)
  // when one cannot be made or opened; those made before stay in created_dirs, for the caller to remove.
  FileDescriptor make_dir() {
    const Missing m = missing_part(dir);
    if (m.names.empty()) return FileDescriptor();  // DIR is there but cannot be opened (errno from the open)
    FileDescriptor at(::open(m.there.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (const std::string& name : m.names) {
      if (at.get() < 0) return at;
      const bool made = ::mkdirat(at.get(), name.c_str(), 0777) == 0;  // EEXIST: made since, or "." or ".."
      if (!made && errno != EEXIST) return FileDescriptor();
      FileDescriptor below = open_subdir(at.get(), name);
      const int error = errno;
      if (made) created_dirs.emplace_back(std::move(at), name);
      at = std::move(below);
      errno = error;
    }
    return at;
  }
};

NpySave::NpySave(const Document& doc, const std::string& dir) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.dir = dir;
  // DIR opened once (made first, with the missing directories above it, when missing): every later step
  // works on the directory opened here, with *at calls, whatever its path comes to name.
  s.dir_fd = FileDescriptor(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  try {
    if (s.dir_fd.get() < 0 && (errno == ENOENT || errno == ENOTDIR)) {
      s.dir_fd = s.make_dir();  // which the run removes again if it fails
      if (s.dir_fd.get() < 0) fail(dir + ": cannot create the directory", errno);
    }
    if (s.dir_fd.get() < 0) fail(dir + ": cannot open the directory", errno);
    s.stage_name = new_stage(s.dir_fd.get());
    if (s.stage_name.empty()) fail("cannot write in " + dir, errno);
    const std::string stage = dir + "/" + s.stage_name;
    s.stage_fd = open_subdir(s.dir_fd.get(), s.stage_name);
    if (s.stage_fd.get() < 0 || ::mkdirat(s.stage_fd.get(), "old", 0700) != 0) fail("cannot write in " + stage, errno);
    s.old_fd = open_subdir(s.stage_fd.get(), "old");
    const bool per_lesson = doc.sections.size() > 1;  // the tour: its lessons share step ids
    for (const Section& trace : doc.sections) {
      const std::string lesson = per_lesson ? trace.info.name : "";
      for (const Step& step : trace.steps) {
        if (!step.computed) continue;
        s.entries.push_back({lesson, step.id + ".npy"});
        const Entry& e = s.entries.back();
        (void)s.existing_file(e);  // refuses, before anything moves, what it could not replace
        const FileDescriptor in = s.lesson_dir(s.stage_fd.get(), lesson, true);
        if (!lesson.empty() && s.lesson_dir(s.old_fd.get(), lesson, true).get() < 0) fail("cannot write in " + stage, errno);
        const FileDescriptor file(in.get() < 0 ? -1
                                               : ::openat(in.get(), e.name.c_str(),
                                                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
        if (file.get() < 0) fail("cannot write " + s.shown(e), errno);
        const std::string bytes = npy_bytes(step);
        for (std::size_t at = 0; at < bytes.size();) {
          const ssize_t n = ::write(file.get(), bytes.data() + at, bytes.size() - at);
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) fail("cannot write " + s.shown(e), errno);
          at += static_cast<std::size_t>(n);
        }
      }
    }
  } catch (...) {
    s.remove_stage();
    s.remove_created_dirs();
    throw;
  }
}

void NpySave::commit() {
  State& s = *state_;
  try {
    for (Entry& e : s.entries) {
      FileDescriptor in = s.lesson_dir(s.dir_fd.get(), e.lesson, false);
      if (in.get() < 0) {
        if (errno != ENOENT || ::mkdirat(s.dir_fd.get(), e.lesson.c_str(), 0777) != 0) s.not_a_lesson_dir(e);
        s.created_lessons.push_back(e.lesson);
        in = s.lesson_dir(s.dir_fd.get(), e.lesson, false);
        if (in.get() < 0) fail("cannot write " + s.shown(e), errno);
      }
      s.move_in(e, in.get());
    }
  } catch (const SystemError& error) {
    if (s.roll_back()) throw;
    throw SystemError(std::string(error.what()) + "; some earlier files could not be put back: they are in " + s.dir +
                      "/" + s.stage_name);
  }
  s.committed = true;
  s.remove_stage();  // what is left there: the files this run replaced
}

NpySave::~NpySave() {
  State& s = *state_;
  if (!s.committed) s.roll_back();
  s.remove_stage();
  s.remove_created_dirs();
}

}  // namespace attn
