#pragma once
// attn serve (docs/serve.md): the lessons over HTTP on this machine, with cpp-httplib. The API is the command
// line: GET /api/LESSON?seed=5&d-out=6 is what `attn LESSON --seed 5 --d-out 6 --format json` writes, read by
// the command line's own parser (the caller's ReadRequest, src/cli) and run by the application layer
// (run/run.hpp), so the two cannot drift apart; GET /page/LESSON?... is the html page, and GET / the live page
// (render/live_page.hpp). Every request is checked before any work: its size, its Host, its method, its
// options (none may name a file), its memory plan against the server's budget; at most --jobs compute at
// once (503 beyond), each within --time-limit.
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "io/cpus.hpp"
#include "render/live_page.hpp"
#include "run/run.hpp"
#include "serve/web.hpp"

namespace attn {

struct ServeSettings {
  std::string host = "127.0.0.1";
  std::size_t port = 8000;  // 0: a free one
  std::string model;        // a GPT-2 directory read once at start; empty: none
  std::size_t max_memory = kDefaultMemoryBudget;  // the whole server's: the model, then --jobs computations
  std::size_t jobs = 2;
  std::size_t time_limit = 30;  // seconds per computation
  bool log = false;
  CpuCount cpus = cpus_of_process();  // the threads it computes on (--threads below the CPUs given), shared among the jobs
  // The language of a request that gives no lang= (chosen_language: --lang, else the environment's; "":
  // English): the server adds it to such a request, and its live page's bar speaks it.
  std::string language;
};

// The threads each of `jobs` computations at once gets of `threads`: an equal share, at least one.
unsigned threads_per_job(unsigned threads, std::size_t jobs);
// attn serve's line about them: "attn: 2 computations at once, each on 1 thread of the 2 the affinity mask
// gives".
std::string compute_line(std::size_t jobs, unsigned per_job, const CpuCount& cpus);


class Server {
 public:
  // Reads the model, if any (its errors as the command line gives them), and checks the budget leaves room
  // for the computations.
  Server(ServeSettings settings, FrontEnd front);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the address (a SystemError when it cannot) and returns the port.
  int bind();
  // Serves until stop(); then the work in flight is cancelled at its next step, and it returns once every
  // connection has ended.
  void listen();
  // From any thread (a signal's watcher): stops accepting, and cancels the computations in flight.
  void stop();

  // What one request answers, without a socket (the tests' and the benchmark's way in, as listen() does it).
  // Every 503 has Retry-After, whichever refusal it is (busy, past the time limit, stopping).
  struct Answer {
    int status = 200;
    std::string content_type, body;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  Answer answer(const std::string& method, const std::string& path, const Params& params);

  std::size_t job_budget() const { return job_budget_; }
  // --log: one line per request on `err`, escaped (set before bind()).
  void log_to(std::ostream& err);

 private:
  Answer route(const std::string& method, const std::string& path, const Params& params);
  Answer run_one(const std::string& command, const Params& options, const std::string& format);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t job_budget_ = 0;
};

// attn serve: the server on `settings`, its line on `err` ("attn: serving on http://127.0.0.1:8000/ (Ctrl-C
// stops)"), until SIGINT or SIGTERM; returns 0 then. Failures throw, as every subcommand's do.
int serve(const ServeSettings& settings, const FrontEnd& front, std::ostream& err);

}  // namespace attn
