// The safetensors reader (src/model/safetensors) and --model's checks of a model directory (src/model/gpt2_model):
// values read back exactly in every dtype attn converts, and every bad file refused with one line naming it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/errors.hpp"
#include "model/gpt2_model.hpp"
#include "model/safetensors.hpp"
#include "support.hpp"

using attn::InputError;
using attn::SafetensorsFile;

namespace {

// A safetensors file: the 8-byte little-endian header length, the header, the data.
std::string file_of(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (const float v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

std::string halves(std::initializer_list<std::uint16_t> values) {
  std::string out;
  for (const std::uint16_t v : values) out.append(reinterpret_cast<const char*>(&v), 2);
  return out;
}

// The InputError's message for `bytes`, which must be refused.
std::string refusal(const std::string& bytes) {
  try {
    SafetensorsFile::parse(bytes, "m.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string temp_dir() {
  char pattern[] = "/tmp/attn-model-XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  return pattern;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  REQUIRE(out.good());
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string kTiny = ATTN_TESTS_DIR "/golden/models/tiny-f32";

// A copy of the tiny model's directory whose `file` is replaced by `bytes` (the tokenizer files are copied).
std::string model_with(const std::string& file, const std::string& bytes) {
  const std::string dir = temp_dir();
  for (const char* name : {"config.json", "model.safetensors", "vocab.json", "merges.txt"})
    write(dir + "/" + name, std::string(name) == file ? bytes : slurp(kTiny + "/" + name));
  return dir;
}

// The same copy without `file`.
std::string model_without(const std::string& file) {
  const std::string dir = model_with(file, "");
  std::remove((dir + "/" + file).c_str());
  return dir;
}

std::string load_refusal(const std::string& dir) {
  try {
    attn::Gpt2Model::load(dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("safetensors: F32, F16 and BF16 values read back exactly, wherever their bytes start", "[safetensors]") {
  // F16 then F32 right after it at an odd offset (3 halves = 6 bytes): not aligned, and accepted.
  const std::string data = halves({0x3C00, 0xC000, 0x0001}) + floats({1.5f, -0.0f}) + halves({0x3F80, 0xC049});
  const std::string header = R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2],"data_offsets":[6,14]},)"
                             R"("a":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},)"
                             R"("c":{"dtype":"BF16","shape":[1,2],"data_offsets":[14,18]}}   )";  // padded
  const SafetensorsFile f = SafetensorsFile::parse(file_of(header, data), "m.safetensors");
  REQUIRE(f.tensors().size() == 3);
  CHECK(f.tensors()[0].name == "a");  // in data order
  CHECK(f.tensors()[1].name == "b");
  const attn::SafeTensor* a = f.find("a");
  REQUIRE(a != nullptr);
  CHECK(a->at(0) == 1.0f);
  CHECK(a->at(1) == -2.0f);
  CHECK(a->at(2) == 5.960464477539063e-08f);
  const attn::SafeTensor* b = f.find("b");
  float out[2];
  b->to_float(out);
  CHECK(out[0] == 1.5f);
  CHECK((out[1] == 0.0f && std::signbit(out[1])));
  const attn::SafeTensor* c = f.find("c");
  CHECK(c->shape == std::vector<std::size_t>{1, 2});
  CHECK(c->at(0) == 1.0f);
  CHECK(c->at(1) == -3.140625f);
  CHECK(f.find("__metadata__") == nullptr);
  CHECK(f.find("d") == nullptr);
}

TEST_CASE("safetensors: an empty tensor is accepted and reads as nothing, into no buffer at all", "[safetensors]") {
  // Found by fuzz_safetensors under UBSan: to_float of a shape-[0] tensor passed a null vector's data()
  // to memcpy. The input is also in tests/fuzz/corpus-safetensors/regress-empty-tensor-memcpy.
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
                             R"("c":{"dtype":"BF16","shape":[3,0],"data_offsets":[8,8]}})";
  const SafetensorsFile f = SafetensorsFile::parse(file_of(header, floats({2.5f, -1.0f})), "m.safetensors");
  REQUIRE(f.tensors().size() == 3);
  for (const char* name : {"b", "c"}) {
    const attn::SafeTensor* t = f.find(name);
    REQUIRE(t != nullptr);
    CHECK(t->numel() == 0);
    CHECK(t->bytes == 0);
    std::vector<float> none;
    t->to_float(none.data());  // data() of an empty vector may be null: nothing is written or read
    t->to_float(nullptr);
  }
  float a[2];
  f.find("a")->to_float(a);
  CHECK(a[0] == 2.5f);
  CHECK(a[1] == -1.0f);
}

TEST_CASE("safetensors: overlapping data is refused whatever lies between, and empty tensors overlap nothing",
          "[safetensors]") {
  const auto entry = [](const char* name, int floats_n, int begin) {
    return "\"" + std::string(name) + "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(floats_n) +
           "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(begin + 4 * floats_n) + "]}";
  };
  const std::string data = floats({1, 2, 3, 4});  // 16 bytes
  const auto with = [&](const std::vector<std::string>& entries) {
    std::string header = "{";
    for (std::size_t i = 0; i < entries.size(); ++i) header += (i ? "," : "") + entries[i];
    return refusal(file_of(header + "}", data));
  };
  // The issue's example: an empty tensor between two that overlap, in offset order.
  CHECK(with({entry("a", 3, 0), entry("e", 0, 4), entry("b", 2, 8)}) ==
        "m.safetensors: tensors a and b overlap in the data");
  // A range inside a long one, after another that is inside it too: not neighbours in offset order.
  CHECK(with({entry("long", 4, 0), entry("x", 1, 4), entry("y", 1, 8)}) ==
        "m.safetensors: tensors long and x overlap in the data");
  CHECK(with({entry("long", 4, 0), entry("x", 1, 0)}) == "m.safetensors: tensors x and long overlap in the data");
  CHECK(with({entry("a", 2, 0), entry("b", 2, 0)}).find("overlap in the data") != std::string::npos);  // the same range
  // Accepted: empty tensors anywhere, even inside another's bytes, and ranges that only touch.
  CHECK(with({entry("a", 2, 0), entry("e", 0, 4), entry("f", 0, 8), entry("b", 2, 8)}) == "(accepted)");
  CHECK(with({entry("e", 0, 0), entry("a", 4, 0), entry("z", 0, 16)}) == "(accepted)");
}

TEST_CASE("safetensors: half-precision infinities, NaN, -0 and the largest values", "[safetensors]") {
  CHECK(attn::half_to_float(0x7C00) == INFINITY);
  CHECK(attn::half_to_float(0xFC00) == -INFINITY);
  CHECK(std::isnan(attn::half_to_float(0x7E00)));
  CHECK((attn::half_to_float(0x8000) == 0.0f && std::signbit(attn::half_to_float(0x8000))));
  CHECK(attn::half_to_float(0x7BFF) == 65504.0f);
  CHECK(attn::half_to_float(0x03FF) == 6.097555160522461e-05f);  // the largest subnormal
  CHECK(attn::half_to_float(0x3555) == 0.333251953125f);
  CHECK(attn::bfloat16_to_float(0x7F80) == INFINITY);
  CHECK(std::isnan(attn::bfloat16_to_float(0x7FC0)));
  CHECK(attn::bfloat16_to_float(0x3F80) == 1.0f);
}

TEST_CASE("safetensors: every bad file is one line that names it and says what is wrong", "[safetensors]") {
  const std::string ok_entry = R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::pair<std::string, std::string> cases[] = {
      {"", "shorter than the 8-byte header length"},
      {std::string("\x10\0\0\0", 4), "shorter than the 8-byte header length"},
      {file_of("{}").substr(0, 8) + "{", "past the end of the file (1 byte follows it)"},
      {std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "past the end of the file (2 bytes follow it)"},
      {file_of("{\"\xff\":1}"), "not UTF-8"},
      {file_of("{\"t\":"), "not JSON"},
      {file_of("[1,2]"), "not a JSON object"},
      {file_of(R"({"t":1e999})"), "a number too large"},  // nlohmann's out_of_range.406 (found by the fuzzer)
      {file_of(R"({"t":5})"), "is not an object"},
      {file_of(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", floats({1, 2})), "no dtype"},
      {file_of(R"({"t":{"dtype":"F32","data_offsets":[0,8]}})", floats({1, 2})), "no shape"},
      {file_of(R"({"t":{"dtype":"F32","shape":[2]}})", floats({1, 2})), "data_offsets are not two whole numbers"},
      {file_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[-1,8]}})", floats({1, 2})), "not two whole numbers"},
      {file_of(R"({"t":{"dtype":"F31","shape":[2],"data_offsets":[0,8]}})", floats({1, 2})), "unknown dtype \"F31\""},
      {file_of(R"({"t":{"dtype":"F32","shape":[2,-1],"data_offsets":[0,8]}})", floats({1, 2})), "not a list of whole"},
      {file_of(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", floats({1, 2})),
       "more elements than fit"},
      {file_of(R"({"t":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}})", floats({1, 2})),
       "more bytes than fit"},
      {file_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", floats({1, 2})), "begin after they end"},
      {file_of(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", floats({1, 2})), "past the 8 bytes"},
      {file_of(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", floats({1, 2})), "has 8 bytes where its dtype and shape need 12"},
      {file_of("{" + ok_entry + R"(,"u":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", floats({1, 2})), "overlap"},
      {file_of(R"({"__metadata__":[1],)" + ok_entry + "}", floats({1, 2})), "__metadata__ is not an object"},
      {file_of(R"({"__metadata__":{"a":1},)" + ok_entry + "}", floats({1, 2})), "\"a\" is not a string"},
  };
  for (const auto& [bytes, needle] : cases) {
    const std::string message = refusal(bytes);
    INFO(message);
    CHECK(message.rfind("m.safetensors: ", 0) == 0);
    CHECK(message.find(needle) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  // A control character in a tensor's name does not reach the terminal.
  const std::string hostile = refusal(file_of("{\"t\x1b[31m\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}"));
  CHECK(hostile.find('\x1b') == std::string::npos);
  // And the good entry alone is fine.
  CHECK(refusal(file_of("{" + ok_entry + "}", floats({1, 2}))) == "(accepted)");
}

TEST_CASE("safetensors: open() maps a real file, and refuses a directory or a missing file", "[safetensors]") {
  const SafetensorsFile f = SafetensorsFile::open(kTiny + "/model.safetensors");
  const attn::SafeTensor* wte = f.find("wte.weight");
  REQUIRE(wte != nullptr);
  CHECK(wte->shape == std::vector<std::size_t>{50257, 8});
  CHECK(f.find("h.0.attn.bias") != nullptr);  // the buffer is in the file; the model never reads it
  CHECK_THROWS_WITH(SafetensorsFile::open(ATTN_TESTS_DIR), Catch::Contains(": is a directory, not a file"));
  CHECK_THROWS_WITH(SafetensorsFile::open("/nonexistent/model.safetensors"), Catch::Contains("model.safetensors: cannot open the model's weights: No such file"));
}

TEST_CASE("model: a directory that is not a GPT-2 download is refused before any work", "[safetensors][model]") {
  const std::string config = slurp(kTiny + "/config.json");
  const auto with_config = [&](const std::string& from, const std::string& to) {
    std::string changed = config;
    const auto at = changed.find(from);
    REQUIRE(at != std::string::npos);
    return model_with("config.json", changed.replace(at, from.size(), to));
  };
  CHECK_THAT(load_refusal("/nonexistent"), Catch::StartsWith("/nonexistent: cannot open the directory: No such file or directory; --model takes"));
  CHECK_THAT(load_refusal(kTiny + "/config.json"), Catch::Contains("config.json: is a regular file, not a directory; --model takes"));
  CHECK_THAT(load_refusal(model_without("config.json")), Catch::Contains("config.json: cannot open the model's config: No such file"));
  CHECK_THAT(load_refusal(model_with("config.json", "{")), Catch::Contains("config.json: not JSON"));
  CHECK_THAT(load_refusal(model_with("config.json", "{\"n_embd\": 1e999}")), Catch::Contains("config.json: holds a number too large"));
  CHECK_THAT(load_refusal(model_with("vocab.json", "{\"a\": 1e999}")), Catch::Contains("vocab.json: the tokenizer vocabulary is not valid JSON"));
  CHECK_THAT(load_refusal(with_config("\"n_embd\": 8", "\"n_embd\": 7")), Catch::Contains("not a multiple of n_head"));
  CHECK_THAT(load_refusal(with_config("\"n_embd\": 8", "\"n_embd\": 4")),
             Catch::Contains("wte.weight has shape [50257, 8] where ") && Catch::EndsWith("/config.json asks for [50257, 4]"));
  CHECK_THAT(load_refusal(with_config("\"n_layer\": 3", "\"n_layer\": 4")), Catch::Contains("no tensor h.3.ln_1.weight"));
  CHECK_THAT(load_refusal(with_config("\"n_layer\": 3", "\"n_layer\": 0")), Catch::Contains("\"n_layer\" is not a whole number"));
  CHECK_THAT(load_refusal(with_config("\"gelu_new\"", "\"relu\"")), Catch::Contains("activation_function is \"relu\""));
  CHECK_THAT(load_refusal(model_with("vocab.json", "[]")), Catch::Contains("vocab.json: the tokenizer vocabulary is not"));
  CHECK_THAT(load_refusal(model_with("merges.txt", "#version: 0.2\n")), Catch::Contains("merges.txt: the tokenizer merges"));
  const std::string weights = slurp(kTiny + "/model.safetensors");
  CHECK_THAT(load_refusal(model_with("model.safetensors", weights.substr(0, weights.size() - 1))),
             Catch::Contains("model.safetensors: tensor ln_f.bias's data ends at byte"));
  // Through the command line: exit 1 and one line.
  const attn_test::Run r = attn_test::run({"simple", "--model", model_with("config.json", "{")});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::StartsWith("attn: ") && Catch::Contains("config.json: not JSON"));
}

TEST_CASE("model: out-of-range values and options the model decides are usage errors that give the range",
          "[model]") {
  const auto refused = [](std::vector<std::string> args, const std::string& needle) {
    const attn_test::Run r = attn_test::run(args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(needle) != std::string::npos);
  };
  refused({"simple", "--model", kTiny, "--layer", "3"}, "--layer 3 is past the last block of");
  refused({"simple", "--model", kTiny, "--layer", "3"}, "--layer 0 to 2");
  refused({"causal", "--model", kTiny, "--head", "2"}, "--head 0 to 1");
  refused({"gqa", "--model", kTiny}, "attn gqa does not take --model: GroupedQueryAttention shares");
  refused({"mha", "--model", kTiny, "--d-out", "4"}, "--d-out does not apply with --model");
  refused({"mha", "--model", kTiny, "--head", "1"}, "attn mha does not take --head");
  refused({"causal", "--head", "1"}, "--head only applies with --model");
  refused({"simple", "--layer", "1"}, "--layer only applies with --model");
  refused({"simple", "--model", kTiny, "--d-in", "4", "--text", "hi"}, "--d-in does not apply with --model");
  refused({"simple", "--model", kTiny, "--random", "2x3"}, "--model and --random exclude each other");
  refused({"heads", "--model", kTiny, "--seed", "3"}, "attn heads --model draws no weights, so --seed does not apply");
  refused({"simple", "--model", kTiny, "--text", "one two three four five six seven eight nine ten eleven twelve "
                                                  "thirteen fourteen fifteen sixteen seventeen"},
          "--text has more tokens than the model's context length (n_positions) of 16");
}

TEST_CASE("model: the tour runs every lesson that takes a model, and says which weights", "[model]") {
  const attn_test::Run r = attn_test::run({"tour", "--model", kTiny, "--json"});
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  std::vector<std::string> lessons, expected;
  for (const auto& l : doc.at("lessons")) lessons.push_back(l.at("lesson"));
  for (const auto& l : attn::lessons())
    if (l.modes.front().takes_model) expected.push_back(l.info.name);
  CHECK(lessons == expected);
  CHECK(expected.size() < attn::lessons().size());  // gqa takes no model (GPT-2 has no grouped heads)
  CHECK(std::find(lessons.begin(), lessons.end(), "mha") != lessons.end());
}

namespace {

// What chapter 5's gpt_download.py leaves in gpt2/124M (empty files: only the names are looked at).
void book_download(const std::string& dir) {
  REQUIRE(std::system(("mkdir -p " + attn_test::quote(dir)).c_str()) == 0);
  for (const char* name : {"checkpoint", "hparams.json", "encoder.json", "vocab.bpe", "model.ckpt.data-00000-of-00001",
                           "model.ckpt.index", "model.ckpt.meta"})
    write(dir + "/" + name, "");
}

// The message for the book's download in `dir`, converted with `script` from `src` to `dest` (each as
// bash reads it).
std::string book_advice(const std::string& dir, const std::string& script, const std::string& src, const std::string& dest) {
  return "attn: " + dir + ": holds the book's gpt_download.py download, a TensorFlow checkpoint (hparams.json, "
         "model.ckpt.*), not the Hugging Face files --model reads; convert it once, with TensorFlow and NumPy as in "
         "chapter 5: python3 " + script + " " + src + " " + dest + ", then pass --model " + dest +
         "; or download Hugging Face's config.json, model.safetensors, vocab.json and merges.txt instead (docs/gpt2.md)\n";
}

}  // namespace

TEST_CASE("model: the book's own GPT-2 download (a TensorFlow checkpoint) is refused with the command that converts it",
          "[model]") {
  const attn_test::Scratch scratch;
  const std::string dir = scratch.dir + "/gpt2/124M";
  book_download(dir);
  // From the build tree the message names the checkout's script (an installed attn names share/attn's:
  // tests/test_install.cpp).
  ::unsetenv("ATTN_DATA_DIR");
  const attn_test::Run r = attn_test::run({"mha", "--model", dir});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  const std::string prefix = "attn: " + dir + ": holds the book's gpt_download.py download";
  REQUIRE_THAT(r.err, Catch::StartsWith(prefix) && Catch::Contains("python3 /"));
  const auto at = r.err.find("python3 ") + 8;
  const std::string script = r.err.substr(at, r.err.find(' ', at) - at);
  CHECK(r.err == book_advice(dir, script, dir, dir + "-hf"));
  INFO(script);
  CHECK(script == ATTN_SOURCE_DIR "/scripts/gpt2-tf-to-hf.py");
  // $ATTN_DATA_DIR, which an installed attn's data can be moved to, comes first.
  REQUIRE(std::system(("mkdir -p " + attn_test::quote(scratch.dir + "/share") + " && cp " +
                       attn_test::quote(ATTN_SOURCE_DIR "/scripts/gpt2-tf-to-hf.py") + " " +
                       attn_test::quote(scratch.dir + "/share/")).c_str()) == 0);
  ::setenv("ATTN_DATA_DIR", (scratch.dir + "/share").c_str(), 1);
  const std::string moved = scratch.dir + "/share/gpt2-tf-to-hf.py";
  CHECK(attn_test::run({"causal", "--model", dir + "/"}).err == book_advice(dir + "/", moved, dir, dir + "-hf"));
  // Every lesson and the tour refuse it the same way, before any work.
  // A lesson that takes no model (gqa) refuses --model itself, as a usage error (tested above).
  std::size_t refused = 0;
  for (const auto& lesson : attn::lessons()) {
    if (!lesson.modes.front().takes_model) continue;
    INFO(lesson.info.name);
    CHECK(attn_test::run({lesson.info.name, "--model", dir}).err == book_advice(dir, moved, dir, dir + "-hf"));
    ++refused;
  }
  CHECK(refused >= 2);
  CHECK(attn_test::run({"tour", "--model", dir}).err == book_advice(dir, moved, dir, dir + "-hf"));
  // A path bash must see quoted is quoted; one a terminal must not see raw is escaped, in words bash reads
  // back to the same bytes.
  const std::string spaced = scratch.dir + "/my models/it's 124M";
  book_download(spaced);
  CHECK(attn_test::run({"mha", "--model", spaced}).err ==
        book_advice(spaced, moved, "'" + scratch.dir + "/my models/it'\\''s 124M'", "'" + scratch.dir + "/my models/it'\\''s 124M-hf'"));
  const std::string hostile = scratch.dir + "/gpt2\x1b[2J";
  book_download(hostile);
  CHECK(attn_test::run({"mha", "--model", hostile}).err ==
        book_advice(scratch.dir + "/gpt2\\x1b[2J", moved, "$'" + scratch.dir + "/gpt2\\x1b[2J'", "$'" + scratch.dir + "/gpt2\\x1b[2J-hf'"));
  // A relative path, and "." (whose "-hf" would be a hidden name): the new directory is a sibling, or gpt2-hf.
  const std::string cwd = scratch.dir + "/gpt2";
  char here[4096];
  REQUIRE(::getcwd(here, sizeof here) != nullptr);
  REQUIRE(::chdir(dir.c_str()) == 0);
  const std::string in_place = attn_test::run({"mha", "--model", "."}).err;
  REQUIRE(::chdir(cwd.c_str()) == 0);
  const std::string relative = attn_test::run({"mha", "--model", "124M"}).err;
  REQUIRE(::chdir(here) == 0);
  ::unsetenv("ATTN_DATA_DIR");
  CHECK(in_place == book_advice(".", moved, ".", "gpt2-hf"));
  CHECK(relative == book_advice("124M", moved, "124M", "124M-hf"));
  // The folder gpt_download.py downloads into (its models_dir), above the model's own: the message names
  // the model's folder.
  const std::string source_script = ATTN_SOURCE_DIR "/scripts/gpt2-tf-to-hf.py";
  CHECK(attn_test::run({"mha", "--model", cwd}).err ==
        "attn: " + cwd + ": is the folder gpt_download.py downloads into, not a model; " +
            book_advice(dir, source_script, dir, dir + "-hf").substr(6));
  // Only that layout: Hugging Face's files beside a checkpoint are read as they are, and without
  // model.ckpt.index the missing config.json is the error, as before.
  const std::string both = model_with("", "");
  write(both + "/hparams.json", "");
  write(both + "/model.ckpt.index", "");
  CHECK(attn_test::run({"simple", "--model", both, "--quiet", "--step", "norm1_x"}).status == 0);
  std::remove((dir + "/model.ckpt.index").c_str());
  CHECK_THAT(load_refusal(dir), Catch::Contains("config.json: cannot open the model's config: No such file"));
}

TEST_CASE("gpt2-tf-to-hf.py: the book's checkpoint converted without TensorFlow gives attn's output bit for bit",
          "[model][e2e]") {
  // tests/inputs/gpt2_tf_convert.py turns each tiny model into the checkpoint's variables (names and shapes
  // as OpenAI's model.py makes them), converts them with the script's writing half (its plain safetensors
  // writer: the package is not installed) and with the whole script (tf.train answered by a stand-in), and
  // checks every tensor, the refusals and that nothing half-written is left. Here attn runs on the model
  // and on both conversions, each as `m` in a directory of its own, so that even the paths in the JSON agree.
  const std::vector<std::string> commands{"mha --json", "tour --json",
                                          "heads --layer 1 --text 'The cat sat on the mat' --json",
                                          "causal --layer 1 --head 1 --text 'Hello, world' --json"};
  for (const char* model : {"tiny-f32", "tiny-f16", "tiny-bf16"}) {
    INFO(model);
    const attn_test::Scratch scratch;
    const std::string source = ATTN_TESTS_DIR "/golden/models/" + std::string(model);
    const attn_test::Run converted =
        attn_test::shell("mkdir " + attn_test::quote(scratch.dir + "/work") + " && /usr/bin/python3 " +
                         attn_test::quote(ATTN_TESTS_DIR "/inputs/gpt2_tf_convert.py") + " " +
                         attn_test::quote(ATTN_SOURCE_DIR "/scripts/gpt2-tf-to-hf.py") + " " + attn_test::quote(source) +
                         " " + attn_test::quote(scratch.dir + "/work"));
    INFO(converted.err);
    REQUIRE(converted.status == 0);
    REQUIRE(converted.out == "ok\n");
    REQUIRE(attn_test::shell("mkdir -p " + attn_test::quote(scratch.dir + "/hf") + " && cp -rL " + attn_test::quote(source) +
                             " " + attn_test::quote(scratch.dir + "/hf/m")).status == 0);
    for (const auto& command : commands) {
      INFO(command);
      const auto in = [&](const std::string& dir) {
        return attn_test::shell("cd " + attn_test::quote(scratch.dir + "/" + dir) + " && " + attn_test::quote(ATTN_EXE) +
                                " " + command + " --model m");
      };
      const attn_test::Run hf = in("hf"), plain = in("work/plain"), whole = in("work/main");
      INFO(hf.err);
      REQUIRE(hf.status == 0);
      CHECK(hf.out.find("\"model\": \"m\"") != std::string::npos);
      CHECK(plain.status == 0);
      CHECK(plain.out == hf.out);
      CHECK(whole.status == 0);
      CHECK(whole.out == hf.out);
    }
  }
}
