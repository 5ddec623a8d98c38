// HttpServer: the HTTP/1.1 server of `tokenline serve` (requests parsed by HttpRequestReader over
// Boost.Beast, kept out of this header; sockets are plain POSIX). One poller thread accepts connections and
// watches idle keep-alive connections; a bounded pool of worker threads serves a connection while it has a
// request: read (with a read timeout), the handler, the reply (whole, or streamed as chunks), then back to
// the poller (keep- alive) or closed. Idle connections are closed after the idle timeout and at once when the
// server stops accepting, so they never hold a shutdown. The handler runs on worker threads and may block.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tokenline {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // "/v1/completions" (the query string, if any, removed)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Retry-After, CORS, ...)
};

// The connection one request arrived on, for a handler that streams or waits long.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  // True once the client has closed its side or reset (checked without blocking).
  virtual bool peer_closed() = 0;
  // Sends head's status and headers with a chunked body to follow (head.body is ignored); false: the
  // client is gone. After it the handler's returned response is ignored and the server ends the body.
  virtual bool stream_begin(const HttpResponse& head) = 0;
  // One chunk of the streamed body; false: the client is gone (or too slow: the write timeout passed).
  virtual bool stream_write(std::string_view data) = 0;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&, HttpExchange&)>;

struct HttpServerConfig {
  std::string host = "127.0.0.1";  // an address or a name (resolved with getaddrinfo)
  int32_t port = 8000;             // 0: any free port
  int32_t workers = 256;           // threads serving requests: the most requests handled at once
  double read_timeout_s = 10;      // a started request must arrive whole within this (408 after)
  double idle_timeout_s = 5;       // a keep-alive connection without a request is closed after this
  double write_timeout_s = 10;     // a reply (or one chunk) must be taken by the client within this
  int64_t body_limit_bytes = 8 << 20;
};

struct HttpServerStats {
  int64_t open_connections = 0;  // accepted and not yet closed
  int64_t busy_workers = 0;      // serving a request now
  int32_t threads = 0;           // the poller and the workers
};

class HttpServer {
 public:
  // Throws InputError (naming --host/--port) when the address cannot be resolved or bound.
  HttpServer(const HttpServerConfig& config, HttpHandler handler);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int32_t port() const;         // the bound port
  std::string address() const;  // the bound address, printable ("127.0.0.1", "::1")
  HttpServerStats stats() const;
  // Closes the listener and every idle connection; busy ones close after their reply. Idempotent.
  void stop_accepting();
  // stop_accepting, then waits for the busy workers to finish and joins every thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenline
