// HttpServer: a small HTTP/1.1 server for `tokenline serve` (Boost.Beast, kept out of this header).
// Listens on host:port (port 0: any free port), accepts on its own thread and serves each connection on
// a thread of its own: one request per connection (Connection: close), the handler's reply, then close.
// The handler runs on connection threads and may block (a completion waits for the engine loop).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tokenline {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // "/v1/completions"
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  // Throws InputError (naming --host/--port) when the address cannot be bound.
  HttpServer(const std::string& host, int32_t port, HttpHandler handler);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int32_t port() const;  // the bound port
  // Stops accepting and waits for open connections to finish. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenline
