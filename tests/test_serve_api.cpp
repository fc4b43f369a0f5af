// attn serve's API is the command line: /api/LESSON?KEY=VALUE answers exactly what `attn LESSON --KEY VALUE
// --format json` writes, /page/LESSON the html, and a refusal is the command line's own line. Checked on every
// golden configuration that names no file (tests/golden/lessons/index.json: each lesson, the spread of options
// and the tiny --model runs, the model read once by the server as attn serve --model reads it), the tour and
// every lesson's page, in-process through Server::answer (the handler's own path), and once through a socket.
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

#include "cli/cli.hpp"
#include "cli/front_end.hpp"
#include "cli/options.hpp"
#include "lessons/registry.hpp"
#include "serve/server.hpp"

namespace {

using nlohmann::json;

struct ApiCase {
  std::string file, lesson, model;  // model: the directory a --model run names ("" for none)
  attn::Params params;              // the other options, as a request gives them
  std::vector<std::string> args;    // the same, as the command line takes them
};

// A golden configuration as a request: "--seed 5" is seed=5, a flag "--qkv-bias" is qkv-bias with no value.
// Those that read a file (--input) cannot be requests, and are left out.
std::vector<ApiCase> api_cases() {
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons/index.json");
  if (!in.good()) throw std::runtime_error("cannot read tests/golden/lessons/index.json");
  const json index = json::parse(in);
  std::vector<ApiCase> out;
  for (const auto& c : index.at("cases")) {
    ApiCase a{c.at("file"), c.at("lesson"), "", {}, {}};
    const std::vector<std::string> args = c.at("args");
    bool names_file = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string key = args[i].substr(2);
      const bool flag = i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0;
      const std::string value = flag ? "" : args[++i];
      if (key == "input") names_file = true;
      if (key == "model") {
        a.model = ATTN_TESTS_DIR "/golden/" + value;
        continue;
      }
      a.params.emplace_back(key, value);
      a.args.push_back("--" + key);
      if (!flag) a.args.push_back(value);
    }
    if (!names_file) out.push_back(a);
  }
  return out;
}

// One server per model directory, read once (as attn serve --model reads it), never bound to a port.
attn::Server& server_for(const std::string& model) {
  static std::map<std::string, std::unique_ptr<attn::Server>> servers;
  auto& s = servers[model];
  if (!s) {
    attn::ServeSettings settings;
    settings.model = model;
    s = std::make_unique<attn::Server>(settings, attn::command_line_front_end());
  }
  return *s;
}

// What the command line writes for `args` in `format`, with the model directory when there is one.
attn_test::Run command_line(const std::string& lesson, std::vector<std::string> args, const std::string& format,
                            const std::string& model = "") {
  args.insert(args.begin(), lesson);
  if (!model.empty()) args.insert(args.end(), {"--model", model});
  args.insert(args.end(), {"--format", format});
  return attn_test::run(args);
}

const bool registered = [] {
  attn_test::register_cases_from("tests/golden/lessons/index.json", [] {
    for (const ApiCase& c : api_cases()) {
      const std::string name = "serve: /api/" + c.lesson + " is attn " + c.lesson + " --format json, golden case " +
                               c.file.substr(0, c.file.find('.'));
      attn_test::register_case(name, "[serve]", [c] {
        const attn_test::Run expected = command_line(c.lesson, c.args, "json", c.model);
        REQUIRE(expected.status == 0);
        const attn::Server::Answer a = server_for(c.model).answer("GET", "/api/" + c.lesson, c.params);
        CHECK(a.status == 200);
        CHECK(a.content_type == "application/json");
        CHECK(a.body == expected.out);
      });
    }
  });
  return true;
}();

}  // namespace

TEST_CASE("serve: /api/tour and every lesson's /page are the command line's JSON and html", "[serve]") {
  attn::Server& server = server_for("");
  const attn_test::Run tour = command_line("tour", {}, "json");
  REQUIRE(tour.status == 0);
  const attn::Server::Answer a = server.answer("GET", "/api/tour", {});
  CHECK(a.status == 200);
  CHECK(a.body == tour.out);
  for (const std::string& lesson : attn_test::lesson_names()) {
    INFO(lesson);
    const attn_test::Run page = command_line(lesson, {}, "html");
    REQUIRE(page.status == 0);
    const attn::Server::Answer p = server.answer("GET", "/page/" + lesson, {});
    CHECK(p.status == 200);
    CHECK(p.content_type == "text/html; charset=utf-8");
    CHECK(p.body == page.out);
    bool csp = false;
    for (const auto& [name, value] : p.headers)
      if (name == "Content-Security-Policy") csp = value.find("default-src 'none'") == 0 && value.find("connect-src") == std::string::npos;
    CHECK(csp);
  }
}

// A lesson option `lesson` takes in none of its modes, for a request it must refuse: the first of a few that
// most lessons do not share.
static std::string not_taken(const attn::Lesson& lesson) {
  for (const auto& [opt, name] : std::vector<std::pair<attn::Opt, std::string>>{
           {attn::Opt::Seed, "seed"}, {attn::Opt::Layers, "layers"}, {attn::Opt::MaxNewTokens, "max-new-tokens"},
           {attn::Opt::DOut, "d-out"}})
    if (!lesson.takes(opt)) return name;
  FAIL("attn " << lesson.info.name << " takes every option this test refuses");
  return {};
}

TEST_CASE("serve: a refused request is a 400 whose error is the command line's own line", "[serve]") {
  attn::Server& server = server_for("");
  // For every lesson: an option it does not take, a value out of range, and a --step it lacks, each as the
  // command line refuses it.
  for (const attn::Lesson& lesson : attn::lessons()) {
    const std::string name = lesson.info.name;
    for (const attn::Params& params : std::vector<attn::Params>{
             {{not_taken(lesson), "5"}}, {{"step", "no_such_step"}}, {{"random", "0x3"}}}) {
      std::vector<std::string> args;
      for (const auto& [k, v] : params) args.insert(args.end(), {"--" + k, v});
      const attn_test::Run cli = command_line(name, args, "json");
      INFO(name << " " << params.front().first << "=" << params.front().second << ": " << cli.err);
      REQUIRE(cli.status == 2);
      const attn::Server::Answer a = server.answer("GET", "/api/" + name, params);
      CHECK(a.status == 400);
      CHECK(a.content_type == "application/json");
      CHECK(json::parse(a.body).at("error") == cli.err.substr(0, cli.err.size() - 1));
    }
  }
  // What no command line can say of a request: a file named, an option of the server's, a key given twice.
  const auto error = [&](const attn::Params& params) {
    const attn::Server::Answer a = server.answer("GET", "/api/mha", params);
    CHECK(a.status == 400);
    return json::parse(a.body).at("error").get<std::string>();
  };
  for (const char* key : {"input", "model", "save-npy"})
    CHECK(error({{key, "/etc/passwd"}}) == std::string("attn: --") + key +
                                               " names a file on the server, which a request may not (see 'attn mha --help')");
  CHECK(error({{"format", "text"}}).find("--format is the address's") != std::string::npos);
  CHECK(error({{"max-memory", "1P"}}).find("--max-memory is the server's") != std::string::npos);
  CHECK(error({{"seed", "1"}, {"seed", "2"}}) == "attn: --seed is given twice (see 'attn mha --help')");
  CHECK(error({{"help", ""}}) == "attn: attn mha has no option --help (see 'attn mha --help')");
  CHECK(error({{"nonsense\x1b[31m", "1"}}) == "attn: attn mha has no option --nonsense\\x1b[31m (see 'attn mha --help')");
  // An error's JSON holds no control character, as every JSON attn writes (the line itself made visible).
  const attn::Server::Answer hostile = server.answer("GET", "/api/mha", {{"seed", "\x7f\xc2\x9b\x1b[2J"}});
  CHECK(hostile.body == "{\"error\":\"attn: --seed: expected a whole number from 0 to 18446744073709551615, got "
                        "'\\\\x7f\\\\xc2\\\\x9b\\\\x1b[2J' (see 'attn mha --help')\"}\n");
}

TEST_CASE("serve: an empty value is the command line's empty value and never takes the next option as its value",
          "[serve]") {
  attn::Server& server = server_for("");
  // The example: text= became --text=, and CLI11 took the next option (--seed=5) as the text, then stopped at
  // the server's own "json".
  const attn::Server::Answer text = server.answer("GET", "/api/mha", {{"text", ""}, {"seed", "5"}});
  CHECK(text.status == 400);
  CHECK(json::parse(text.body).at("error") == "attn: --text has no tokens (give it a word or more) (see 'attn mha --help')");
  // The class: every option a request may give that takes a value, empty, before another option, on every
  // lesson and the tour: the command line's line for --NAME "".
  std::vector<std::string> commands = attn_test::lesson_names();
  commands.push_back("tour");
  for (const std::string& command : commands)
    for (const attn::OptionSpec& spec : attn::option_table()) {
      const bool lesson_side = spec.scope == attn::Scope::Input || spec.scope == attn::Scope::Output ||
                               spec.scope == attn::Scope::Step || spec.scope == attn::Scope::Lesson;
      if (!lesson_side || spec.is_flag() || !spec.web_refusal.empty()) continue;
      const std::string name = spec.spellings().front(), next = name == "--seed" ? "step" : "seed";
      const attn_test::Run cli = command_line(command, {name, "", "--" + next, "5"}, "json");
      INFO(command << " " << name << "=: " << cli.err);
      REQUIRE(cli.status == 2);
      const attn::Server::Answer a = server.answer("GET", "/api/" + command, {{name.substr(2), ""}, {next, "5"}});
      CHECK(a.status == 400);
      CHECK(json::parse(a.body).at("error") == cli.err.substr(0, cli.err.size() - 1));
    }
}

TEST_CASE("serve: unknown paths are 404, other methods 405, both with a JSON error", "[serve]") {
  attn::Server& server = server_for("");
  for (const char* path : {"/api/", "/api/nope", "/page/../api/simple", "/etc/passwd", "/api/simple/x", "/favicon.ico"}) {
    INFO(path);
    const attn::Server::Answer a = server.answer("GET", path, {});
    CHECK(a.status == 404);
    CHECK(json::parse(a.body).at("error").get<std::string>().rfind("attn: nothing is served at ", 0) == 0);
  }
  const attn::Server::Answer a = server.answer("POST", "/api/simple", {});
  CHECK(a.status == 405);
  CHECK(a.headers == std::vector<std::pair<std::string, std::string>>{{"Allow", "GET, HEAD"}});
}

namespace {

// A server on loopback, listening on a free port in a thread of its own until the end of the scope.
struct Listening {
  static attn::ServeSettings any_port() {
    attn::ServeSettings settings;
    settings.port = 0;
    return settings;
  }
  attn::Server server{any_port(), attn::command_line_front_end()};
  const int port = server.bind();
  std::thread thread{[this] { server.listen(); }};
  ~Listening() {
    server.stop();
    thread.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    return c;
  }
};

}  // namespace

TEST_CASE("serve: through a socket, /api's body is the command line's JSON, with no CORS header", "[serve]") {
  httplib::Result r = [] {
    Listening l;
    return l.client().Get("/api/mha?seed=5&d-out=6&text=Hello%2C%20world");
  }();
  REQUIRE(r);
  CHECK(r->status == 200);
  const attn_test::Run cli = command_line("mha", {"--seed", "5", "--d-out", "6", "--text", "Hello, world"}, "json");
  CHECK(r->body == cli.out);
  CHECK(r->get_header_value("Content-Type") == "application/json");
  CHECK(r->get_header_value("X-Content-Type-Options") == "nosniff");
  CHECK_FALSE(r->has_header("Access-Control-Allow-Origin"));
}

TEST_CASE("serve: on loopback, only a loopback Host is answered", "[serve]") {
  Listening l;
  httplib::Client client = l.client();
  std::map<std::string, int> statuses;
  for (const char* host : {"127.0.0.1", "localhost", "127.1.2.3:8000", "[::1]:8000", "localhost:1", "127.0.0.1.example.com",
                           "localhost.example.com", "example.com", "0.0.0.0", "[::2]", ""}) {
    const auto r = client.Get("/api/simple", httplib::Headers{{"Host", host}});
    statuses[host] = r ? r->status : -1;
  }
  CHECK(statuses == std::map<std::string, int>{{"127.0.0.1", 200}, {"localhost", 200}, {"127.1.2.3:8000", 200},
                                               {"[::1]:8000", 200}, {"localhost:1", 200}, {"127.0.0.1.example.com", 403},
                                               {"localhost.example.com", 403}, {"example.com", 403}, {"0.0.0.0", 403},
                                               {"[::2]", 403}, {"", 403}});
}

TEST_CASE("serve: the live page is the lesson's page with its bar, an empty box meaning the default", "[serve]") {
  attn::Server& server = server_for("");
  const attn::Server::Answer a = server.answer("GET", "/", {{"lesson", "mha"}, {"seed", "5"}, {"text", ""}});
  CHECK(a.status == 200);
  const attn_test::Run page = command_line("mha", {"--seed", "5"}, "html");
  const attn::LiveBar bar = attn::live_bar(attn::command_line_front_end(), "mha", {{"seed", "5"}}, "", false);
  CHECK(a.body == attn::live_page(page.out, bar));
  const attn::Server::Answer refused = server.answer("GET", "/", {{"lesson", "simple"}, {"seed", "5"}});
  CHECK(refused.status == 400);
  const attn_test::Run cli = command_line("simple", {"--seed", "5"}, "html");
  CHECK(refused.body == attn::live_page("", attn::live_bar(attn::command_line_front_end(), "simple", {{"seed", "5"}}, cli.err.substr(0, cli.err.size() - 1), false)));
  // A flag has no value, and is not an empty box: /?lesson=mha&qkv-bias is attn mha --qkv-bias.
  const attn::Server::Answer flag = server.answer("GET", "/", {{"lesson", "mha"}, {"qkv-bias", ""}});
  CHECK(flag.status == 200);
  CHECK(flag.body == attn::live_page(command_line("mha", {"--qkv-bias"}, "html").out,
                                     attn::live_bar(attn::command_line_front_end(), "mha", {{"qkv-bias", ""}}, "", false)));
  const attn::Server::Answer unknown = server.answer("GET", "/", {{"lesson", "<nope>"}});
  CHECK(unknown.status == 404);
  CHECK(unknown.body.find("&lt;nope&gt;") != std::string::npos);
  CHECK(unknown.body.find("<nope>") == std::string::npos);
}

// attn serve --model DIR refuses --d-out, --heads and --kv-groups (the layer's real weights set them): its live
// page offers no box it would refuse. Each is disabled for every lesson and the tour, with no placeholder and a
// title that says why; and a request that gives one anyway is refused in the command line's words.
TEST_CASE("serve --model: the live page's boxes that do not apply with --model are disabled, for every lesson, saying why",
          "[serve]") {
  attn::Server& with_model = server_for(ATTN_TESTS_DIR "/golden/models/tiny-f32");
  attn::Server& without = server_for("");
  std::vector<std::string> choices;
  for (const attn::Lesson& l : attn::lessons()) choices.push_back(l.info.name);
  choices.push_back("tour");
  const std::regex input("<input id=\"live-([a-z-]+)\"[^>]*>");
  for (const std::string& lesson : choices) {
    INFO("/?lesson=" << lesson);
    const attn::Server::Answer a = with_model.answer("GET", "/", {{"lesson", lesson}});
    // (A lesson that refuses --model, gqa, is a refused page: the bar and the refusal.)
    CHECK(a.status == (command_line(lesson, {}, "html", ATTN_TESTS_DIR "/golden/models/tiny-f32").status == 0 ? 200 : 400));
    std::map<std::string, std::string> boxes;  // key: its <input> tag
    for (auto it = std::sregex_iterator(a.body.begin(), a.body.end(), input); it != std::sregex_iterator(); ++it)
      boxes[(*it)[1]] = it->str();
    for (const char* key : {"d-out", "heads", "kv-groups"}) {
      INFO("box " << key);
      REQUIRE(boxes.count(key) == 1);
      const std::string& tag = boxes[key];
      CHECK(tag.find(" disabled>") != std::string::npos);
      CHECK(tag.find(" placeholder=") == std::string::npos);
      CHECK(tag.find(" data-takers=\"{}\"") != std::string::npos);
      CHECK(tag.find(" data-refused-with=\"--model\"") != std::string::npos);
      CHECK(tag.find(std::string(" title=\"--") + key + " does not apply with --model, which this server was started with\"") !=
            std::string::npos);
    }
    // What the model's server does take stays: the text, the layer, the seed where the lesson has one.
    REQUIRE(boxes.count("layer") == 1);
    CHECK(boxes["layer"].find(" data-refused-with") == std::string::npos);
    const attn::Lesson* l = attn::find_lesson(lesson);
    if (l != nullptr && !l->modes.front().uses_inputs) {  // chapter 4's take no text: the box is off for them
      CHECK(boxes["text"].find(" disabled") != std::string::npos);
      continue;
    }
    CHECK(boxes["text"].find(" disabled") == std::string::npos);
    CHECK(boxes["text"].find(" data-refused-with") == std::string::npos);
  }
  // Without a model, mha's boxes are enabled, with mha's defaults; and there is no layer or head box.
  const attn::Server::Answer mha = without.answer("GET", "/", {{"lesson", "mha"}});
  REQUIRE(mha.status == 200);
  std::smatch m;
  REQUIRE(std::regex_search(mha.body, m, std::regex("<input id=\"live-heads\"[^>]*>")));
  CHECK(m.str().find(" disabled") == std::string::npos);
  CHECK(m.str().find(" placeholder=\"2\"") != std::string::npos);
  CHECK(m.str().find(" data-refused-with") == std::string::npos);
  CHECK(mha.body.find("id=\"live-layer\"") == std::string::npos);
  CHECK(mha.body.find("id=\"live-head\"") == std::string::npos);
  // Given anyway, in an address, the box's value is refused as the command line refuses it.
  const attn::Server::Answer refused = with_model.answer("GET", "/api/mha", {{"heads", "4"}});
  CHECK(refused.status == 400);
  CHECK(json::parse(refused.body)["error"].get<std::string>().rfind("attn: --heads does not apply with --model", 0) == 0);
}
