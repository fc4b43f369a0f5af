// libFuzzer target: --save-npy's file handling against whatever is already in DIR. The input lays out DIR
// before the run (each entry a name from the run's own files, their lesson directories, the old
// temporary names and others; each a file, a directory, a link to a file or directory outside DIR, or a
// FIFO) and one change made between staging and the moves (the race a slow run leaves open). Whatever
// the layout:
//   - nothing outside DIR changes (no link is followed);
//   - a run that fails (a SystemError) leaves DIR exactly as it was, the change aside;
//   - a run that succeeds leaves every file of the run in place with its bytes and every other entry as
//     it was, and no staging directory behind.
// Built by scripts/fuzz.sh.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "inputs/embeddings.hpp"
#include "lessons/registry.hpp"
#include "output_checks.hpp"
#include "run/npy.hpp"

namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto st = fs::symlink_status(it->path());
    std::string what;
    if (fs::is_symlink(st)) {
      what = "link " + fs::read_symlink(it->path()).string();
    } else if (fs::is_directory(st)) {
      what = "dir";
    } else if (fs::is_regular_file(st)) {
      std::ifstream in(it->path(), std::ios::binary);
      what = "file " + std::string((std::istreambuf_iterator<char>(in)), {});
    } else {
      what = "other";
    }
    out[fs::relative(it->path(), dir).string()] = what;
  }
  return out;
}

struct World {
  std::string root, dir, outside;
  attn::Document doc;
  std::map<std::string, std::string> files;  // what a clean run writes: relative path -> "file <bytes>"
  std::vector<std::string> names;            // the names the layouts draw from
};

World& world() {
  static World w = [] {
    World w;
    char tmpl[] = "/tmp/attn-fuzz-npy-XXXXXX";
    static char root[sizeof tmpl];  // outlives the World, which is gone when the atexit handler runs
    w.root = std::strcpy(root, ::mkdtemp(tmpl));
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(root, ec);
    });
    w.dir = w.root + "/dir";
    w.outside = w.root + "/outside";
    fs::create_directories(w.outside + "/sub");
    std::ofstream(w.outside + "/victim") << "keep";
    std::istringstream none;
    const attn::Inputs in = attn::load_embeddings(attn::default_embeddings_path(), none);
    w.doc.command = "tour";
    for (const auto& lesson : attn::lessons())
      if (lesson.info.name == "simple" || lesson.info.name == "all-tokens")
        w.doc.sections.push_back(lesson.modes.front().run(in, lesson.modes.front().defaults, {}));
    {
      attn::NpySave save(w.doc, w.dir);
      save.commit();
    }
    w.files = snapshot(w.dir);
    for (const auto& [path, what] : w.files) w.names.push_back(path);
    for (const char* other : {"simple/x.npy.part", "notes", ".attn-save-AAAAAA", "simple/attn_scores_2.npy.part"})
      w.names.push_back(other);
    fs::remove_all(w.dir);
    return w;
  }();
  return w;
}

// Makes `rel` under DIR as kind k: 0 a file, 1 a directory, 2 a link to a file outside, 3 a link to a
// directory outside, 4 a FIFO. Parents are made as directories when missing; a failure is ignored.
void make(const World& w, const std::string& rel, unsigned k, char content) {
  const fs::path p = fs::path(w.dir) / rel;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (fs::exists(fs::symlink_status(p, ec))) return;
  switch (k % 5) {
    case 0: std::ofstream(p) << content; break;
    case 1: fs::create_directory(p, ec); break;
    case 2: fs::create_symlink(w.outside + "/victim", p, ec); break;
    case 3: fs::create_directory_symlink(w.outside + "/sub", p, ec); break;
    default: ::mkfifo(p.c_str(), 0600); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using attn_fuzz::check;
  World& w = world();
  std::error_code ec;
  fs::remove_all(w.dir, ec);
  const bool dir_exists = size == 0 || data[0] % 4 != 0;
  if (dir_exists) fs::create_directory(w.dir);
  std::size_t at = 1;
  for (; dir_exists && at + 2 < size && at < 1 + 3 * 12; at += 3)  // up to 12 entries
    make(w, w.names[data[at] % w.names.size()], data[at + 1], static_cast<char>(data[at + 2]));
  const auto outside_before = snapshot(w.outside);
  const auto before = dir_exists ? snapshot(w.dir) : std::map<std::string, std::string>{};
  std::map<std::string, std::string> expected_failed = before;
  bool committed = false;
  try {
    attn::NpySave save(w.doc, w.dir);
    // The staging directory: the one top-level entry staging added.
    std::string stage;
    for (const auto& [path, what] : snapshot(w.dir))
      if (before.count(path) == 0 && path.find('/') == std::string::npos && path.rfind(".attn-save-", 0) == 0) stage = path;
    check(!stage.empty());
    const auto staged = [&](const std::string& path) { return path == stage || path.rfind(stage + "/", 0) == 0; };
    if (at + 1 < size) {  // the change between staging and the moves
      const std::string rel = w.names[data[at] % w.names.size()];
      const fs::path p = fs::path(w.dir) / rel;
      if (data[at + 1] % 2 == 0) {
        fs::remove_all(p, ec);
      } else {
        make(w, rel, data[at + 1] / 2, 'x');
      }
      expected_failed = snapshot(w.dir);  // what DIR holds after the change, staging aside
      for (auto it = expected_failed.begin(); it != expected_failed.end();)
        it = staged(it->first) ? expected_failed.erase(it) : std::next(it);
    }
    save.commit();
    committed = true;
  } catch (const attn::SystemError& e) {
    const std::string message = e.what();
    check(message.rfind("--save-npy", 0) == 0 && message.find('\n') == std::string::npos);
  }
  check(snapshot(w.outside) == outside_before);
  const bool dir_now = fs::exists(fs::symlink_status(w.dir));
  const auto after = dir_now ? snapshot(w.dir) : std::map<std::string, std::string>{};
  if (!committed) {
    // DIR itself: there if it was, or if the change put something in the DIR this run made (which the run
    // then cannot remove); gone otherwise.
    check(dir_now == (dir_exists || !expected_failed.empty()));
    check(after == expected_failed);
    return 0;
  }
  // Every file of the run in place with its bytes; every other entry as before (or as the change left it),
  // so no staging directory either.
  for (const auto& [path, what] : w.files) {
    const auto it = after.find(path);
    check(it != after.end() && it->second == what);
  }
  for (const auto& [path, what] : after) {
    if (w.files.count(path) != 0) continue;
    const auto was = expected_failed.find(path);
    check(was != expected_failed.end() && was->second == what);
  }
  return 0;
}
