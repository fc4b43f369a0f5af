// --save-npy DIR never loses, clobbers or leaves data behind, and never writes outside DIR (issue 26):
// the files are staged in a fresh directory inside DIR and moved into place only after stdout has the
// whole output; a failure at any point, a failed move included, leaves DIR exactly as it was.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/errors.hpp"
#include "inputs/embeddings.hpp"
#include "lessons/registry.hpp"
#include "run/npy.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using attn_test::quote;

namespace {

// Every entry under `dir`: its path relative to dir, with its kind and, for files, its bytes; symbolic
// links as their targets, never followed.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(fs::symlink_status(dir))) return out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto rel = fs::relative(it->path(), dir).string();
    const auto st = fs::symlink_status(it->path());
    if (fs::is_symlink(st)) {
      out[rel] = "link -> " + fs::read_symlink(it->path()).string();
    } else if (fs::is_directory(st)) {
      out[rel] = "dir";
    } else {
      std::ifstream in(it->path(), std::ios::binary);
      out[rel] = std::string((std::istreambuf_iterator<char>(in)), {});
    }
  }
  return out;
}

struct Outcome {
  int status;
  std::string out, err;
};

// The real executable (stdout to `to`, or captured), so that a write error on stdout is a real one.
Outcome attn_exe(const std::vector<std::string>& args, const std::string& to = "") {
  std::string cmd = quote(ATTN_EXE);
  for (const auto& a : args) cmd += " " + quote(a);
  const auto r = attn_test::shell(cmd + (to.empty() ? "" : " >" + to));
  return {r.status, r.out, r.err};
}

std::size_t npy_files(const std::map<std::string, std::string>& snap) {
  std::size_t n = 0;
  for (const auto& [path, what] : snap) n += path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("save-npy: a failed or refused run leaves DIR as it found it", "[npy][e2e]") {
  const attn_test::Scratch s;
  const std::string dir = s.dir + "/out";
  REQUIRE(attn_exe({"simple", "--save-npy", dir, "--quiet"}, "/dev/null").status == 0);
  std::ofstream(dir + "/notes.txt") << "mine";
  const auto before = snapshot(dir);
  REQUIRE(npy_files(before) == 12);
  // stdout fails (a full disk): exit 1, and neither the earlier files nor the user's are touched, and no
  // new file is left (once all 12 earlier files were gone, or 12 new ones left behind).
  const Outcome full = attn_exe({"simple", "--random", "6x3", "--save-npy", dir}, "/dev/full");
  CHECK(full.status == 1);
  CHECK(full.err == "attn: cannot write output: No space left on device\n");
  CHECK(snapshot(dir) == before);
  // A closed pipe ends the run by SIGPIPE, as without --save-npy (exit 141 in the shell), and saves nothing.
  const auto piped = attn_test::shell("bash -c " + quote(quote(ATTN_EXE) + " tour --random 6x3 --save-npy " + quote(dir) +
                                                        " | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}"));
  CHECK(piped.out == "141\n");
  CHECK(snapshot(dir) == before);
  // A run refused by its limits (exit 2) or its options creates nothing, DIR included.
  const std::string fresh = s.dir + "/fresh";
  CHECK(attn_exe({"mha", "--random", "8000x64", "--heads", "64", "--d-out", "4096", "--save-npy", fresh}).status == 2);
  CHECK(attn_exe({"simple", "--max-memory", "1M", "--save-npy", fresh}).status == 2);
  CHECK(attn_exe({"simple", "--step", "no_such_step", "--save-npy", fresh}).status == 2);
  CHECK_FALSE(fs::exists(fresh));
  // A failed stdout on a DIR the run would have created: no DIR afterwards, nor the parents it would have made.
  CHECK(attn_exe({"simple", "--save-npy", fresh}, "/dev/full").status == 1);
  CHECK_FALSE(fs::exists(fresh));
  CHECK(attn_exe({"simple", "--save-npy", fresh + "/a/b"}, "/dev/full").status == 1);
  CHECK_FALSE(fs::exists(fresh));
  const auto piped_fresh = attn_test::shell("bash -c " + quote(quote(ATTN_EXE) + " tour --save-npy " + quote(fresh) +
                                                              " | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}"));
  CHECK(piped_fresh.out == "141\n");
  CHECK_FALSE(fs::exists(fresh));  // once: fresh/.attn-save-*/ with 190 files
  // An entry that is not a file where a step's file goes: refused before anything moves, nothing printed.
  REQUIRE(::mkdir((dir + "/res.npy.tmp").c_str(), 0700) == 0);
  fs::remove(dir + "/context_vec_2.npy");
  REQUIRE(::mkdir((dir + "/context_vec_2.npy").c_str(), 0700) == 0);
  const auto blocked_before = snapshot(dir);
  const Outcome blocked = attn_exe({"simple", "--random", "6x3", "--save-npy", dir});
  CHECK(blocked.status == 1);
  CHECK(blocked.out.empty());
  CHECK(blocked.err == "attn: --save-npy: cannot write " + dir +
                           "/context_vec_2.npy: a directory is in its place (attn replaces only files it could have "
                           "written)\n");
  CHECK(snapshot(dir) == blocked_before);
}

TEST_CASE("save-npy: no link is followed, and nothing outside DIR is written", "[npy][e2e]") {
  const attn_test::Scratch s;
  const std::string dir = s.dir + "/out", outside = s.dir + "/outside";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(::mkdir(outside.c_str(), 0700) == 0);
  std::ofstream(outside + "/victim") << "keep me";
  // Links planted where the old code put its temporary files, at a step's own name, and at a lesson's
  // directory for the tour.
  for (const char* name : {"attn_weights_2.npy.part", "context_vec_2.npy.part"})
    REQUIRE(::symlink((outside + "/victim").c_str(), (dir + "/" + name).c_str()) == 0);
  const auto outside_before = snapshot(outside);
  const Outcome one = attn_exe({"simple", "--save-npy", dir, "--quiet"});
  CHECK(one.status == 0);
  CHECK(snapshot(outside) == outside_before);
  CHECK(fs::is_symlink(dir + "/attn_weights_2.npy.part"));  // the links are the user's: left alone
  CHECK(fs::is_regular_file(fs::symlink_status(dir + "/attn_weights_2.npy")));
  // A link at a step's file name is not replaced (it is not a file attn could have written).
  REQUIRE(::symlink((outside + "/victim").c_str(), (dir + "/query.npy.x").c_str()) == 0);
  fs::remove(dir + "/query.npy");
  REQUIRE(::symlink((outside + "/victim").c_str(), (dir + "/query.npy").c_str()) == 0);
  const Outcome link = attn_exe({"simple", "--save-npy", dir, "--quiet"});
  CHECK(link.status == 1);
  CHECK(link.err == "attn: --save-npy: cannot write " + dir +
                        "/query.npy: a symbolic link is in its place (attn replaces only files it could have written)\n");
  // The tour's lesson directory as a link to a directory outside: refused, the outside untouched.
  const std::string tour = s.dir + "/tour";
  REQUIRE(::mkdir(tour.c_str(), 0700) == 0);
  REQUIRE(::symlink(outside.c_str(), (tour + "/causal").c_str()) == 0);
  const Outcome t = attn_exe({"tour", "--save-npy", tour, "--quiet"});
  CHECK(t.status == 1);
  CHECK(t.err.rfind("attn: --save-npy: cannot write " + tour + "/causal/", 0) == 0);
  CHECK(snapshot(outside) == outside_before);
  CHECK(snapshot(tour).size() == 1);  // the link alone
}

TEST_CASE("save-npy: a move that fails part way is undone, earlier files put back", "[npy]") {
  const attn_test::Scratch s;
  const std::string dir = s.dir + "/tour";
  // An earlier tour's files; the run below has other numbers (its inputs doubled).
  REQUIRE(attn_test::run({"tour", "--input", attn::default_embeddings_path(), "--save-npy", dir, "--quiet"}).status == 0);
  std::ofstream(dir + "/notes.txt") << "mine";
  const auto before = snapshot(dir);
  REQUIRE(npy_files(before) > 60);
  std::istringstream none;
  attn::Inputs in = attn::load_embeddings(attn::default_embeddings_path(), none);
  in.embeddings = in.embeddings * 2.0f;  // different numbers in every file
  attn::Document doc;
  doc.command = "tour";
  for (const auto& lesson : attn::lessons()) doc.sections.push_back(lesson.modes.front().run(in, lesson.modes.front().defaults, {}));
  {
    attn::NpySave save(doc, dir);
    CHECK(snapshot(dir).size() > before.size());  // staged inside DIR, in a directory of its own
    // Between staging and the moves, the last lesson's last file becomes a directory: the moves before
    // it (every other lesson's files, most replacing earlier ones) must all be undone.
    const auto& last = doc.sections.back();
    const std::string blocker = dir + "/" + last.info.name + "/" + last.steps.back().id + ".npy";
    fs::remove(blocker);
    REQUIRE(::mkdir(blocker.c_str(), 0700) == 0);
    auto expected = before;
    expected.erase(last.info.name + "/" + last.steps.back().id + ".npy");
    expected[last.info.name + "/" + last.steps.back().id + ".npy"] = "dir";
    CHECK_THROWS_AS(save.commit(), attn::SystemError);
    auto now = snapshot(dir);
    for (auto it = now.begin(); it != now.end();)  // the staging directory goes when `save` does
      it = it->first.rfind(".attn-save-", 0) == 0 ? now.erase(it) : std::next(it);
    CHECK(now == expected);
  }
  auto after = snapshot(dir);
  CHECK(std::none_of(after.begin(), after.end(), [](const auto& e) { return e.first.rfind(".attn-save-", 0) == 0; }));
  // Committed: every file replaced by the new numbers, the user's own file left alone, nothing staged left.
  fs::remove(dir + "/" + doc.sections.back().info.name + "/" + doc.sections.back().steps.back().id + ".npy");
  {
    attn::NpySave save(doc, dir);
    save.commit();
  }
  const auto done = snapshot(dir);
  CHECK(done.at("notes.txt") == "mine");
  CHECK(npy_files(done) == npy_files(before));
  CHECK(done.at("simple/inputs.npy") != before.at("simple/inputs.npy"));
  CHECK(std::none_of(done.begin(), done.end(), [](const auto& e) { return e.first.rfind(".attn-save-", 0) == 0; }));
}

TEST_CASE("save-npy: a missing DIR is made with its missing parents, which a run that fails takes back", "[npy]") {
  const attn_test::Scratch s;
  // attn mha --save-npy npy/mha: npy is made too (as mkdir -p), with exactly the files asked for.
  const std::string nested = s.dir + "/npy/mha";
  const auto made = attn_test::run({"mha", "--save-npy", nested, "--step", "attn_weights,context_vecs", "--quiet"});
  CHECK(made.status == 0);
  CHECK(made.err.empty());
  using Kinds = std::map<std::string, std::string>;
  const auto kinds = [](const std::string& dir) {
    Kinds out;
    for (const auto& [path, what] : snapshot(dir)) out[path] = what == "dir" ? "dir" : "file";
    return out;
  };
  CHECK(kinds(s.dir + "/npy") == Kinds{{"mha", "dir"}, {"mha/attn_weights.npy", "file"}, {"mha/context_vecs.npy", "file"}});
  // "." and doubled or trailing slashes in the path, and the tour's lesson directories below a made DIR.
  CHECK(attn_test::run({"simple", "--save-npy", s.dir + "/a/./b//c/", "--step", "query", "--quiet"}).status == 0);
  CHECK(kinds(s.dir + "/a") == Kinds{{"b", "dir"}, {"b/c", "dir"}, {"b/c/query.npy", "file"}});
  CHECK(attn_test::run({"tour", "--save-npy", s.dir + "/t/u", "--quiet"}).status == 0);
  CHECK(fs::is_regular_file(s.dir + "/t/u/simple/attn_scores_2.npy"));
  // A file in the way: refused before the work, exit 1, naming the file; nothing made, nothing printed.
  const std::string file = s.file("file", "mine");
  const auto blocked = attn_test::run({"simple", "--save-npy", file + "/x/y"});
  CHECK(blocked.status == 1);
  CHECK(blocked.out.empty());
  CHECK(blocked.err == "attn: --save-npy " + file + "/x/y: cannot create the directory: " + file + " is a regular file\n");
  // A refused run makes none of them.
  CHECK(attn_test::run({"simple", "--step", "no_such_step", "--save-npy", s.dir + "/fresh/x/y"}).status == 2);
  CHECK_FALSE(fs::exists(s.dir + "/fresh"));
  // Staged and not committed (stdout failed): DIR and every directory the run made above it are gone; a
  // parent that was there before stays, as it was.
  std::istringstream none;
  const attn::Inputs in = attn::load_embeddings(attn::default_embeddings_path(), none);
  attn::Document doc;
  doc.command = "simple";
  const auto& simple = attn::lessons().front().modes.front();
  doc.sections.push_back(simple.run(in, simple.defaults, {}));
  std::ofstream(s.dir + "/npy/notes.txt") << "mine";
  const auto before = snapshot(s.dir + "/npy");
  {
    attn::NpySave save(doc, s.dir + "/npy/p/q/r");
    CHECK(fs::is_directory(s.dir + "/npy/p/q/r"));
  }
  CHECK(snapshot(s.dir + "/npy") == before);
  {
    attn::NpySave save(doc, s.dir + "/gone/p");
    CHECK(fs::is_directory(s.dir + "/gone/p"));
  }
  CHECK_FALSE(fs::exists(s.dir + "/gone"));
  // Committed: the files are in DIR, under the directories made for it.
  {
    attn::NpySave save(doc, s.dir + "/kept/p");
    save.commit();
  }
  CHECK(npy_files(snapshot(s.dir + "/kept")) == 12);
}
