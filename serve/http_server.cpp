#include "serve/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
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
#include <thread>
#include <utility>

#include "common/input_error.h"
#include "serve/http_request_reader.h"

namespace tokenline {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

constexpr int kPollTickMs = 200;  // the poller's longest sleep: idle timeouts are this late at most
constexpr int64_t kHeaderLimitBytes = 64 << 10;  // request line + headers; Beast's default is 8 KiB
constexpr size_t kReadChunkBytes = 64 << 10;

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

struct Conn {
  int fd = -1;
  std::string buffer;  // bytes read past the last request (pipelining)
  SteadyTime idle_since;
};

enum class ReadResult { kOk, kClosed, kTimeout, kTooLarge, kBad };

// Reads one request into reader (bytes beyond it stay in conn.buffer).
ReadResult read_request(Conn& conn, HttpRequestReader& reader, SteadyTime deadline) {
  char chunk[kReadChunkBytes];
  bool any = !conn.buffer.empty();
  while (true) {
    switch (reader.feed(conn.buffer)) {
      case HttpReadStatus::kNeedMore:
        break;
      case HttpReadStatus::kOk:
        return ReadResult::kOk;
      case HttpReadStatus::kTooLarge:
        return ReadResult::kTooLarge;
      case HttpReadStatus::kBad:
        return ReadResult::kBad;
    }
    const ssize_t n = ::recv(conn.fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      conn.buffer.append(chunk, static_cast<size_t>(n));
      any = true;
    } else if (n == 0) {
      return any ? ReadResult::kBad : ReadResult::kClosed;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_fd(conn.fd, POLLIN, deadline)) return any ? ReadResult::kTimeout : ReadResult::kClosed;
    } else {
      return ReadResult::kClosed;
    }
  }
}

class FdExchange final : public HttpExchange {
 public:
  FdExchange(int fd, double write_timeout_s, bool keep_alive)
      : fd_(fd), write_timeout_s_(write_timeout_s), keep_alive_(keep_alive) {}

  bool peer_closed() override {
    pollfd p{fd_, static_cast<int16_t>(POLLIN | POLLRDHUP), 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
    char c = 0;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
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
  bool ok_ = true;
};

}  // namespace

struct HttpServer::Impl {
  HttpServerConfig config;
  HttpHandler handler;
  int listen_fd = -1;
  int wake_fd = -1;
  int32_t bound_port = 0;
  std::string bound_address;
  std::thread poller;
  std::vector<std::thread> workers;
  mutable std::mutex mutex;
  std::condition_variable work_ready;
  std::deque<std::unique_ptr<Conn>> ready;      // connections with a request to read
  std::vector<std::unique_ptr<Conn>> returned;  // keep-alive connections handed back to the poller
  std::atomic<bool> accepting{true};
  bool workers_stop = false;
  bool poller_stop = false;
  bool stopped = false;
  int64_t open = 0;
  int64_t busy = 0;

  void wake() const {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }
  void close_conn(std::unique_ptr<Conn> conn) {
    ::close(conn->fd);
    const std::lock_guard<std::mutex> lock(mutex);
    --open;
  }
  void bind_listener();
  void accept_all(std::vector<std::unique_ptr<Conn>>& idle);
  void poll_loop();
  void worker_loop();
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

void HttpServer::Impl::accept_all(std::vector<std::unique_ptr<Conn>>& idle) {
  while (true) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left (or a transient error: the next poll retries)
    auto conn = std::make_unique<Conn>();
    conn->fd = fd;
    conn->idle_since = std::chrono::steady_clock::now();
    {
      const std::lock_guard<std::mutex> lock(mutex);
      ++open;
    }
    idle.push_back(std::move(conn));
  }
}

// Accepts, watches idle connections, hands those with a request to the workers, closes idle ones.
void HttpServer::Impl::poll_loop() {
  std::vector<std::unique_ptr<Conn>> idle, still;
  std::vector<pollfd> fds;
  const auto idle_limit = std::chrono::duration<double>(config.idle_timeout_s);
  while (true) {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      for (auto& c : returned) idle.push_back(std::move(c));
      returned.clear();
      if (poller_stop) break;
    }
    if (!accepting && listen_fd >= 0) {
      ::close(listen_fd);
      listen_fd = -1;
    }
    if (!accepting) {
      for (auto& c : idle) close_conn(std::move(c));
      idle.clear();
    }
    fds.assign({pollfd{wake_fd, POLLIN, 0}, pollfd{listen_fd, POLLIN, 0}});
    for (const auto& c : idle) fds.push_back(pollfd{c->fd, static_cast<int16_t>(POLLIN | POLLRDHUP), 0});
    if (::poll(fds.data(), fds.size(), kPollTickMs) < 0 && errno != EINTR) continue;
    uint64_t drained = 0;
    if ((fds[0].revents & POLLIN) != 0) [[maybe_unused]]
      ssize_t n = ::read(wake_fd, &drained, sizeof drained);
    const auto now = std::chrono::steady_clock::now();
    still.clear();
    for (size_t i = 0; i < idle.size(); ++i) {
      const int16_t ev = fds[i + 2].revents;
      if ((ev & POLLIN) != 0) {
        const std::lock_guard<std::mutex> lock(mutex);
        ready.push_back(std::move(idle[i]));
        work_ready.notify_one();
      } else if ((ev & (POLLHUP | POLLERR | POLLRDHUP)) != 0 || now - idle[i]->idle_since > idle_limit) {
        close_conn(std::move(idle[i]));
      } else {
        still.push_back(std::move(idle[i]));
      }
    }
    idle.swap(still);
    if (listen_fd >= 0 && (fds[1].revents & POLLIN) != 0) accept_all(idle);
  }
  for (auto& c : idle) close_conn(std::move(c));
}

void HttpServer::Impl::worker_loop() {
  while (true) {
    std::unique_ptr<Conn> conn;
    {
      std::unique_lock<std::mutex> lock(mutex);
      work_ready.wait(lock, [this] { return workers_stop || !ready.empty(); });
      if (ready.empty()) return;
      conn = std::move(ready.front());
      ready.pop_front();
      ++busy;
    }
    const bool keep = serve(*conn);
    {
      const std::lock_guard<std::mutex> lock(mutex);
      --busy;
    }
    if (!keep || !accepting) {
      close_conn(std::move(conn));
    } else if (!conn->buffer.empty()) {  // a pipelined request is already here
      const std::lock_guard<std::mutex> lock(mutex);
      ready.push_back(std::move(conn));
      work_ready.notify_one();
    } else {
      conn->idle_since = std::chrono::steady_clock::now();
      const std::lock_guard<std::mutex> lock(mutex);
      returned.push_back(std::move(conn));
      wake();
    }
  }
}

// One request and its reply; true when the connection may carry another.
bool HttpServer::Impl::serve(Conn& conn) {
  HttpRequestReader reader(kHeaderLimitBytes, config.body_limit_bytes);
  const ReadResult read = read_request(conn, reader, deadline_after(config.read_timeout_s));
  const SteadyTime write_deadline = deadline_after(config.write_timeout_s);
  switch (read) {
    case ReadResult::kOk:
      break;
    case ReadResult::kClosed:
      return false;
    case ReadResult::kTimeout:
      write_all(conn.fd, head_text({408, "text/plain", "", {}}, false, "Content-Length: 0"), write_deadline);
      return false;
    case ReadResult::kTooLarge:
      write_all(conn.fd, head_text({413, "text/plain", "", {}}, false, "Content-Length: 0"), write_deadline);
      return false;
    case ReadResult::kBad:
      write_all(conn.fd, head_text({400, "text/plain", "", {}}, false, "Content-Length: 0"), write_deadline);
      return false;
  }
  const HttpRequest& req = reader.request();
  const bool keep_alive = reader.keep_alive() && accepting;
  FdExchange exchange(conn.fd, config.write_timeout_s, keep_alive);
  const HttpResponse reply = handler(req, exchange);
  if (exchange.streamed())
    return exchange.ok() && write_all(conn.fd, "0\r\n\r\n", write_deadline) && keep_alive;
  const std::string text =
      head_text(reply, keep_alive, "Content-Length: " + std::to_string(reply.body.size())) + reply.body;
  return write_all(conn.fd, text, write_deadline) && keep_alive;
}

HttpServer::HttpServer(const HttpServerConfig& config, HttpHandler handler)
    : impl_(std::make_unique<Impl>()) {
  if (config.workers < 1) throw InputError("--http-workers", "1 or more", std::to_string(config.workers));
  impl_->config = config;
  impl_->handler = std::move(handler);
  impl_->bind_listener();
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  for (int32_t i = 0; i < config.workers; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
  impl_->poller = std::thread([this] { impl_->poll_loop(); });
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
  impl_->work_ready.notify_all();
  for (std::thread& t : impl_->workers) t.join();
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->poller_stop = true;
  }
  impl_->wake();
  impl_->poller.join();
  for (auto& c : impl_->ready) ::close(c->fd);
  impl_->ready.clear();
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
}

}  // namespace tokenline
