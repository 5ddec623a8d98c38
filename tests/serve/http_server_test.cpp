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
#include <thread>

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

}  // namespace tokenline
