// HttpServer: the HTTP/1.1 server of `tokenline serve` (requests parsed by HttpRequestReader over
// Boost.Beast, kept out of this header; sockets are plain POSIX). One poller thread accepts connections and
// reads every request, event-driven, until it is whole (header and body, within the read timeout; "100
// Continue" sent to a client that expects it); only then does a worker take it. A slow or stalled client
// so holds a socket, never a worker. A bounded pool of worker threads runs the handler and writes the reply
// (whole, or streamed as chunks), then hands the connection back to the poller (keep-alive) or closes it.
// Requests the config's `light` predicate accepts (by default every one that is not a POST: /health,
// /metrics, /v1/models) have `reserved_workers` of their own that never serve the others, so they answer
// however busy the rest are. Malformed (400), too large (413), too slow (408) and over-budget (503) requests
// are answered by the poller, which then closes the connection gracefully (it stops writing and reads what
// the client still sends, for a while), so the client reads the status before any reset. A client that
// half-closes after its request (shutdown(SHUT_WR)) still gets its answer; one that went away entirely is
// seen by HttpExchange::peer_closed. Past `max_connections`, the connection longest without a whole
// request is closed to make room. The handler runs on worker threads and may block; an exception from it is
// a 500 and a line on stderr, never a dead process.
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
  int32_t version = 11;  // HTTP/1.1: 11, HTTP/1.0: 10

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
  int32_t reserved_workers = 0;    // of those, kept for requests `light` accepts (< workers)
  std::function<bool(const HttpRequest&)> light = {};  // empty: every request that is not a POST
  double read_timeout_s = 10;   // a started request must arrive whole within this (408 after)
  double idle_timeout_s = 5;    // a keep-alive connection without a request is closed after this
  double write_timeout_s = 10;  // a reply (or one chunk) must be taken by the client within this
  int64_t body_limit_bytes = 8 << 20;
  int64_t max_connections = 4096;  // open at once; 0: the process's open-file limit less a reserve
  int64_t read_budget_bytes = int64_t{256} << 20;  // bytes of requests being read, all together (503 past)
};

// The most worker threads a server starts (--http-workers): a worker holds one request at a time and a
// thread's stack (8 MiB of address space by default), so 4,096 workers reserve 32 GiB of address space.
constexpr int32_t kMaxHttpWorkers = 4096;

struct HttpServerStats {
  int64_t open_connections = 0;  // accepted and not yet closed
  int64_t busy_workers = 0;      // serving a request now
  int32_t threads = 0;           // the poller and the workers
};

class HttpServer {
 public:
  // Throws InputError (naming --host/--port) when the address cannot be resolved or bound, or the
  // worker counts are out of range; std::runtime_error (saying how many threads started) when the threads
  // cannot all be started, after joining those that did.
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
