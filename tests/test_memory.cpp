// The memory budget: each lesson's peak estimated from its plan, refused before any work when it is
// past --max-memory (default 4 GiB), and the estimate checked against what the real executable uses.
//   - measured: the child's peak resident memory (wait4's ru_maxrss) never exceeds the estimate, and the
//     estimate is never so loose that it says nothing (at most 4 times the peak, plus the base);
//   - each lesson's largest accepted input under a small budget finishes under an address-space limit
//     (setrlimit RLIMIT_AS, what `ulimit -v` sets) of that budget plus the address space every process
//     reserves (OpenBLAS maps a buffer per thread), and one token more is refused;
//   - the examples that used to run out of memory, or work for minutes first, are refused at once.
// AddressSanitizer reserves terabytes of address space and doubles every allocation, so none of this
// means anything under it: the sanitizer build runs only the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <limits>
#include <fcntl.h>
#include <regex>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpt2_model.hpp"
#include "support.hpp"

using attn_test::Scratch;

namespace {

struct Measured {
  int status = -1;             // exit status; -1 if killed (a signal, or the 120 s alarm)
  std::size_t peak_bytes = 0;  // the child's peak resident memory
  std::string err;
};

// Runs the real attn with `args`, stdout to /dev/null, optionally under an address-space limit and with
// standard input read from `input`.
Measured run_measured(const std::vector<std::string>& args, std::size_t address_space = 0,
                      const std::string& input = "") {
  const Scratch scratch;
  const std::string err_path = scratch.dir + "/err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open("/dev/null", O_WRONLY);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!input.empty()) ::dup2(::open(input.c_str(), O_RDONLY), 0);
    if (address_space != 0) {
      const rlimit limit{address_space, address_space};
      ::setrlimit(RLIMIT_AS, &limit);
    }
    ::alarm(120);  // a run that hangs fails instead of stopping the suite
    std::vector<char*> argv{const_cast<char*>(ATTN_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(ATTN_EXE, argv.data());
    ::_exit(127);
  }
  Measured m;
  int raw = 0;
  rusage usage{};
  ::wait4(pid, &raw, 0, &usage);
  m.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  m.peak_bytes = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  std::ifstream in(err_path);
  m.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return m;
}

// The estimate attn gives for `args`, read from its refusals, starting under a budget of 1M. A run is
// checked in stages: parts of its need before the plan is known (the process's base; --random's numbers, a
// file's size, --model's tokenizer files and forward, before they are read or drawn; the heap as it plans,
// core/heap_budget.hpp), refused as "would need at least X", then the plan's whole estimate, refused as
// "would need an estimated X". The budget is raised past each part in turn until the plan's estimate is
// given; should the run be accepted first, that budget is returned (the need is within it). (--model runs
// go to the real executable: run in-process, an accepted one would grow this process, whose resident
// memory each measured child inherits at fork.)
std::size_t estimate_of(std::vector<std::string> args) {
  const bool model = std::find(args.begin(), args.end(), "--model") != args.end();
  const std::regex words("would need (an estimated|at least) ([0-9.]+) (GiB|MiB) of memory");
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::size_t budget = kMiB;
  for (int round = 0; round < 12; ++round) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--max-memory", std::to_string(budget)});
    attn_test::Run r;
    if (model) {
      std::string cmd = attn_test::quote(ATTN_EXE);
      for (const auto& arg : a) cmd += " " + attn_test::quote(arg);
      r = attn_test::shell(cmd + " >/dev/null");
    } else {
      r = attn_test::run(a);
    }
    if (r.status == 0) return budget;
    REQUIRE(r.status == 2);
    // Another limit may refuse first (a tensor of more than 2^28 numbers): then it fits no budget.
    if (r.err.find("more than the limit of") != std::string::npos) return std::numeric_limits<std::size_t>::max();
    INFO(r.err);
    std::smatch m;
    REQUIRE(std::regex_search(r.err, m, words));
    const auto need = static_cast<std::size_t>(std::stod(m[2]) * (m[3] == "GiB" ? 1024.0 : 1.0) * kMiB);
    if (m[1] == "an estimated") return need;
    REQUIRE(need + kMiB > budget);  // each part asks for more than the budget refused
    budget = need + kMiB;
  }
  FAIL("more than 12 checks, each asking for more: " << budget);
  return budget;
}

// A GPT-2 directory with all-zero weights of the given shape in a sparse file (no disk is used).
std::string zero_model(const Scratch& s, const std::string& name, std::size_t E, std::size_t layers, std::size_t heads,
                       std::size_t positions) {
  return attn_test::gpt2_model(s.dir + "/" + name, E, layers, heads, positions);
}

std::vector<std::string> with_random(std::vector<std::string> args, std::size_t n, std::size_t d) {
  args.insert(args.begin() + 1, {"--random", std::to_string(n) + "x" + std::to_string(d)});
  return args;
}

}  // namespace

TEST_CASE("past the memory budget: refused before any work, with the estimate and the budget", "[memory]") {
  // The examples: 12 to 15 GiB each, accepted before.
  const auto mha = attn_test::run({"mha", "--random", "8192x4096", "--d-out", "4096", "--heads", "4", "--batch", "1"});
  CHECK(mha.status == 2);
  CHECK(mha.out.empty());
  CHECK(std::regex_search(mha.err, std::regex("^attn: attn mha would need an estimated [0-9.]+ GiB of memory, more "
                                               "than the budget of 4\\.0 GiB; use fewer tokens, dimensions, heads or a "
                                               "smaller batch, or raise it with --max-memory")));
  const auto causal = attn_test::run({"causal", "--random", "8192x4096", "--d-out", "4096", "--batch", "4"});
  CHECK(causal.status == 2);
  CHECK(causal.err.find("attn causal would need an estimated") != std::string::npos);
  // The tour's lessons are planned as one run: gqa's refusal comes before simple computes anything (the
  // tour used to work for minutes and then run out of memory).
  const auto tour = run_measured({"tour", "--random", "5800x2"});
  CHECK(tour.status == 2);
  CHECK(tour.err.find("attn: ") == 0);
  if (!attn_test::kUnderAsan) CHECK(tour.peak_bytes < (std::size_t{100} << 20));  // all-tokens alone would hold 134 MB
  // --max-memory takes sizes from 1M to 1P, and lowers the budget as well as raises it.
  const auto small = attn_test::run({"causal", "--max-memory", "64M"});
  CHECK(small.status == 2);
  CHECK(small.err.find("more than the budget of 64 MiB") != std::string::npos);
  CHECK(attn_test::run({"causal", "--max-memory", "1G", "--quiet"}).status == 0);
  CHECK(attn_test::run({"causal", "--max-memory", "1.5g", "--quiet"}).status == 0);
  CHECK(attn_test::run({"causal", "--max-memory", "268435456", "--quiet"}).status == 0);  // bytes: 256 MiB
  // Zero, negative, overflowing, unit-less but huge or tiny, and malformed values are usage errors that
  // give the accepted range (-1 once wrapped around to an unlimited budget).
  const std::string range = "a size from 1M to 1P, such as 512M or 16G (K, M, G, T, P are powers of 1024)";
  const std::vector<std::pair<std::string, std::string>> bad{
      {"lots", "'lots' is not " + range},
      {"-1", "'-1' is not " + range},
      {"-4G", "'-4G' is not " + range},
      {"4X", "'4X' is not " + range},
      {"5.", "'5.' is not " + range},
      {"", "'' is not " + range},
      {"0", "'0' is below the smallest budget, 1M; give " + range},
      {"512", "'512' is below the smallest budget, 1M (a number without a unit is bytes: did you mean 512M?); give " + range},
      {"99999999999999999999", "'99999999999999999999' is past the largest budget, 1P; give " + range},
      {"1000000000000000000", "'1000000000000000000' is past the largest budget, 1P; give " + range},
      {"2P", "'2P' is past the largest budget, 1P; give " + range},
      {"18446744073709551617G", "'18446744073709551617G' is past the largest budget, 1P; give " + range},
  };
  for (const auto& [value, says] : bad) {
    INFO(value);
    const auto r = attn_test::run({"causal", "--max-memory", value});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "attn: --max-memory: " + says + " (see 'attn causal --help')\n");
  }
}

TEST_CASE("a run past the budget is refused with its memory still within it: inputs drawn, read and planned", "[memory]") {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const auto within = [&](const std::vector<std::string>& args, std::size_t budget, const std::string& says,
                          const std::string& input = "") {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--max-memory", std::to_string(budget / kMiB) + "M"});
    const Measured m = run_measured(a, 0, input);
    std::string line;
    for (const auto& arg : a) line += " " + arg;
    INFO(line << "\n" << m.err);
    CHECK(m.status == 2);
    CHECK(m.err.rfind("attn: attn " + args.front() + " would need ", 0) == 0);
    CHECK(m.err.find(says) != std::string::npos);
    CHECK(m.err.find("more than the budget of " + std::to_string(budget / kMiB) + " MiB") != std::string::npos);
    if (!attn_test::kUnderAsan && budget >= attn::kBaseBytes) CHECK(m.peak_bytes <= budget);  // below it: the process
    return m;
  };
  // The examples: --random was drawn (128 MiB) and copied to 655 MiB before the refusal; its
  // numbers are now counted before they are drawn.
  const Measured drawn = within({"simple", "--random", "8192x4096"}, 128 * kMiB, "at least 352 MiB of memory (for its inputs)");
  if (!attn_test::kUnderAsan) CHECK(drawn.peak_bytes < 64 * kMiB);
  // The docs' own example reached 1.14 GiB under 512M: the inputs fit, the module's four (4096, 4096)
  // weights and the trace's copies do not, and the heap's budget stops them as they are drawn.
  within({"mha", "--random", "8192x4096", "--d-out", "4096", "--heads", "4", "--batch", "1"}, 512 * kMiB,
         "the budget was reached while planning its steps");
  // The class: every lesson that draws a module, the tour (planned whole) and a batch.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"causal", "--random", "8192x4096", "--d-out", "4096", "--batch", "4"},
           {"mha-wrapper", "--random", "8192x4096", "--d-out", "2048", "--heads", "2"},
           {"gqa", "--random", "4096x4096", "--d-out", "4096", "--heads", "8", "--kv-groups", "2"},
           {"kv-cache", "--random", "4096x4096", "--d-out", "4096", "--heads", "4"},
           {"tour", "--random", "8192x4096"}})
    within(args, 512 * kMiB, "would need ");
  // An endless standard input was read to 512 MiB (1.04 GiB resident) whatever the budget.
  within({"simple", "--input", "-"}, 256 * kMiB, "the budget was reached while reading its inputs", "/dev/zero");
  // A file is counted on its size before it is read, and the parse within the budget: an 80 MB CSV of
  // 2,048 x 4,096 numbers was parsed whole (4.5 s, 318 MiB) before its refusal under 1M.
  const Scratch s;
  const std::string csv = s.dir + "/big.csv", json = s.dir + "/big.json";
  {
    std::ofstream out(csv), js(json);
    js << "[";
    for (int r = 0; r < 2048; ++r) {
      js << (r ? ",\n[" : "[");
      for (int c = 0; c < 4096; ++c) {
        const char* v = (r + c) % 3 == 0 ? "0.123456" : (r + c) % 3 == 1 ? "0.654321" : "0.5";
        out << (c ? "," : "") << v;
        js << (c ? "," : "") << v;
      }
      out << "\n";
      js << "]";
    }
    js << "]\n";
  }
  for (const std::string& file : {csv, json}) {
    const Measured tiny = within({"simple", "--input", file}, 1 * kMiB, "at least 96 MiB of memory (the process itself)");
    const Measured sized = within({"simple", "--input", file}, 128 * kMiB, "(for its inputs)");
    if (!attn_test::kUnderAsan) CHECK(std::max(tiny.peak_bytes, sized.peak_bytes) < 64 * kMiB);  // nothing read
    // Read and parsed (the file once, its numbers once), and refused while it is parsed or on the plan:
    // within the budget either way.
    within({"simple", "--input", file}, 200 * kMiB, "would need ");
  }
}

TEST_CASE("attn heads' page of 512 layers: the model view is in the estimate", "[memory]") {
  attn_test::not_under_asan("its allocator and shadow memory are not attn's");
  // 512 layers of 2 heads on 11 tokens: the page (157 MB) holds every layer's maps twice, once in its own
  // slide and once in the model view drawn with the first (there with a lines view each too); estimated at
  // 784 MiB, it peaked at 332 MiB.
  const Scratch s;
  const std::string deep = zero_model(s, "deep", 8, 512, 2, 16);
  const std::vector<std::string> args{"heads", "--model", deep, "--text", "The cat sat on the mat. The dog ran off",
                                      "--format", "html"};
  const std::size_t estimate = estimate_of(args);
  const Measured m = run_measured(args);
  INFO("estimate " << (estimate >> 20) << " MiB, measured peak " << (m.peak_bytes >> 20) << " MiB");
  CHECK(m.status == 0);
  CHECK(m.peak_bytes <= estimate);
  CHECK(m.peak_bytes * 4 > estimate);  // an upper bound, not a guess of any size
}

TEST_CASE("attn bench's estimate bounds its measured peak for every implementation and --decode", "[memory]") {
  attn_test::not_under_asan("its peak is the sanitizer's, not attn-bench's");
  const std::vector<std::string> quick{"bench", "--quick", "--repeats", "1"};
  const auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  for (const std::vector<std::string>& args : {
           // every implementation: the wrapper's heads' passes are the largest; mha's scores alone; the fused rows
           with(quick, {"--batch", "1", "--tokens", "2048", "--dim", "64", "--heads", "8", "--kv-groups", "2"}),
           with(quick, {"--batch", "1", "--tokens", "2048", "--dim", "64", "--heads", "8", "--impl", "mha"}),
           with(quick, {"--batch", "4", "--tokens", "1024", "--dim", "512", "--heads", "8", "--kv-groups", "4",
                        "--impl", "fused,gqa"}),
           // the machine's SGEMM, measured without --quick
           {"bench", "--repeats", "1", "--batch", "1", "--tokens", "8", "--dim", "8", "--heads", "2", "--kv-groups",
            "1", "--impl", "fused"},
           // the decode pools (at least 1 GiB), and without --quick the copy's two arrays of 256 MiB
           with(quick, {"--decode", "--cache", "1024", "--dim", "64", "--heads", "4", "--kv-groups", "2"}),
           {"bench", "--decode", "--repeats", "1", "--cache", "16", "--dim", "32", "--heads", "4", "--kv-groups", "2"},
       }) {
    std::string command;
    for (const auto& a : args) command += " " + a;
    INFO("attn" << command);
    const std::size_t estimate = estimate_of(args);
    const Measured m = run_measured(args);
    INFO(m.err);
    REQUIRE(m.status == 0);
    INFO("peak " << (m.peak_bytes >> 20) << " MiB, estimate " << (estimate >> 20) << " MiB");
    CHECK(m.peak_bytes <= estimate);
    CHECK(estimate <= 4 * m.peak_bytes + attn::kBaseBytes);
  }
}

TEST_CASE("the model and the renderers are in the budget, checked before the model is read", "[memory]") {
  const Scratch s;
  // The example: a model of n_embd 4096 under 256M was loaded and run to its layer first, and
  // peaked at 730 MiB. Its weights alone (mapped) are past the budget: refused before they are read.
  const std::string big = zero_model(s, "big", 4096, 1, 32, 64);
  const Measured refused = run_measured({"simple", "--model", big, "--max-memory", "256M"});
  CHECK(refused.status == 2);
  CHECK(refused.err.rfind("attn: attn simple would need at least ", 0) == 0);
  CHECK(refused.err.find("more than the budget of 256 MiB") != std::string::npos);
  if (!attn_test::kUnderAsan) CHECK(refused.peak_bytes < (std::size_t{64} << 20));
  // svg of 128 heads under 256M: estimated at 132 MiB before (a constant 8 MiB for the figure), it peaked
  // at 479 MiB; the figure's own memory is now counted, and the run refused.
  const std::vector<std::string> svg{"mha", "--random", "64x128", "--heads", "128", "--d-out", "128", "--format", "svg",
                                     "--step", "attn_weights", "--max-memory", "256M"};
  const Measured figure = run_measured(svg);
  CHECK(figure.status == 2);
  CHECK(figure.err.find("more than the budget of 256 MiB") != std::string::npos);
}

TEST_CASE("attn heads on GPT-2 small's shape at 1,024 tokens: planned whole, in the default budget, refused under less",
          "[memory]") {
  // 12 layers of 12 heads of (1024, 1024) weights, every layer kept for the output: 151 million floats. The
  // plan (about 2.8 GiB with the mapped weights and the forward) fits the default 4 GiB, and measured, the
  // text view peaked at 1.2 GB in 8 s: accepted. Here only the plan is checked, under budgets it is past,
  // so no 1,024-token forward runs.
  const Scratch s;
  const std::string small = zero_model(s, "gpt2-small", 768, 12, 12, 1024);
  std::string text = "a";
  for (int i = 1; i < 1024; ++i) text += " a";  // 1,024 tokens: 'a', then ' a'
  const std::vector<std::string> args{"heads", "--model", small, "--text", text};
  std::vector<std::string> refused = args;
  refused.insert(refused.end(), {"--max-memory", "2G"});
  const Measured r = run_measured(refused);
  CHECK(r.status == 2);
  // The model's own checks (tokenizer, then weights and forward, 0.8 GiB) pass; the lesson's plan does not.
  INFO(r.err);
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex("^attn: attn heads would need an estimated ([0-9.]+) GiB of memory, "
                                                 "more than the budget of 2\\.0 GiB")));
  const double need = std::stod(m[1]);
  CHECK(need > 2.0);  // the (12, 1024, 1024) steps, held up to three times over, and the model
  CHECK(need < 4.0);  // within the default budget, 4 GiB
  if (!attn_test::kUnderAsan) CHECK(r.peak_bytes < (std::size_t{400} << 20));  // refused before the forward
  // As JSON the 154,928,128 numbers are past the JSON limit, refused before any work too.
  std::vector<std::string> json = args;
  json.insert(json.end(), {"--json"});
  const Measured j = run_measured(json);
  CHECK(j.status == 2);
  CHECK(j.err.find("the JSON would hold 154,928,128 numbers, more than the limit of 33,554,432") != std::string::npos);
  if (!attn_test::kUnderAsan) CHECK(j.peak_bytes < (std::size_t{400} << 20));
}

TEST_CASE("the memory estimate bounds the measured peak of every lesson", "[memory]") {
  attn_test::not_under_asan("its allocator and shadow memory are not attn's");
  // Each lesson's own declared runs (lessons/registry.hpp's MemoryRuns), then the tour.
  std::vector<std::vector<std::string>> runs;
  for (const auto& lesson : attn::lessons()) {
    INFO("attn " << lesson.info.name << " declares no MemoryRuns::measured");
    CHECK(!lesson.memory.measured.empty());
    for (const auto& run : lesson.memory.measured) {
      runs.push_back({lesson.info.name});
      runs.back().insert(runs.back().end(), run.begin(), run.end());
    }
  }
  runs.push_back({"tour", "--random", "512x32"});
  // Each renderer's own memory (issue 26), and --model's.
  const Scratch s;
  runs.push_back({"mha", "--random", "48x128", "--heads", "128", "--d-out", "128", "--format", "svg", "--step", "attn_weights"});
  runs.push_back({"mha", "--random", "64x128", "--heads", "16", "--d-out", "128", "--format", "html"});
  runs.push_back({"mha", "--random", "64x128", "--heads", "64", "--d-out", "128", "--heatmap", "always", "--color", "always"});
  runs.push_back({"mha", "--random", "256x256", "--heads", "8", "--d-out", "256", "--save-npy", s.dir + "/npy", "--quiet"});
  const std::string model = zero_model(s, "model", 512, 2, 8, 256);
  runs.push_back({"mha", "--model", model, "--layer", "1", "--text", std::string(200, 'a')});
  runs.push_back({"causal", "--model", model, "--format", "html"});
  for (const auto& args : runs) {
    std::string line;
    for (const auto& a : args) line += a + " ";
    INFO(line);
    const std::size_t estimate = estimate_of(args);
    const Measured m = run_measured(args);
    INFO("estimate " << (estimate >> 20) << " MiB, measured peak " << (m.peak_bytes >> 20) << " MiB");
    REQUIRE(m.status == 0);
    CHECK(m.peak_bytes <= estimate);
    // A model's weights are mapped whole and counted so (they are address space, which RLIMIT_AS limits),
    // but only the pages a run reads become resident: the estimate may exceed the peak by them too.
    const bool with_model = std::find(args.begin(), args.end(), "--model") != args.end();
    const std::size_t mapped = with_model ? static_cast<std::size_t>(std::filesystem::file_size(model + "/model.safetensors")) : 0;
    CHECK(estimate <= 4 * m.peak_bytes + (std::size_t{96} << 20) + mapped);
  }
}

TEST_CASE("each lesson's largest accepted input finishes within the budget under an address-space limit",
          "[memory]") {
  attn_test::not_under_asan("it needs more address space than the limit allows");
  constexpr std::size_t kBudget = std::size_t{384} << 20;
  // What every attn process maps besides its data: the executable and libraries, thread stacks, and
  // OpenBLAS's buffer of 128 MiB per thread (below about 350 MiB OpenBLAS spins instead of failing).
  constexpr std::size_t kProcessAddressSpace = std::size_t{512} << 20;
  std::vector<std::vector<std::string>> lessons;  // each lesson with its declared options
  for (const auto& l : attn::lessons()) {
    if (!l.modes.front().uses_inputs) {
      // Chapter 4's lessons take no input to grow: their declared run (their largest model shape under the
      // budget) is planned within it and finishes within it under the same limit.
      std::vector<std::string> args{l.info.name};
      args.insert(args.end(), l.memory.at_budget.begin(), l.memory.at_budget.end());
      INFO("attn " << l.info.name << "'s declared run");
      CHECK(estimate_of(args) <= kBudget);
      args.insert(args.end(), {"--max-memory", std::to_string(kBudget)});
      const Measured m = run_measured(args, kBudget + kProcessAddressSpace);
      CHECK(m.status == 0);
      CHECK(m.err.empty());
      CHECK(m.peak_bytes <= kBudget);
      continue;
    }
    lessons.push_back({l.info.name});
    lessons.back().insert(lessons.back().end(), l.memory.at_budget.begin(), l.memory.at_budget.end());
  }
  for (const auto& lesson : lessons) {
    // The most tokens (of 16 dimensions) the budget accepts, by bisection on the estimate (which the
    // refusal message rounds up, so a size it puts under the budget is accepted).
    const auto fits = [&](std::size_t n) { return estimate_of(with_random(lesson, n, 16)) <= kBudget; };
    std::size_t lo = 2, hi = 8192;  // two tokens: kv-cache needs one to cache and one to decode
    REQUIRE(fits(lo));
    if (fits(hi)) lo = hi;
    while (hi - lo > 1) {
      const std::size_t mid = (lo + hi) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    INFO(lesson.front() << ": the largest accepted input is " << lo << "x16");
    auto args = with_random(lesson, lo, 16);
    args.insert(args.end(), {"--max-memory", std::to_string(kBudget)});
    const Measured largest = run_measured(args, kBudget + kProcessAddressSpace);
    CHECK(largest.status == 0);
    CHECK(largest.err.empty());
    CHECK(largest.peak_bytes <= kBudget);
  }
}

TEST_CASE("figures and pages and models: the largest accepted run finishes within the budget under an address-space limit",
          "[memory]") {
  attn_test::not_under_asan("it needs more address space than the limit allows");
  constexpr std::size_t kBudget = std::size_t{384} << 20;
  constexpr std::size_t kProcessAddressSpace = std::size_t{512} << 20;  // as in the case above
  const Scratch s;
  // GPT-2's shape at n_embd 512: 128 MiB of weights, mapped whole.
  const std::string model = zero_model(s, "model", 512, 2, 8, 256);
  const auto words = [](std::size_t n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i) text += " a";  // one token each
    return text;
  };
  struct Case {
    const char* name;
    std::function<std::vector<std::string>(std::size_t)> args;
    std::size_t lo, hi;  // the sizes tried: tokens
  };
  const std::vector<Case> cases{
      {"svg of 128 heads",
       [](std::size_t n) {
         return std::vector<std::string>{"mha", "--random", std::to_string(n) + "x128", "--heads", "128", "--d-out", "128",
                                         "--format", "svg", "--step", "attn_weights"};
       },
       2, 64},
      {"html of 64 heads",
       [](std::size_t n) {
         return std::vector<std::string>{"mha", "--random", std::to_string(n) + "x128", "--heads", "64", "--d-out", "128",
                                         "--format", "html"};
       },
       2, 8192},
      {"mha --model", [&](std::size_t n) { return std::vector<std::string>{"mha", "--model", model, "--layer", "1", "--text", words(n)}; },
       1, 256},
      {"causal --model as html",
       [&](std::size_t n) { return std::vector<std::string>{"causal", "--model", model, "--format", "html", "--text", words(n)}; },
       1, 256},
  };
  for (const Case& c : cases) {
    const auto fits = [&](std::size_t n) { return estimate_of(c.args(n)) <= kBudget; };
    std::size_t lo = c.lo, hi = c.hi;
    REQUIRE(fits(lo));
    if (fits(hi)) lo = hi;
    while (hi - lo > 1) {
      const std::size_t mid = (lo + hi) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    INFO(c.name << ": the largest accepted run has " << lo << " tokens");
    auto args = c.args(lo);
    args.insert(args.end(), {"--max-memory", std::to_string(kBudget)});
    const Measured largest = run_measured(args, kBudget + kProcessAddressSpace);
    CHECK(largest.status == 0);
    CHECK(largest.err.empty());
    CHECK(largest.peak_bytes <= kBudget);
  }
}
