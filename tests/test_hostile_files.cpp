// Paths that are not files, and files that hold more than they should (issue 26). Every file attn reads
// from outside is replaced, one at a time, by each kind of thing a path can name besides a regular file;
// each must give exit 1, one `attn:` line that names the file and what it is, nothing on stdout, and
// return at once (a FIFO nobody writes once hung attn forever; /dev/zero ate memory until it ran out).
// The real executable runs under `timeout`, so a regression fails here instead of hanging the suite.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/strings.hpp"
#include "support.hpp"

namespace {

using attn_test::quote;

struct Outcome {
  int status = -1;
  std::string out, err;
};

// build/attn with `args` in `dir`, standard input from `stdin_from` (a shell redirection or pipe source),
// killed after 20 s (status 124).
Outcome attn_in(const std::string& dir, const std::vector<std::string>& args, const std::string& env = "",
                const std::string& stdin_from = "</dev/null") {
  std::string cmd = "cd " + quote(dir) + " && " + env + " timeout -s KILL 20 " + quote(ATTN_EXE);
  for (const auto& a : args) cmd += " " + quote(a);
  const auto r = attn_test::shell(cmd + " " + stdin_from);
  return {r.status, r.out, r.err};
}

void copy_dir(const std::string& from, const std::string& to) {
  REQUIRE(std::system(("cp -rL " + quote(from) + " " + quote(to)).c_str()) == 0);
}

// What a path can be besides a regular file, each made at `path` (which must not exist), and the words the
// message gives for it.
struct NotAFile {
  const char* name;
  const char* says;
  std::function<void(const std::string&)> make;
};
const std::vector<NotAFile>& not_files() {
  static const std::vector<NotAFile> kinds{
      {"a FIFO nobody writes", "is a FIFO (a named pipe), not a file",
       [](const std::string& p) { REQUIRE(::mkfifo(p.c_str(), 0600) == 0); }},
      {"/dev/null (a character device)", "is a character device, not a file",
       [](const std::string& p) { REQUIRE(::symlink("/dev/null", p.c_str()) == 0); }},
      {"/dev/zero (endless)", "is a character device, not a file",
       [](const std::string& p) { REQUIRE(::symlink("/dev/zero", p.c_str()) == 0); }},
      {"a directory", "is a directory, not a file", [](const std::string& p) { REQUIRE(::mkdir(p.c_str(), 0700) == 0); }},
      {"a Unix socket", "is a socket, not a file",
       [](const std::string& p) {
         const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
         REQUIRE(fd >= 0);
         sockaddr_un addr{};
         addr.sun_family = AF_UNIX;
         REQUIRE(p.size() < sizeof addr.sun_path);
         std::copy(p.begin(), p.end(), addr.sun_path);
         REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
         ::close(fd);  // the socket file stays
       }},
  };
  return kinds;
}

void check_refused(const Outcome& r, const std::string& path, const std::string& says) {
  INFO("stderr: " << r.err);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("attn: " + path + ": " + says + " (attn reads ", 0) == 0);  // then what it reads there
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

const std::string kTiny = ATTN_TESTS_DIR "/golden/models/tiny-f32";

}  // namespace

TEST_CASE("every file of --model that is not a regular file is refused by name, at once", "[files][e2e]") {
  const attn_test::Scratch s;
  for (const char* file : {"config.json", "vocab.json", "merges.txt", "model.safetensors"}) {
    for (const auto& kind : not_files()) {
      INFO(file << " as " << kind.name);
      const std::string dir = s.dir + "/m";
      REQUIRE(std::system(("rm -rf " + quote(dir)).c_str()) == 0);
      copy_dir(kTiny, dir);
      REQUIRE(::unlink((dir + "/" + file).c_str()) == 0);
      kind.make(dir + "/" + file);
      check_refused(attn_in(s.dir, {"simple", "--model", "m"}), std::string("m/") + file, kind.says);
    }
  }
}

TEST_CASE("an --input that is not a regular file is refused by name, at once, and --input - is capped", "[files][e2e]") {
  const attn_test::Scratch s;
  for (const auto& kind : not_files()) {
    INFO(kind.name);
    const std::string path = s.dir + "/in.json";
    std::remove(path.c_str());
    ::rmdir(path.c_str());
    kind.make(path);
    check_refused(attn_in(s.dir, {"simple", "--input", "in.json"}), "in.json", kind.says);
  }
  // Standard input is a pipe by nature: it is read up to the cap on an embeddings file, then refused.
  const Outcome r = attn_in(s.dir, {"simple", "--input", "-"}, "", "< /dev/zero");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "attn: <stdin>: more than the limit of 512 MiB for an embeddings file (reading stopped there)\n");
}

TEST_CASE("the bundled data found through ATTN_DATA_DIR is held to the same checks", "[files][e2e]") {
  const attn_test::Scratch s;
  for (const auto& kind : not_files()) {
    INFO(kind.name);
    const std::string data = s.dir + "/data";
    REQUIRE(std::system(("rm -rf " + quote(data) + " && mkdir -p " + quote(data + "/gpt2")).c_str()) == 0);
    kind.make(data + "/journey.json");
    const Outcome book = attn_in(s.dir, {"simple"}, "ATTN_DATA_DIR=" + quote(data));
    // A data directory whose journey.json is not a file is passed over for the next place attn looks, as
    // a missing one is: the run goes on with the installed or source tree's copy.
    CHECK(book.status == 0);
    kind.make(data + "/gpt2/encoder.json");
    REQUIRE(std::system(("cp " + quote(std::string(ATTN_SOURCE_DIR) + "/data/gpt2/vocab.bpe") + " " +
                         quote(data + "/gpt2/")).c_str()) == 0);
    const Outcome text = attn_in(s.dir, {"simple", "--text", "Hello"}, "ATTN_DATA_DIR=" + quote(data));
    CHECK(text.status == 0);  // the same: only a regular file is found
  }
}

TEST_CASE("a file larger than its kind's cap is refused before it is read", "[files][e2e]") {
  const attn_test::Scratch s;
  const auto sparse = [&](const std::string& path, std::size_t bytes) {
    REQUIRE(std::system(("truncate -s " + std::to_string(bytes) + " " + quote(path)).c_str()) == 0);
  };
  struct Cap {
    const char* file;
    std::size_t cap;
    const char* limit;
  };
  for (const Cap& c : {Cap{"config.json", std::size_t{1} << 20, "1 MiB for the model's config"},
                       Cap{"vocab.json", std::size_t{16} << 20, "16 MiB for the tokenizer vocabulary"},
                       Cap{"merges.txt", std::size_t{16} << 20, "16 MiB for the tokenizer merges"}}) {
    INFO(c.file);
    const std::string dir = s.dir + "/m";
    REQUIRE(std::system(("rm -rf " + quote(dir)).c_str()) == 0);
    copy_dir(kTiny, dir);
    REQUIRE(::unlink((dir + "/" + c.file).c_str()) == 0);
    sparse(dir + "/" + c.file, c.cap + 1);
    const Outcome r = attn_in(s.dir, {"simple", "--model", "m"});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "attn: m/" + std::string(c.file) + ": " + attn::with_commas(c.cap + 1) + " bytes, more than the limit of " +
                       c.limit + "\n");
  }
  sparse(s.dir + "/big.csv", (std::size_t{512} << 20) + 1);
  const Outcome r = attn_in(s.dir, {"simple", "--input", "big.csv"});
  CHECK(r.status == 1);
  CHECK(r.err == "attn: big.csv: 536,870,913 bytes, more than the limit of 512 MiB for an embeddings file\n");
}

TEST_CASE("the four files of --model must agree, and each disagreement names both files", "[files][e2e]") {
  const attn_test::Scratch s;
  const std::string dir = s.dir + "/m";
  const auto fresh = [&] {
    REQUIRE(std::system(("rm -rf " + quote(dir)).c_str()) == 0);
    copy_dir(kTiny, dir);
  };
  const auto replace_in = [&](const std::string& file, const std::string& from, const std::string& to) {
    std::ifstream in(dir + "/" + file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    std::ofstream(dir + "/" + file, std::ios::trunc) << text.replace(at, from.size(), to);
  };
  // config.json's vocab_size past vocab.json's tokens once ended mha's next-token steps in an internal
  // error ("token id past the vocabulary"); below them, a token without a row of wte.
  for (const char* size : {"50300", "50000"}) {
    INFO("vocab_size " << size);
    fresh();
    replace_in("config.json", "\"vocab_size\": 50257", std::string("\"vocab_size\": ") + size);
    const Outcome r = attn_in(s.dir, {"mha", "--model", "m"});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "attn: m/config.json: vocab_size " + attn::with_commas(std::stoul(size)) +
                       ", but m/vocab.json has 50,257 tokens; the two must agree\n");
  }
  // A merge whose result the vocabulary lacks ("Ġt" + "he" is merge 2 of GPT-2's, "Ġthe" is token 262).
  fresh();
  replace_in("vocab.json", "\"\\u0120the\": 262", "\"\\u0120thx\": 262");
  const Outcome r = attn_in(s.dir, {"simple", "--model", "m", "--text", "the end"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "attn: m/merges.txt:8: merges \"\u0120t\" and \"he\" into \"\u0120the\", which m/vocab.json lacks\n");
}

TEST_CASE("a --text past the token limit is refused at once, however long its words", "[files][e2e]") {
  const attn_test::Scratch s;
  // One 120 KB word once took 33 to 80 s before the limit was checked.
  for (const std::string& text : {std::string(120000, 'x'), std::string(120000, '9'), std::string(60000, 'q') + " " +
                                                                                           std::string(60000, 'z')}) {
    const Outcome r = attn_in(s.dir, {"simple", "--text", text});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: --text has more tokens than the limit of 8,192 (", 0) == 0);
  }
}
