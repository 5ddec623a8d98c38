// HttpServer over real loopback sockets: keep-alive carries several requests, a streamed body arrives as
// chunks, a vanished client is seen by the handler, idle connections close after the idle timeout and
// never hold stop(), the worker pool is bounded, names resolve.
#include "serve/http_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/input_error.h"

namespace tokenline {
namespace {

// A connection to the server's bound address (IPv4 or IPv6: "localhost" may resolve to either).
int connect_to(const HttpServer& server) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  REQUIRE(getaddrinfo(server.address().c_str(), std::to_string(server.port()).c_str(), &hints, &found) == 0);
  const int fd = socket(found->ai_family, SOCK_STREAM, 0);
  const int rc = connect(fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  REQUIRE(rc == 0);
  return fd;
}

void send_all(int fd, const std::string& s) {
  REQUIRE(write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
}

// Reads until `needle` has arrived (or the peer closed); returns everything read.
std::string read_until(int fd, const std::string& needle) {
  std::string got;
  char buf[4096];
  while (got.find(needle) == std::string::npos) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

std::string get(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

}  // namespace

TEST_CASE("keep-alive, chunked streaming and a vanished client", "[runtime][http]") {
  std::atomic<int> noticed_gone{0};
  HttpServerConfig config{.host = "localhost", .port = 0, .workers = 2, .idle_timeout_s = 0.5};
  HttpServer server(config, [&](const HttpRequest& req, HttpExchange& x) {
    if (req.target == "/stream") {
      x.stream_begin(HttpResponse{200, "text/event-stream", "", {}});
      x.stream_write("data: one\n\n");
      x.stream_write("data: two\n\n");
      return HttpResponse{};
    }
    if (req.target == "/wait") {
      for (int i = 0; i < 200 && !x.peer_closed(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (x.peer_closed()) ++noticed_gone;
      return HttpResponse{200, "text/plain", "late", {}};
    }
    return HttpResponse{200, "text/plain", req.method + " " + req.target + " " + req.header("x-tag"), {}};
  });
  REQUIRE(server.port() > 0);
  CHECK(server.stats().threads == 3);  // the poller and two workers, whatever the load

  const int fd = connect_to(server);
  send_all(fd, "GET /a?q=1 HTTP/1.1\r\nHost: x\r\nX-Tag: t1\r\n\r\n");
  const std::string first = read_until(fd, "GET /a t1");
  CHECK(first.find("Connection: keep-alive") != std::string::npos);
  send_all(fd, get("/b"));  // the same connection
  CHECK(read_until(fd, "GET /b").find("GET /b") != std::string::npos);
  send_all(fd, get("/stream"));
  const std::string streamed = read_until(fd, "0\r\n\r\n");
  CHECK(streamed.find("Transfer-Encoding: chunked") != std::string::npos);
  CHECK(streamed.find("b\r\ndata: one\n\n\r\n") != std::string::npos);
  CHECK(streamed.find("data: two") != std::string::npos);
  // Idle past the timeout: the server closes the connection.
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  char c = 0;
  CHECK(read(fd, &c, 1) == 0);
  close(fd);

  const int waiter = connect_to(server);
  send_all(waiter, get("/wait"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  close(waiter);  // gone before the reply
  for (int i = 0; i < 100 && noticed_gone == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(noticed_gone == 1);

  // An idle connection does not hold stop().
  const int idle = connect_to(server);
  const auto start = std::chrono::steady_clock::now();
  server.stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(read(idle, &c, 1) == 0);
  close(idle);
}

TEST_CASE("a request that never completes gets 408 after the read timeout, a taken port is an input error",
          "[runtime][http]") {
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 1, .read_timeout_s = 0.3},
                    [](const HttpRequest&, HttpExchange&) { return HttpResponse{}; });
  const int fd = connect_to(server);
  send_all(fd, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
  CHECK(read_until(fd, "\r\n\r\n").find("408") != std::string::npos);
  close(fd);
  CHECK_THROWS_AS(HttpServer(HttpServerConfig{.host = "127.0.0.1", .port = server.port()},
                             [](const HttpRequest&, HttpExchange&) { return HttpResponse{}; }),
                  InputError);  // the port is taken
}

TEST_CASE("pipelined requests each get a reply, garbage is 400, a body past the limit 413, then close",
          "[runtime][http]") {
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 1, .body_limit_bytes = 16},
                    [](const HttpRequest& req, HttpExchange&) {
                      return HttpResponse{200, "text/plain", req.target + "|" + req.body, {}};
                    });
  const int fd = connect_to(server);
  send_all(fd, get("/one") + "POST /two?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  const std::string replies = read_until(fd, "/two|abc");
  CHECK(replies.find("/one|") != std::string::npos);
  CHECK(replies.find("/two|abc") != std::string::npos);
  close(fd);

  const int bad = connect_to(server);
  send_all(bad, "HELLO\r\n\r\n");
  const std::string bad_reply = read_until(bad, "\r\n\r\n");
  CHECK(bad_reply.find("HTTP/1.1 400") == 0);
  CHECK(bad_reply.find("Connection: close") != std::string::npos);
  close(bad);

  const int large = connect_to(server);
  send_all(large, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n");
  CHECK(read_until(large, "\r\n\r\n").find("HTTP/1.1 413") == 0);
  char c = 0;
  CHECK(read(large, &c, 1) == 0);  // closed after the reply
  close(large);
}

TEST_CASE("a handler that throws is a 500 and the server goes on serving", "[serve][http]") {
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 1},
                    [](const HttpRequest& req, HttpExchange&) -> HttpResponse {
                      if (req.target == "/throw") throw std::runtime_error("boom");
                      if (req.target == "/alloc") throw std::bad_alloc();
                      return HttpResponse{200, "text/plain", "alive", {}};
                    });
  for (const char* target : {"/throw", "/alloc"}) {
    const int fd = connect_to(server);
    send_all(fd, get(target));
    const std::string reply = read_until(fd, "}\n");
    CHECK(reply.rfind("HTTP/1.1 500", 0) == 0);
    CHECK(reply.find("\"internal_error\"") != std::string::npos);
    close(fd);
  }
  const int fd = connect_to(server);
  send_all(fd, get("/ok"));
  CHECK(read_until(fd, "alive").find("alive") != std::string::npos);
  close(fd);
}

TEST_CASE("Expect: 100-continue gets its interim reply before the body is sent", "[serve][http]") {
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 1},
                    [](const HttpRequest& req, HttpExchange&) {
                      return HttpResponse{200, "text/plain", "got " + req.body, {}};
                    });
  const int fd = connect_to(server);
  send_all(fd, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  CHECK(read_until(fd, "\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n");  // before any body byte
  send_all(fd, "hello");
  CHECK(read_until(fd, "got hello").find("HTTP/1.1 200 OK") != std::string::npos);
  close(fd);
}

TEST_CASE("a client that half-closes after its request still gets the whole answer", "[serve][http]") {
  std::atomic<bool> saw_gone{false};
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 1},
                    [&](const HttpRequest&, HttpExchange& x) {
                      // A handler that waits, checking for the client as openai_handler does.
                      for (int i = 0; i < 5; ++i) {
                        if (x.peer_closed()) saw_gone = true;
                        std::this_thread::sleep_for(std::chrono::milliseconds(20));
                      }
                      return HttpResponse{200, "text/plain", "the answer", {}};
                    });
  const int fd = connect_to(server);
  send_all(fd, get("/q"));
  REQUIRE(shutdown(fd, SHUT_WR) == 0);  // done sending, still reading
  const std::string reply = read_until(fd, "the answer");
  CHECK(reply.find("HTTP/1.1 200 OK") != std::string::npos);
  CHECK(reply.find("the answer") != std::string::npos);
  CHECK_FALSE(saw_gone);
  close(fd);
  // HTTP/1.0 may not be sent a 1xx (RFC 9110 section 15.2): answered all the same, without one.
  const int old_client = connect_to(server);
  send_all(old_client, "GET /q HTTP/1.0\r\n\r\n");
  REQUIRE(shutdown(old_client, SHUT_WR) == 0);
  const std::string old_reply = read_until(old_client, "the answer");
  CHECK(old_reply.rfind("HTTP/1.1 200 OK", 0) == 0);
  CHECK(old_reply.find("the answer") != std::string::npos);
  close(old_client);
}

TEST_CASE("a client sending a body past the limit reads the 413 before the connection closes",
          "[serve][http]") {
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 1, .body_limit_bytes = 1024},
                    [](const HttpRequest&, HttpExchange&) { return HttpResponse{}; });
  const int fd = connect_to(server);
  send_all(fd, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n");
  // The client goes on sending its body as a plain client does (curl without Expect): 8 MB.
  const std::string block(64 << 10, 'a');
  for (int i = 0; i < 128; ++i)
    if (send(fd, block.data(), block.size(), MSG_NOSIGNAL) <= 0) break;
  const std::string reply = read_until(fd, "bytes\n");
  CHECK(reply.rfind("HTTP/1.1 413 Payload Too Large", 0) == 0);
  CHECK(reply.find("a body of at most 1024 bytes") != std::string::npos);
  close(fd);
}

TEST_CASE("slow clients hold sockets, not workers: a light request is served while they trickle",
          "[serve][http]") {
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 2, .read_timeout_s = 120},
                    [](const HttpRequest& req, HttpExchange&) {
                      return HttpResponse{200, "text/plain", "served " + req.target, {}};
                    });
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(connect_to(server));
    send_all(slow.back(), "GET /slow HTTP/1.1\r\nHo");  // a header that never ends
  }
  const int fd = connect_to(server);
  send_all(fd, get("/health"));
  CHECK(read_until(fd, "served /health").find("served /health") != std::string::npos);
  CHECK(server.stats().open_connections == 21);
  // Every slow client is the poller's, none a worker's: the worker that wrote the reply is idle again once
  // it has marked itself so (a moment after the client reads the reply), and then none is busy.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server.stats().busy_workers != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(server.stats().busy_workers == 0);
  close(fd);
  for (int s : slow) close(s);
}

TEST_CASE("light requests have reserved workers that completions cannot take", "[serve][http]") {
  std::mutex mutex;
  std::condition_variable cv;
  bool release = false;
  int blocked = 0;
  HttpServer server(HttpServerConfig{.host = "127.0.0.1", .port = 0, .workers = 3, .reserved_workers = 1},
                    [&](const HttpRequest& req, HttpExchange&) {
                      if (req.method == "POST") {
                        std::unique_lock<std::mutex> lock(mutex);
                        ++blocked;
                        cv.notify_all();
                        cv.wait(lock, [&] { return release; });
                      }
                      return HttpResponse{200, "text/plain", "done " + req.target, {}};
                    });
  std::vector<int> posts;
  for (int i = 0; i < 3; ++i) {  // two take the unreserved workers, the third waits for one
    posts.push_back(connect_to(server));
    send_all(posts.back(), "POST /complete HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return blocked == 2; });
  }
  const int fd = connect_to(server);
  send_all(fd, get("/health"));
  CHECK(read_until(fd, "done /health").find("done /health") != std::string::npos);
  CHECK(blocked == 2);  // the reserved worker served /health, not the third POST
  close(fd);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  cv.notify_all();
  for (int p : posts) {
    CHECK(read_until(p, "done /complete").find("done /complete") != std::string::npos);
    close(p);
  }
}

TEST_CASE("worker counts out of range are refused by flag", "[serve][http]") {
  auto handler = [](const HttpRequest&, HttpExchange&) { return HttpResponse{}; };
  CHECK_THROWS_AS(HttpServer(HttpServerConfig{.port = 0, .workers = kMaxHttpWorkers + 1}, handler),
                  InputError);
  CHECK_THROWS_AS(HttpServer(HttpServerConfig{.port = 0, .workers = 0}, handler), InputError);
  CHECK_THROWS_AS(HttpServer(HttpServerConfig{.port = 0, .workers = 2, .reserved_workers = 2}, handler),
                  InputError);
}

}  // namespace tokenline
