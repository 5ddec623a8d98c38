#include "serve/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "common/input_error.h"
#include "serve/http_request_reader.h"

namespace tokenline {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

constexpr int kPollTickMs = 100;  // the poller's longest sleep: deadlines are this late at most
constexpr int64_t kHeaderLimitBytes = 64 << 10;  // request line + headers; Beast's default is 8 KiB
constexpr size_t kReadChunkBytes = 64 << 10;
constexpr size_t kReadsPerWake = 16;  // chunks read from one connection per poll: no client hogs the poller
// A refused connection is read and discarded for this long (or this many bytes) after its status, so
// that the client reads the status before the close resets the connection (nginx's lingering_close).
constexpr double kLingerS = 2;
constexpr int64_t kLingerBytes = int64_t{64} << 20;
constexpr int64_t kFdReserve = 64;  // open files kept for everything else (logs, outputs, the listener)
constexpr const char* kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

SteadyTime deadline_after(double seconds) {
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(seconds));
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool wait_fd(int fd, int16_t events, SteadyTime deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Writes all of data to a non-blocking socket before the deadline.
bool write_all(int fd, std::string_view data, SteadyTime deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLOUT, deadline)) continue;
    return false;
  }
  return true;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";  // an int, not a closed set: any other code gets a generic phrase
  }
}

std::string head_text(const HttpResponse& r, bool keep_alive, const std::string& length_or_chunked) {
  std::string h = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) + "\r\n";
  h += "Server: tokenline\r\nContent-Type: " + r.content_type + "\r\n" + length_or_chunked + "\r\n";
  h += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const auto& [name, value] : r.headers) h += name + ": " + value + "\r\n";
  return h + "\r\n";
}

// A whole reply that closes the connection, with a one-line plain-text body saying why.
std::string closing_reply(int status, const std::string& why) {
  const std::string body = why + "\n";
  return head_text({status, "text/plain", "", {}}, false, "Content-Length: " + std::to_string(body.size())) +
         body;
}

enum class ConnState {
  kIdle,       // no byte of a next request yet: closed after the idle timeout
  kReading,    // a request started: whole within the read timeout or 408
  kLingering,  // refused: reading and discarding until the client closes or kLingerS passed
};

struct Conn {
  int fd = -1;
  ConnState state = ConnState::kIdle;
  std::string buffer;                         // bytes read, not yet parsed (pipelining)
  std::unique_ptr<HttpRequestReader> reader;  // the request being read (kReading)
  SteadyTime since;                           // when the state began
  SteadyTime deadline;                        // when the state ends (close, or 408)
  bool continue_sent = false;                 // "100 Continue" sent for this request
  bool peer_eof = false;                      // the client half-closed: answer, then close
  int64_t lingered_bytes = 0;
  bool light = false;  // the whole request goes to the reserved workers too
};

// The connection a worker serves: the handler's view of its socket.
class FdExchange final : public HttpExchange {
 public:
  // interim: the client speaks HTTP/1.1 (RFC 9110 section 15.2: no 1xx to an HTTP/1.0 client).
  FdExchange(int fd, double write_timeout_s, bool keep_alive, bool interim)
      : fd_(fd), write_timeout_s_(write_timeout_s), keep_alive_(keep_alive), probed_(!interim) {}

  // Gone: the connection was reset, or closed both ways. A client that only closed its sending side may
  // still be reading (a half-close): the first time the end of its input is seen, before any reply byte,
  // an interim "100 Continue" goes out (RFC 9110 section 15.2: clients parse any 1xx before the final
  // reply); a client that closed entirely answers it with a reset, seen on the next call. An HTTP/1.0
  // client, which may not get a 1xx, is answered as a half-closed one.
  bool peer_closed() override {
    pollfd p{fd_, static_cast<int16_t>(POLLIN | POLLRDHUP), 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if ((p.revents & (POLLHUP | POLLERR)) != 0) return true;
    char c = 0;
    const bool eof = (p.revents & POLLRDHUP) != 0 || ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
    if (eof && !probed_ && !streamed_) {
      probed_ = true;
      return !write_all(fd_, kContinue, deadline_after(write_timeout_s_));
    }
    return false;
  }
  bool stream_begin(const HttpResponse& head) override {
    streamed_ = true;
    ok_ = write_all(fd_, head_text(head, keep_alive_, "Transfer-Encoding: chunked"),
                    deadline_after(write_timeout_s_));
    return ok_;
  }
  bool stream_write(std::string_view data) override {
    if (!ok_ || data.empty()) return ok_;
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string chunk = size;
    chunk.append(data);
    chunk += "\r\n";
    ok_ = write_all(fd_, chunk, deadline_after(write_timeout_s_));
    return ok_;
  }
  bool streamed() const { return streamed_; }
  bool ok() const { return ok_; }

 private:
  int fd_;
  double write_timeout_s_;
  bool keep_alive_;
  bool streamed_ = false;
  bool probed_ = false;
  bool ok_ = true;
};

enum class AcceptResult { kAccepted, kNone, kFull };  // kFull: a connection waits that cannot be taken now

int64_t open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return int64_t{1} << 20;
  return static_cast<int64_t>(r.rlim_cur);
}

}  // namespace

struct HttpServer::Impl {
  HttpServerConfig config;
  HttpHandler handler;
  int64_t max_connections = 0;
  int listen_fd = -1;
  int wake_fd = -1;
  int32_t bound_port = 0;
  std::string bound_address;
  std::thread poller;
  std::vector<std::thread> workers;
  mutable std::mutex mutex;
  std::condition_variable any_ready;              // unreserved workers wait here: work of either kind
  std::condition_variable light_ready_cv;         // reserved workers wait here: light work
  std::deque<std::unique_ptr<Conn>> light_ready;  // whole requests any worker may serve
  std::deque<std::unique_ptr<Conn>> heavy_ready;  // whole requests for the unreserved workers
  int64_t queued_bytes = 0;                       // the bodies waiting in those queues
  std::vector<std::unique_ptr<Conn>> returned;    // keep-alive connections handed back to the poller
  std::atomic<bool> accepting{true};
  bool workers_stop = false;
  bool poller_stop = false;
  bool stopped = false;
  int64_t open = 0;  // accepted, not closed
  int64_t busy = 0;  // workers serving

  // Poller-only state.
  std::vector<std::unique_ptr<Conn>> conns;  // idle, reading and lingering connections

  void wake() const {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }
  void close_conn(std::unique_ptr<Conn> conn) {
    ::close(conn->fd);
    const std::lock_guard<std::mutex> lock(mutex);
    --open;
  }
  bool is_light(const HttpRequest& req) const {
    return config.light ? config.light(req) : req.method != "POST";
  }
  void bind_listener();
  void start_threads();
  AcceptResult accept_one();
  bool evict_oldest();
  void set_idle(Conn& conn) const;
  void refuse(Conn& conn, int status, const std::string& why) const;
  bool advance(std::unique_ptr<Conn>& conn);
  bool on_readable(std::unique_ptr<Conn>& conn);
  bool on_deadline(Conn& conn, SteadyTime now) const;
  int64_t held_bytes() const;
  void poll_loop();
  void worker_loop(bool reserved);
  bool serve(Conn& conn);
};

void HttpServer::Impl::bind_listener() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(config.port);
  if (::getaddrinfo(config.host.c_str(), port_text.c_str(), &hints, &found) != 0 || found == nullptr)
    throw InputError("--host", "an address or a name this machine resolves", "'" + config.host + "'");
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listen_fd = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd < 0)
    throw InputError("--port", "a port this process can listen on at " + config.host,
                     port_text + " (" + why + ")");
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a6->sin6_addr, text, sizeof text);
    bound_port = ntohs(a6->sin6_port);
  } else {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a4->sin_addr, text, sizeof text);
    bound_port = ntohs(a4->sin_port);
  }
  bound_address = text;
}

// The workers (the reserved ones first) and the poller. A thread that cannot be started (a thread or
// address-space limit) stops and joins those that did, then throws saying how far it got.
void HttpServer::Impl::start_threads() {
  int32_t started = 0;
  try {
    for (; started < config.workers; ++started) {
      const bool reserved = started < config.reserved_workers;
      workers.emplace_back([this, reserved] { worker_loop(reserved); });
    }
    poller = std::thread([this] { poll_loop(); });
  } catch (const std::system_error& e) {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      workers_stop = true;
    }
    any_ready.notify_all();
    light_ready_cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
    ::close(listen_fd);
    ::close(wake_fd);
    throw std::runtime_error("could not start the HTTP threads: " + std::to_string(started) + " of " +
                             std::to_string(config.workers) + " workers started" +
                             (started == config.workers ? ", not the poller" : "") + " (" + e.what() +
                             "); lower --http-workers or raise the thread limit");
  }
}

void HttpServer::Impl::set_idle(Conn& conn) const {
  conn.state = ConnState::kIdle;
  conn.reader.reset();
  conn.continue_sent = false;
  conn.since = std::chrono::steady_clock::now();
  conn.deadline = deadline_after(config.idle_timeout_s);
}

// Answers `status` and lingers: the client's remaining bytes are read and dropped until it closes.
void HttpServer::Impl::refuse(Conn& conn, int status, const std::string& why) const {
  const std::string reply = closing_reply(status, why);
  [[maybe_unused]] const ssize_t n = ::send(conn.fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  ::shutdown(conn.fd, SHUT_WR);
  conn.state = ConnState::kLingering;
  conn.reader.reset();
  conn.buffer.clear();
  conn.since = std::chrono::steady_clock::now();
  conn.deadline = deadline_after(kLingerS);
}

// Parses what conn has buffered. False when the connection left the poller (a whole request went to a
// worker): `conn` is then empty.
bool HttpServer::Impl::advance(std::unique_ptr<Conn>& conn) {
  if (conn->state == ConnState::kLingering || conn->buffer.empty()) return true;
  if (conn->state == ConnState::kIdle) {
    conn->state = ConnState::kReading;
    conn->reader = std::make_unique<HttpRequestReader>(kHeaderLimitBytes, config.body_limit_bytes);
    conn->since = std::chrono::steady_clock::now();
    conn->deadline = deadline_after(config.read_timeout_s);
  }
  switch (conn->reader->feed(conn->buffer)) {
    case HttpReadStatus::kNeedMore:
      if (!conn->continue_sent && conn->reader->awaits_continue()) {
        conn->continue_sent = true;
        [[maybe_unused]] const ssize_t n = ::send(conn->fd, kContinue, std::strlen(kContinue), MSG_NOSIGNAL);
      }
      // The budget is summed only for a request past one read's size: small ones cannot exhaust it.
      if (conn->reader->consumed_bytes() > static_cast<int64_t>(kReadChunkBytes) &&
          held_bytes() > config.read_budget_bytes)
        refuse(*conn, 503, "the server is reading too many request bodies at once: retry later");
      return true;
    case HttpReadStatus::kOk:
      break;
    case HttpReadStatus::kTooLarge:
      refuse(*conn, 413,
             "the request is too large: headers of at most " + std::to_string(kHeaderLimitBytes) +
                 " bytes and a body of at most " + std::to_string(config.body_limit_bytes) + " bytes");
      return true;
    case HttpReadStatus::kBad:
      refuse(*conn, 400, "malformed HTTP/1.1 request");
      return true;
  }
  conn->light = is_light(conn->reader->request());
  const std::lock_guard<std::mutex> lock(mutex);
  queued_bytes += static_cast<int64_t>(conn->reader->request().body.size());
  // One waiter of each kind: whichever takes it first serves it, the other finds nothing and waits again.
  if (conn->light) light_ready_cv.notify_one();
  any_ready.notify_one();
  (conn->light ? light_ready : heavy_ready).push_back(std::move(conn));
  return false;
}

// Reads what the socket has. False when the connection left the poller (handed on or closed).
bool HttpServer::Impl::on_readable(std::unique_ptr<Conn>& conn) {
  char chunk[kReadChunkBytes];
  bool ended = false;  // end of input (the client closed its side) or an error
  for (size_t reads = 0; reads < kReadsPerWake && !ended; ++reads) {
    const ssize_t n = ::recv(conn->fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      if (conn->state == ConnState::kLingering) {
        conn->lingered_bytes += n;
        ended = conn->lingered_bytes > kLingerBytes;
        continue;
      }
      conn->buffer.append(chunk, static_cast<size_t>(n));
      if (!advance(conn)) return false;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      ended = true;
    }
  }
  if (!ended) return true;
  // The client closed its side inside a request: it cannot complete it, but may still read a reply.
  if (conn->state == ConnState::kReading) {
    const std::string reply = closing_reply(400, "the connection ended inside a request");
    [[maybe_unused]] const ssize_t n = ::send(conn->fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  }
  close_conn(std::move(conn));
  return false;
}

// Past its deadline: an idle or lingering connection is closed, a request still being read gets 408.
// False when the connection is to be closed.
bool HttpServer::Impl::on_deadline(Conn& conn, SteadyTime now) const {
  if (now < conn.deadline) return true;
  if (conn.state != ConnState::kReading) return false;
  refuse(conn, 408,
         "the request did not arrive whole within " + std::to_string(config.read_timeout_s) + " s");
  return true;
}

// Bytes of requests the server holds and no worker has taken: being read, or whole and queued.
int64_t HttpServer::Impl::held_bytes() const {
  int64_t held = 0;
  for (const auto& c : conns)
    if (c && c->state == ConnState::kReading)
      held += static_cast<int64_t>(c->buffer.size()) + c->reader->consumed_bytes();
  const std::lock_guard<std::mutex> lock(mutex);
  return held + queued_bytes;
}

// Closes the connection that has gone longest without a whole request, to make room for a new one.
bool HttpServer::Impl::evict_oldest() {
  auto oldest = conns.end();
  for (auto it = conns.begin(); it != conns.end(); ++it)
    if (*it && (oldest == conns.end() || (*it)->since < (*oldest)->since)) oldest = it;
  if (oldest == conns.end()) return false;
  close_conn(std::move(*oldest));
  conns.erase(oldest);
  return true;
}

// Accepts one connection.
AcceptResult HttpServer::Impl::accept_one() {
  int64_t open_now = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    open_now = open;
  }
  if (open_now >= max_connections && !evict_oldest()) return AcceptResult::kFull;
  int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE) && evict_oldest())
    fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return AcceptResult::kNone;
  if (fd < 0) return AcceptResult::kFull;  // out of files (or a transient error): retried after a tick
  auto conn = std::make_unique<Conn>();
  conn->fd = fd;
  set_idle(*conn);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    ++open;
  }
  conns.push_back(std::move(conn));
  return AcceptResult::kAccepted;
}

// Accepts, reads requests until whole and hands them to the workers, answers refusals, enforces deadlines.
void HttpServer::Impl::poll_loop() {
  std::vector<pollfd> fds;
  bool listen_ok = true;  // false after an accept that could not be taken: the listener waits a tick
  while (true) {
    std::vector<std::unique_ptr<Conn>> back;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      back.swap(returned);
      if (poller_stop) break;
    }
    for (auto& c : back) {
      set_idle(*c);
      if (advance(c)) conns.push_back(std::move(c));  // a pipelined request may already be whole
    }
    if (!accepting) {
      if (listen_fd >= 0) ::close(listen_fd);
      listen_fd = -1;
      for (auto& c : conns)
        if (c && c->state != ConnState::kLingering) close_conn(std::move(c));
      std::erase(conns, nullptr);
    }
    fds.assign({pollfd{wake_fd, POLLIN, 0}, pollfd{listen_ok ? listen_fd : -1, POLLIN, 0}});
    for (const auto& c : conns) fds.push_back(pollfd{c->fd, static_cast<int16_t>(POLLIN | POLLRDHUP), 0});
    listen_ok = true;
    if (::poll(fds.data(), fds.size(), kPollTickMs) < 0 && errno != EINTR) continue;
    uint64_t drained = 0;
    if ((fds[0].revents & POLLIN) != 0) [[maybe_unused]]
      ssize_t n = ::read(wake_fd, &drained, sizeof drained);
    const auto now = std::chrono::steady_clock::now();
    const size_t polled = conns.size();
    for (size_t i = 0; i < polled; ++i) {
      std::unique_ptr<Conn>& c = conns[i];
      if (!c) continue;  // evicted
      if ((fds[i + 2].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0 && !on_readable(c)) continue;
      if (!on_deadline(*c, now)) close_conn(std::move(c));
    }
    std::erase(conns, nullptr);
    if (listen_fd >= 0 && (fds[1].revents & POLLIN) != 0) {
      AcceptResult r = AcceptResult::kAccepted;
      while (r == AcceptResult::kAccepted) r = accept_one();
      listen_ok = r == AcceptResult::kNone;
    }
  }
  for (auto& c : conns)
    if (c) close_conn(std::move(c));
  conns.clear();
}

void HttpServer::Impl::worker_loop(bool reserved) {
  while (true) {
    std::unique_ptr<Conn> conn;
    {
      std::unique_lock<std::mutex> lock(mutex);
      (reserved ? light_ready_cv : any_ready).wait(lock, [&] {
        return workers_stop || !light_ready.empty() || (!reserved && !heavy_ready.empty());
      });
      std::deque<std::unique_ptr<Conn>>& queue = !light_ready.empty() ? light_ready : heavy_ready;
      if (queue.empty() || (reserved && &queue == &heavy_ready)) return;
      conn = std::move(queue.front());
      queue.pop_front();
      queued_bytes -= static_cast<int64_t>(conn->reader->request().body.size());
      ++busy;
    }
    const bool keep = serve(*conn);
    {
      const std::lock_guard<std::mutex> lock(mutex);
      --busy;
    }
    if (!keep || !accepting || conn->peer_eof) {
      close_conn(std::move(conn));
    } else {
      const std::lock_guard<std::mutex> lock(mutex);
      returned.push_back(std::move(conn));
      wake();
    }
  }
}

// The handler on one whole request and its reply; true when the connection may carry another. An
// exception from the handler is a 500 (or, once a stream has begun, the end of the connection).
bool HttpServer::Impl::serve(Conn& conn) {
  const HttpRequest& req = conn.reader->request();
  const bool keep_alive = conn.reader->keep_alive() && accepting;
  FdExchange exchange(conn.fd, config.write_timeout_s, keep_alive, req.version >= 11);
  HttpResponse reply;
  try {
    reply = handler(req, exchange);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenline serve: %s %s: internal error: %s\n", req.method.c_str(),
                 req.target.c_str(), e.what());
    if (exchange.streamed()) return false;
    reply = HttpResponse{500,
                         "application/json",
                         R"({"error":{"message":"internal server error","type":"server_error","param":null,)"
                         R"("code":"internal_error"}})"
                         "\n",
                         {}};
  }
  const SteadyTime write_deadline = deadline_after(config.write_timeout_s);
  if (exchange.streamed())
    return exchange.ok() && write_all(conn.fd, "0\r\n\r\n", write_deadline) && keep_alive;
  const std::string text =
      head_text(reply, keep_alive, "Content-Length: " + std::to_string(reply.body.size())) + reply.body;
  return write_all(conn.fd, text, write_deadline) && keep_alive;
}

HttpServer::HttpServer(const HttpServerConfig& config, HttpHandler handler)
    : impl_(std::make_unique<Impl>()) {
  if (config.workers < 1 || config.workers > kMaxHttpWorkers)
    throw InputError("--http-workers", "1.." + std::to_string(kMaxHttpWorkers),
                     std::to_string(config.workers));
  if (config.reserved_workers < 0 || config.reserved_workers >= config.workers)
    throw InputError("--http-workers",
                     "more than the " + std::to_string(config.reserved_workers) + " reserved",
                     std::to_string(config.workers));
  impl_->config = config;
  impl_->handler = std::move(handler);
  const int64_t fd_room = std::max<int64_t>(open_file_limit() - kFdReserve, 16);
  impl_->max_connections = config.max_connections > 0 ? std::min(config.max_connections, fd_room) : fd_room;
  impl_->bind_listener();
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  impl_->start_threads();
}

HttpServer::~HttpServer() {
  stop();
}

int32_t HttpServer::port() const {
  return impl_->bound_port;
}

std::string HttpServer::address() const {
  return impl_->bound_address;
}

HttpServerStats HttpServer::stats() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return HttpServerStats{.open_connections = impl_->open,
                         .busy_workers = impl_->busy,
                         .threads = static_cast<int32_t>(impl_->workers.size()) + 1};
}

void HttpServer::stop_accepting() {
  impl_->accepting = false;
  impl_->wake();
}

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  stop_accepting();
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->workers_stop = true;
  }
  impl_->any_ready.notify_all();
  impl_->light_ready_cv.notify_all();
  for (std::thread& t : impl_->workers) t.join();
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->poller_stop = true;
  }
  impl_->wake();
  impl_->poller.join();
  for (auto* queue : {&impl_->light_ready, &impl_->heavy_ready})
    for (auto& c : *queue) ::close(c->fd);
  impl_->light_ready.clear();
  impl_->heavy_ready.clear();
  for (auto& c : impl_->returned) ::close(c->fd);
  impl_->returned.clear();
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
}

}  // namespace tokenline
