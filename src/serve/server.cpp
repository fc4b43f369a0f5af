#include "serve/server.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <istream>
#include <new>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include "core/cancel.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "inputs/model.hpp"
#include "kernels/blas.hpp"
#include "render/json.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

// The limits of a request, checked before any work (docs/serve.md). cpp-httplib itself answers 414 past its
// request-line limit (8,192 bytes), and refuses a single header line past 8,192 bytes.
constexpr std::size_t kMaxHeaderBytes = 16 << 10;  // all the headers together: 431 past it
constexpr std::size_t kMaxHeaderLine = 8 << 10;    // one header line: 431 past it
constexpr std::size_t kMaxHeaders = 64;            // 431 past it
constexpr std::size_t kMaxBodyBytes = 1 << 10;     // a GET has no body: 413 for one (read up to this, to answer)
// The whole head must arrive within this, however steadily its bytes come (each within the read timeout): a
// client that sends a byte a second would otherwise hold one of the server's threads for hours. 408 past it.
constexpr auto kMaxHeadTime = std::chrono::seconds(3);
// Once the server stops, an answer has this long to go out: a computation's 503 (a few hundred bytes) goes
// at once, while a large document to a client that reads slowly is cut, so that it does not hold up the stop.
constexpr auto kStopGrace = std::chrono::milliseconds(500);
constexpr int kRetryAfterSeconds = 1;
const char* const kStopping = "attn: the server is stopping";
const char* const kLineTooLong = "attn: the request line is longer than the server takes";
const char* const kHeadersTooLarge = "attn: the request's headers are larger than the server takes";

// Every method but GET and HEAD, refused the same wherever it is met.
const char* const kAllowed = "GET, HEAD";
bool allowed(const std::string& method) { return method == "GET" || method == "HEAD"; }
std::string not_allowed(const std::string& method) {
  return "attn: " + visible(method) + " is not served here: every address is read with GET";
}

std::string error_json(const std::string& message) {
  return json_text(nlohmann::json{{"error", message}}) + "\n";
}

// The command line's one line for the failure being handled, without its newline, and the status it means.
std::pair<int, std::string> failure(const std::string& command) {
  std::ostringstream line;
  int status = 500;
  try {
    throw;
  } catch (const Cancelled& e) {
    line << "attn: " << e.what();
    status = 503;
  } catch (const std::bad_alloc&) {
    report_failure(line, command);
    status = 503;
  } catch (const UsageError&) {
    report_failure(line, command);
    status = 400;
  } catch (const InputError&) {
    report_failure(line, command);
    status = 400;
  } catch (...) {
    report_failure(line, command);
  }
  std::string text = line.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return {status, text};
}

// Whether `host` names this machine's loopback: localhost, ::1, or an IPv4 address in 127.0.0.0/8 written
// as one (not a name that merely begins "127.", as 127.0.0.1.evil.example does: DNS rebinding's own trick).
bool loopback(const std::string& host) {
  in_addr a{};
  return host == "localhost" || host == "::1" ||
         (::inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127);
}

// The host of a Host header, without its port ("[::1]:8000" -> "::1").
std::string host_of(const std::string& header) {
  if (!header.empty() && header.front() == '[') {
    const auto end = header.find(']');
    return end == std::string::npos ? header : header.substr(1, end - 1);
  }
  return header.substr(0, header.find(':'));
}

// Counts the computations running; a request that finds them all taken is answered 503 at once.
class Slots {
 public:
  explicit Slots(std::size_t n) : free_(n) {}
  bool take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_ == 0) return false;
    --free_;
    return true;
  }
  void give() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++free_;
  }

 private:
  std::mutex mutex_;
  std::size_t free_;
};

// When the request this thread handles began to arrive (for --log's line, and the head's time limit).
thread_local std::chrono::steady_clock::time_point request_start;
// Set while a request is handled when the connection must end after its answer: a refused body was not
// read, and its bytes must not be taken for the connection's next request.
thread_local bool close_after_answer = false;
// The address of the client this thread serves, for --log's line of a request refused before cpp-httplib
// has read its headers (it fills the request's remote_addr only after them).
thread_local std::string connection_peer;

// Waits until `sock` has `events` (POLLIN, POLLOUT), for at most `ms` milliseconds; false on a timeout or
// an error. With `stop`, a wait ends early when the server stops.
bool wait_for(int sock, short events, long ms, const std::atomic<socket_t>* stop = nullptr) {
  for (long waited = 0;;) {
    const long slice = stop != nullptr ? std::min<long>(50, ms - waited) : ms - waited;
    pollfd p{sock, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<long>(slice, 0)));
    if (r > 0) return (p.revents & (events | POLLHUP)) != 0 && (p.revents & (POLLERR | POLLNVAL)) == 0;
    if (r < 0 && errno != EINTR) return false;
    if (r == 0) waited += slice;
    if (waited >= ms || (stop != nullptr && *stop == INVALID_SOCKET)) return false;
  }
}

std::string address_of(const sockaddr_storage& a, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    port = ntohs(in6.sin6_port);
  }
  return text;
}

// What is wrong with a request's head: 400 for what is not HTTP, 405 for a request of a method other than
// GET and HEAD; status 0 when nothing is. Found while this thread reads the head (HeadCappedStream), and
// answered by the error handler (Server::bind), so that --log has its line as for every other answer.
struct HeadFault {
  int status = 0;
  std::string message;
};
thread_local HeadFault head_fault;

// A request's head is checked here, line by line as it arrives, as strictly as RFC 9112 writes it, because
// cpp-httplib 0.11 reads it leniently where leniency is a risk: a header's name may end in a space
// ("Transfer-Encoding : chunked" is a header named "Transfer-Encoding "), a line without its colon or its CR
// is dropped unseen, and a Content-Length given twice is kept twice and the first one read, so that
// "Content-Length: 0" then "Content-Length: 50" leaves a 50-byte body to be read as the connection's next
// request (request smuggling, RFC 9112 6.3). It also answers a method outside its own list 400, as it does
// a line that is not HTTP at all. The one strict parser Debian 12 packages (libhttp-parser-dev, Node's
// http_parser) has been archived upstream since 2022, and knows a fixed list of methods too.
const std::string kNotHttp = "attn: the request is not HTTP the server reads";

HeadFault not_http(const std::string& why) { return {400, kNotHttp + ": " + why}; }

// RFC 9110 5.6.2: a token (a method, a header's name) is one or more of these.
bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
  });
}

bool same_name(std::string_view a, std::string_view b) {  // header names are case-insensitive
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The request line without its CR LF: METHOD SP TARGET SP HTTP/1.x (RFC 9112 3), single spaces, no control
// character. A well-formed line with another method than GET or HEAD is 405 (methods are case-sensitive:
// `get` is one of them).
HeadFault check_request_line(std::string_view line) {
  const auto first = line.find(' ');
  const auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos) return not_http("its first line is not METHOD TARGET HTTP/1.1");
  const std::string_view method = line.substr(0, first), target = line.substr(first + 1, second - first - 1),
                         version = line.substr(second + 1);
  const bool target_ok = !target.empty() && std::none_of(target.begin(), target.end(), [](char c) {
    return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
  });
  if (!is_token(method) || !target_ok || (version != "HTTP/1.1" && version != "HTTP/1.0"))
    return not_http("its first line is not METHOD TARGET HTTP/1.1");
  if (!allowed(std::string(method))) return {405, not_allowed(std::string(method))};
  return {};
}

// The headers that say how long the request is and whom it is for, counted over the head (RFC 9112 6.3: a
// length given twice, or two ways, is an error; RFC 9112 3.2: so is a second Host).
struct HeadFields {
  int content_length = 0, transfer_encoding = 0, host = 0;
  bool length_is_number = true;
};

// A header line without its CR LF: NAME ":" OWS VALUE OWS (RFC 9112 5), the name a token (no space before
// the colon), the value without control characters but tabs, not folded onto a line that begins with a space.
HeadFault check_header_line(std::string_view line, HeadFields& fields) {
  if (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
    return not_http("a header line begins with a space (a folded line)");
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
    return not_http("a header line is not NAME: VALUE, with no space in NAME");
  const std::string_view name = line.substr(0, colon);
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (std::any_of(value.begin(), value.end(), [](char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f; }))
    return not_http("a header's value holds a control character");
  if (same_name(name, "Content-Length")) {
    ++fields.content_length;
    fields.length_is_number = fields.length_is_number && !value.empty() && value.size() <= 18 &&
                              std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  } else if (same_name(name, "Transfer-Encoding")) {
    ++fields.transfer_encoding;
  } else if (same_name(name, "Host")) {
    ++fields.host;
  }
  return {};
}

// At the blank line that ends the head.
HeadFault check_fields(const HeadFields& fields) {
  if (fields.content_length > 1) return not_http("Content-Length is given more than once");
  if (fields.transfer_encoding > 1) return not_http("Transfer-Encoding is given more than once");
  if (fields.content_length > 0 && fields.transfer_encoding > 0) return not_http("Content-Length and Transfer-Encoding are both given");
  if (!fields.length_is_number) return not_http("Content-Length is not a number");
  if (fields.host > 1) return not_http("Host is given more than once");
  return {};
}

// A connection's socket as cpp-httplib reads and writes it, with one thing more: the head of each request
// (its request line and headers) is capped at kMaxHeaderBytes, answered 431 past it. cpp-httplib 0.11 caps
// each header line (8,192 bytes) but not their number, so a client could otherwise make it keep any number
// of headers in memory; nothing in its interface counts them as they arrive, hence this stream.
//
// Each line of the head is checked as it arrives (check_request_line and the rest, above); a fault fails the
// read after the request line, or the read of the line that shows it, so that cpp-httplib answers 400 at
// once, which the error handler turns into the fault's answer, and the connection ends.
//
// It also ends its waits when the server stops (`listener`, the listening socket, is closed then): a head
// still arriving is answered 503 at once, and an answer being written gets kStopGrace. cpp-httplib 0.11 checks
// the stop only between requests, so a client trickling its head, or reading a large answer slowly, would
// hold up the stop for as long as it pleased.
class HeadCappedStream final : public httplib::Stream {
 public:
  HeadCappedStream(int sock, time_t read_s, time_t write_s, const std::atomic<socket_t>& listener)
      : sock_(sock), read_ms_(read_s * 1000), write_ms_(write_s * 1000), listener_(listener) {}
  void start_request() {
    in_head_ = true;
    head_bytes_ = lines_ = 0;
    line_.clear();
    fields_ = {};
    head_fault = {};
    request_start = std::chrono::steady_clock::now();
    close_after_answer = false;
  }

  bool is_readable() const override { return wait_for(sock_, POLLIN, read_ms_); }
  bool is_writable() const override { return !over_ && wait_for(sock_, POLLOUT, write_ms_); }
  ssize_t read(char* ptr, size_t size) override {
    if (over_ || (in_head_ && head_fault.status != 0)) return -1;
    if (in_head_ && stopping()) return refuse_head("503 Service Unavailable", kStopping);
    if (in_head_ && std::chrono::steady_clock::now() - request_start > kMaxHeadTime)
      return refuse_head("408 Request Timeout", "attn: the request took longer than " +
                                                    std::to_string(kMaxHeadTime.count()) + " s to arrive");
    if (!wait_for(sock_, POLLIN, read_ms_, &listener_))
      return in_head_ && stopping() ? refuse_head("503 Service Unavailable", kStopping) : -1;
    ssize_t n;
    do n = ::recv(sock_, ptr, size, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0 || !in_head_) return n;
    // Up to the blank line that ends the head, line by line (a line perhaps split across reads).
    bool long_line = false;  // a header line past cpp-httplib's own limit, which it would answer 400
    for (ssize_t i = 0; i < n && in_head_ && head_fault.status == 0; ++i) {
      ++head_bytes_;
      line_ += ptr[i];
      if (ptr[i] == '\n') end_line();
      else long_line = long_line || (lines_ > 0 && line_.size() > kMaxHeaderLine);  // the request line is httplib's: 414
    }
    if (in_head_ && head_fault.status == 0 && (head_bytes_ > kMaxHeaderBytes || long_line))
      return lines_ == 0 ? refuse_head("414 URI Too Long", kLineTooLong)  // all of it the request line
                         : refuse_head("431 Request Header Fields Too Large", kHeadersTooLarge);
    // A fault in the request line lets the line through, for cpp-httplib to read its method and address (for
    // --log), and fails the next read; one in a header line or at the blank line fails this one.
    return head_fault.status != 0 && lines_ > 1 ? -1 : n;
  }
  // Sends what the socket takes now (cpp-httplib writes the rest in further calls), so that no call blocks
  // for longer than its wait: a blocking send of a 150 MB document would return only once the client had
  // read nearly all of it, stop or no stop.
  ssize_t write(const char* ptr, size_t size) override {
    if (over_) return -1;
    const bool stopped = stopping();
    const long limit = stopped ? grace_left() : write_ms_;
    if (limit <= 0) return -1;
    if (!wait_for(sock_, POLLOUT, limit, stopped ? nullptr : &listener_))
      return !stopped && stopping() ? 0 : -1;  // (0: the stop came during the wait; the next call has the grace)
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : n;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = address_of(a, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = address_of(a, port);
  }
  socket_t socket() const override { return sock_; }
  // Whether this stream answered a head itself (408, 414, 431, 503) and read no further.
  bool refused() const { return over_; }

 private:
  // The line in line_ (with its line end) is whole: checks it, and the head at its blank line.
  void end_line() {
    const bool blank = line_ == "\r\n";
    if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
      head_fault = not_http("a line of its head does not end with CR LF");
    } else {
      const std::string_view text(line_.data(), line_.size() - 2);
      head_fault = lines_ == 0 ? check_request_line(text) : blank ? check_fields(fields_) : check_header_line(text, fields_);
    }
    if (lines_ > 0 && blank && head_fault.status == 0) in_head_ = false;
    ++lines_;
    line_.clear();
  }

  bool stopping() const { return listener_ == INVALID_SOCKET; }
  // What is left of kStopGrace, counted from this connection's first write after the stop, in milliseconds.
  long grace_left() {
    const auto now = std::chrono::steady_clock::now();
    if (!stop_seen_) {
      stop_seen_ = true;
      stop_time_ = now;
    }
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(kStopGrace - (now - stop_time_)).count());
  }

  // Answers `status` with `message` and ends the connection: the rest of it is neither read nor answered.
  ssize_t refuse_head(const std::string& status, const std::string& message) {
    const std::string body = error_json(message);
    const std::string answer =
        "HTTP/1.1 " + status +
        "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer"
        "\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n" +
        (status.rfind("503", 0) == 0 ? "Retry-After: " + std::to_string(kRetryAfterSeconds) + "\r\n" : "") +
        "Connection: close\r\n\r\n" + body;
    for (std::size_t sent = 0; sent < answer.size();) {
      const ssize_t n = write(answer.data() + sent, answer.size() - sent);
      if (n < 0) break;
      sent += static_cast<std::size_t>(n);
    }
    over_ = true;
    return -1;
  }

  int sock_;
  long read_ms_, write_ms_;
  const std::atomic<socket_t>& listener_;
  bool stop_seen_ = false;
  std::chrono::steady_clock::time_point stop_time_;
  bool in_head_ = true, over_ = false;
  std::size_t head_bytes_ = 0, lines_ = 0;
  std::string line_;  // the line arriving (at most the head's limit, kMaxHeaderBytes)
  HeadFields fields_;
};

// cpp-httplib's server with its connections read through HeadCappedStream: the keep-alive loop of
// cpp-httplib's own, which a subclass may replace, around its request processing, which it keeps.
class CappedHttpServer final : public httplib::Server {
 public:
  // Stops accepting: closes the listening socket. cpp-httplib's stop() does so only once listen() runs, so
  // a stop that came first (a signal right after the serving line) would be lost and listen() would serve
  // on; this one works before, during and after listen(), and twice.
  void close_listener() {
    const socket_t sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock != INVALID_SOCKET) {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
    }
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    HeadCappedStream stream(sock, read_timeout_sec_, write_timeout_sec_, svr_sock_);
    int peer_port = 0;
    connection_peer.clear();
    close_after_answer = false;  // the thread's last connection may have set it
    stream.get_remote_ip_and_port(connection_peer, peer_port);
    bool ok = false;
    for (std::size_t left = keep_alive_max_count_;
         left > 0 && svr_sock_ != INVALID_SOCKET && wait_for(sock, POLLIN, keep_alive_timeout_sec_ * 1000, &svr_sock_);) {
      --left;
      stream.start_request();
      bool closed = false;
      ok = process_request(stream, left == 0, closed, [](httplib::Request&) {});
      if (!ok || closed || close_after_answer) break;
    }
    if (close_after_answer || stream.refused()) linger(sock);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }

  // Before a connection whose request was refused unread is closed. Closing a socket that holds unread bytes
  // makes the kernel send a reset, which can reach a client still writing its request before it has read the
  // answer: its write fails, and it never sees the answer. So the answer goes first, with a FIN after it,
  // and what the client still sends is read and dropped for a moment (Apache's lingering close).
  static void linger(int sock) {
    constexpr auto kLinger = std::chrono::milliseconds(250);
    constexpr std::size_t kLingerBytes = 64 << 10;
    ::shutdown(sock, SHUT_WR);
    const auto until = std::chrono::steady_clock::now() + kLinger;
    char buf[4096];
    for (std::size_t drained = 0; drained < kLingerBytes;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
      pollfd p{sock, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return;
      const ssize_t n = ::recv(sock, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return;  // the client has closed its side (0), or the connection failed
      drained += static_cast<std::size_t>(n);
    }
  }
};

}  // namespace

struct Server::Impl {
  ServeSettings settings;
  FrontEnd front;
  std::shared_ptr<const PreloadedModel> model;
  CappedHttpServer http;
  std::atomic<bool> stopping{false};
  Slots slots;
  std::mutex log_mutex;
  std::ostream* log = nullptr;

  std::set<std::string> bar_keys;  // the live page's boxes (text and numbers: no flag among them)
  std::vector<std::string> served;  // what /api/, /page/ and the live page compute: the lessons, then "tour"

  Impl(ServeSettings s, FrontEnd f) : settings(std::move(s)), front(std::move(f)), slots(settings.jobs) {
    const LiveBar bar = front.bar(!settings.model.empty());
    for (const LiveControl& c : bar.controls) bar_keys.insert(c.key);
    served = bar.choices;
  }
  bool serves(const std::string& command) const { return std::find(served.begin(), served.end(), command) != served.end(); }
  const std::string& first_lesson() const { return served.front(); }

  // The document for `command` and `params` in `format` ("json" or "html"): the command line's Request, with
  // the server's model and budget, run as attn runs it.
  std::string compute(const std::string& command, const Params& params, const std::string& format, std::size_t budget) {
    // A request that gives no language speaks the server's, as if it had said so.
    Params given = params;
    const bool has_lang = std::any_of(params.begin(), params.end(), [](const auto& p) { return p.first == "lang"; });
    if (!has_lang && !settings.language.empty()) given.emplace_back("lang", settings.language);
    Request request = web_request(front, command, given, format, settings.model);
    request.input.preloaded = model;
    request.output.max_memory = budget;
    TextStyle style;  // no colour: nothing here is a terminal
    const auto renderer = find_format(format)->make(RenderOptions{style});
    std::istringstream no_input;
    std::ostringstream no_progress;
    const Document doc = run(request, *renderer, RunStreams{no_input, no_progress, false});
    return join(renderer->render(doc));
  }
};

Server::Server(ServeSettings settings, FrontEnd front) : impl_(std::make_unique<Impl>(std::move(settings), std::move(front))) {
  const ServeSettings& s = impl_->settings;
  std::size_t held = kBaseBytes;
  if (!s.model.empty()) {
    impl_->model = preload_model(s.model, [&](std::size_t need) {
      if (need > s.max_memory)
        throw UsageError("attn serve --model " + visible(s.model) + " needs " + std::to_string(need >> 20) +
                         " MiB, more than --max-memory allows");
    });
    held = saturating_sum(held, impl_->model->held_bytes);
  }
  // A computation's plan counts a process's base (kBaseBytes) as every run's does: a share below it, and a
  // mebibyte, would refuse every request.
  const std::size_t least = kBaseBytes + (std::size_t{1} << 20);
  if (held >= s.max_memory || (s.max_memory - held) / s.jobs < least)
    throw UsageError("attn serve: --max-memory leaves no room for " + std::to_string(s.jobs) + " computations of " +
                     std::to_string(least >> 20) + " MiB each beside the server's own " + std::to_string(held >> 20) +
                     " MiB; raise it, or lower --jobs");
  // Each computation's plan is held to its share, so that --jobs of them together stay within the budget.
  job_budget_ = (s.max_memory - held) / s.jobs;
}

Server::~Server() = default;

Server::Answer Server::answer(const std::string& method, const std::string& path, const Params& params) {
  Answer a = route(method, path, params);
  // Here, once, rather than where each 503 is made: the live page's 503 is its computation's, whose headers
  // the page does not carry over, and a cancelled computation's 503 came without one.
  if (a.status == 503) a.headers.push_back({"Retry-After", std::to_string(kRetryAfterSeconds)});
  return a;
}

Server::Answer Server::route(const std::string& method, const std::string& path, const Params& params) {
  Impl& d = *impl_;
  Answer a;
  const auto refuse = [&](int status, const std::string& message) {
    a.status = status;
    a.content_type = "application/json";
    a.body = error_json(message);
  };
  if (!allowed(method)) {
    refuse(405, not_allowed(method));
    a.headers.push_back({"Allow", kAllowed});
    return a;
  }
  std::string kind, command;
  if (path == "/") {
    kind = "live";
  } else {
    for (const char* prefix : {"/api/", "/page/"})
      if (path.rfind(prefix, 0) == 0) {
        kind = prefix;
        command = path.substr(kind.size());
      }
    if (kind.empty() || !d.serves(command)) {
      refuse(404, "attn: nothing is served at " + visible(path) + "; try /api/LESSON, /page/LESSON or / (attn list names the lessons)");
      return a;
    }
  }
  // A live page names its lesson in the address's `lesson`; the options are the rest.
  Params options;
  std::string lesson = command;
  for (const auto& [key, value] : params) {
    if (key.find('\0') != std::string::npos || value.find('\0') != std::string::npos || !valid_utf8(key) ||
        !valid_utf8(value)) {
      refuse(400, "attn: a request's options must be UTF-8 text without NUL characters");
      return a;
    }
    if (kind == "live" && key == "lesson") {
      lesson = value;
      continue;
    }
    if (kind == "live" && value.empty() && d.bar_keys.count(key) != 0) continue;  // an empty box of the bar, as a
                                                                                 // form sends it: the default
    options.emplace_back(key, value);
  }
  if (kind == "live") {
    if (lesson.empty()) lesson = d.first_lesson();
    std::string page, error;
    int status = 200;
    if (!d.serves(lesson)) {
      status = 404;
      error = "attn: no lesson '" + visible(lesson) + "' (attn list names them)";
      lesson = d.first_lesson();
    } else {
      const auto r = run_one(lesson, options, "html");
      status = r.status;
      if (r.status == 200) page = r.body;
      else error = nlohmann::json::parse(r.body).value("error", "");
    }
    try {
      a.body = live_page(page, live_bar(d.front, lesson, options, error, !d.settings.model.empty(), d.settings.language));
    } catch (...) {
      const auto [code, message] = failure(lesson);
      refuse(code == 400 ? 500 : code, message);
      return a;
    }
    a.status = status;
    a.content_type = "text/html; charset=utf-8";
    a.headers.push_back({"Content-Security-Policy", kLivePagePolicy});
    return a;
  }
  return run_one(command, options, kind == "/api/" ? "json" : "html");
}

Server::Answer Server::run_one(const std::string& command, const Params& options, const std::string& format) {
  Impl& d = *impl_;
  Answer a;
  if (!d.slots.take()) {
    a.status = 503;
    a.content_type = "application/json";
    a.body = error_json("attn: the server is computing " + std::to_string(d.settings.jobs) +
                        " requests already (attn serve --jobs); try again in a moment");
    return a;  // (answer() adds Retry-After)
  }
  struct Give {
    Slots& slots;
    ~Give() { slots.give(); }
  } give{d.slots};
  CancelPoint point;
  point.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(d.settings.time_limit);
  point.stop = &d.stopping;
  point.limit_seconds = static_cast<double>(d.settings.time_limit);
  const CancelScope scope(point);
  try {
    a.body = d.compute(command, options, format, job_budget_);
    a.content_type = format == "json" ? "application/json" : "text/html; charset=utf-8";
    if (format == "html") a.headers.push_back({"Content-Security-Policy", kPagePolicy});
  } catch (...) {
    const auto [status, message] = failure(command);
    a.status = status;
    a.content_type = "application/json";
    a.body = error_json(message);
  }
  return a;
}

int Server::bind() {
  Impl& d = *impl_;
  httplib::Server& http = d.http;
  // Idle and slow connections end soon: a page on this machine sends its request at once.
  http.set_read_timeout(1, 0);
  http.set_write_timeout(5, 0);
  http.set_keep_alive_timeout(1);
  http.set_keep_alive_max_count(100);
  http.set_payload_max_length(kMaxBodyBytes);
  // cpp-httplib writes an answer's head and body in two sends: with Nagle's algorithm on, the body waits for
  // the client's delayed ACK, 40 ms on Linux, on every request of a keep-alive connection.
  http.set_tcp_nodelay(true);
  // Threads for the connections: the computations' slots, and as many again for requests that are refused
  // or wait on the network.
  const std::size_t threads = d.settings.jobs + 8;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    Impl& d = *impl_;
    // The client's headers: without the four cpp-httplib adds (REMOTE_ADDR, REMOTE_PORT, LOCAL_ADDR, LOCAL_PORT).
    std::size_t bytes = 0, count = 0;
    for (const auto& [name, value] : req.headers) {
      if (name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" || name == "LOCAL_PORT") continue;
      bytes += name.size() + value.size() + 4;
      ++count;
    }
    // A body is never read (cpp-httplib reads it after this handler): a request that has one is refused, and
    // its connection ends after the answer, lest the body's bytes be read as the connection's next request.
    const bool body = !req.body.empty() || req.has_header("Transfer-Encoding") ||
                      (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    const auto refuse = [&](int status, const std::string& message) {
      res.status = status;
      res.set_content(error_json(message), "application/json");
      if (body) {
        close_after_answer = true;
        res.set_header("Connection", "close");
      }
      return httplib::Server::HandlerResponse::Handled;
    };
    if (count > kMaxHeaders || bytes > kMaxHeaderBytes) return refuse(431, kHeadersTooLarge);
    if (body) return refuse(413, "attn: a request to this server has no body");
    if (loopback(d.settings.host) && !loopback(host_of(req.get_header_value("Host"))))
      return refuse(403, "attn: this server answers to localhost, ::1 and 127.0.0.0/8 only, not to the Host '" +
                             visible(req.get_header_value("Host")) + "'");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  const auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    Params params(req.params.begin(), req.params.end());
    Answer a = answer(req.method, req.path, params);
    res.status = a.status;
    for (const auto& [name, value] : a.headers) res.set_header(name, value);
    // What set_content does, but moving the body rather than copying it: a document may be 150 MB.
    res.body = std::move(a.body);
    res.set_header("Content-Type", a.content_type);
  };
  http.Get(".*", handle);  // (and HEAD; every other method is refused as its head is read: HeadCappedStream)
  // cpp-httplib's own refusals (414 for a request line past its limit, 400 for one it cannot parse, or a head
  // HeadCappedStream found a fault in) come without a body: give them the JSON error every other refusal has.
  // The request was not understood, so neither is where the next one would begin: the connection ends.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // ours, already JSON
    close_after_answer = true;
    res.set_header("Connection", "close");
    if (res.status == 400 && head_fault.status != 0) {
      res.status = head_fault.status;
      if (res.status == 405) res.set_header("Allow", kAllowed);
      res.set_content(error_json(head_fault.message), "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string message = res.status == 414   ? kLineTooLong
                                : res.status == 400 ? kNotHttp
                                                    : "attn: the request was refused (HTTP " + std::to_string(res.status) + ")";
    res.set_content(error_json(message), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                            {"Cache-Control", "no-store"},
                            {"Referrer-Policy", "no-referrer"},
                            {"X-Frame-Options", "DENY"}});
  if (d.log != nullptr) {
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - request_start).count();
      char took[32];
      std::snprintf(took, sizeof took, "%.1f ms", ms);
      std::lock_guard<std::mutex> lock(impl_->log_mutex);
      // (a request refused before it was parsed, past the request line's limit, has no method or address)
      const auto shown = [](const std::string& field) { return field.empty() ? std::string("-") : visible(field); };
      *impl_->log << "attn: " << shown(req.remote_addr.empty() ? connection_peer : req.remote_addr) << " " << shown(req.method) << " " << shown(req.target) << " "
                  << res.status << " " << took << "\n" << std::flush;
    });
  }
  // The listening socket's options: SO_REUSEADDR alone, so that a server started again at once may take its
  // port back from the connections the last one left in TIME_WAIT. cpp-httplib's default sets SO_REUSEPORT,
  // with which a second server on the same port binds too, and the kernel shares the connections between them.
  http.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  errno = 0;  // what bind() said, read below: cpp-httplib answers only whether it bound
  const int port = d.settings.port == 0 ? http.bind_to_any_port(d.settings.host)
                                        : (http.bind_to_port(d.settings.host, static_cast<int>(d.settings.port))
                                               ? static_cast<int>(d.settings.port)
                                               : -1);
  if (port < 0) {
    const int why = errno;
    throw SystemError("attn serve cannot listen on " + visible(d.settings.host) + " port " +
                      std::to_string(d.settings.port) + ": " +
                      (why == EADDRINUSE      ? "the port is taken (another server listens on it; --port 0 picks a free one)"
                       : why == EADDRNOTAVAIL ? "the address is not this machine's"
                       : why == EACCES        ? "a port below 1024 is for the system's servers"
                                              : "the address is not this machine's, or the port is taken"));
  }
  return port;
}

void Server::log_to(std::ostream& err) { impl_->log = &err; }

void Server::listen() { impl_->http.listen_after_bind(); }

void Server::stop() {
  impl_->stopping = true;
  impl_->http.close_listener();
}

namespace {

// SIGINT and SIGTERM, as a byte on a pipe that the signal watcher reads (the handler may do no more: only
// async-signal-safe calls). A handler rather than a blocked mask and sigwait: OpenBLAS starts its threads
// when the program loads, before serve() could block the signals for them, and a process-directed signal
// that lands on one of those threads would end the process with the signal's default action (status 143).
int stop_pipe[2] = {-1, -1};

extern "C" void serve_on_stop_signal(int) {
  const int saved = errno;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(stop_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

std::string compute_line(std::size_t jobs, unsigned per_job, const CpuCount& cpus) {
  const bool named = cpus.source == "affinity mask" || cpus.source == "cgroup quota";
  return "attn: " + std::to_string(jobs) + (jobs == 1 ? " computation" : " computations") + " at once, each on " +
         std::to_string(per_job) + (per_job == 1 ? " thread" : " threads") + " of the " +
         std::to_string(cpus.threads) + " " + (named ? "the " : "") + cpus.source + " gives";
}

unsigned threads_per_job(unsigned threads, std::size_t jobs) {
  return static_cast<unsigned>(std::max<std::size_t>(1, threads / std::max<std::size_t>(1, jobs)));
}

int serve(const ServeSettings& settings, const FrontEnd& front, std::ostream& err) {
  // Every computation gets its share of the CPUs, so that --jobs of them at once never start more threads
  // than there are CPUs (each would otherwise start one per CPU, OpenBLAS's and ours).
  const unsigned per_job = threads_per_job(settings.cpus.threads, settings.jobs);
  set_compute_threads(per_job);
  Server server(settings, front);
  if (settings.log) server.log_to(err);
  const int port = server.bind();
  // Taken before the serving line, so that a signal right after it stops the server too.
  if (::pipe2(stop_pipe, O_CLOEXEC) != 0) throw SystemError("attn serve cannot make a pipe for its signals");
  ::fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK);  // a storm of signals fills the pipe, never blocks the handler
  struct sigaction on_stop {};
  on_stop.sa_handler = serve_on_stop_signal;
  sigemptyset(&on_stop.sa_mask);
  on_stop.sa_flags = SA_RESTART;
  struct Handlers {
    struct sigaction old_int {}, old_term {};
    ~Handlers() {
      ::sigaction(SIGINT, &old_int, nullptr);
      ::sigaction(SIGTERM, &old_term, nullptr);
      ::close(stop_pipe[0]);
      ::close(stop_pipe[1]);
      stop_pipe[0] = stop_pipe[1] = -1;
    }
  } handlers;
  ::sigaction(SIGINT, &on_stop, &handlers.old_int);
  ::sigaction(SIGTERM, &on_stop, &handlers.old_term);
  const std::string shown_host = settings.host.find(':') != std::string::npos ? "[" + settings.host + "]" : settings.host;
  if (!loopback(settings.host))
    err << "attn: warning: listening on " << visible(settings.host)
        << ", not only this machine: anyone who can reach that address can use this server\n";
  // The serving line first, always: scripts read the address from the first line.
  err << "attn: serving on http://" << visible(shown_host) << ":" << port << "/ (Ctrl-C stops)\n";
  if (const auto warning = openblas_core_warning()) err << "attn: " << *warning << "\n";
  err << compute_line(settings.jobs, per_job, settings.cpus) << "\n" << std::flush;

  std::thread watcher([&] {
    char byte = 0;
    while (::read(stop_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    server.stop();  // (a no-op when listen() has ended by itself)
  });
  server.listen();
  serve_on_stop_signal(0);  // wakes the watcher if no signal came
  watcher.join();
  return kExitOk;
}

}  // namespace attn
