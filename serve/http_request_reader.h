// HttpRequestReader: one HTTP/1.1 request parsed from bytes as they arrive (Boost.Beast's request parser,
// kept out of this header), with the server's limits. No sockets: HttpServer reads, this parses; the
// libFuzzer harness fuzz/http_request_fuzz.cpp feeds it directly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "serve/http_server.h"

namespace tokenline {

enum class HttpReadStatus {
  kNeedMore,  // the request is not whole yet: feed more bytes
  kOk,        // a whole request: request() and keep_alive() hold it
  kTooLarge,  // the request line + headers or the body passed its limit (413)
  kBad,       // not HTTP/1.x (400)
};

class HttpRequestReader {
 public:
  // A header (request line, fields, blank line) longer than header_limit_bytes, or a body longer than
  // body_limit_bytes, is kTooLarge, however the bytes are split.
  HttpRequestReader(int64_t header_limit_bytes, int64_t body_limit_bytes);
  ~HttpRequestReader();
  HttpRequestReader(const HttpRequestReader&) = delete;
  HttpRequestReader& operator=(const HttpRequestReader&) = delete;

  // Parses bytes from the front of `buffer` and erases the ones used; bytes past the end of the request
  // (a pipelined next request) stay. Once it returns anything but kNeedMore it returns that again and
  // leaves `buffer` alone.
  HttpReadStatus feed(std::string& buffer);
  HttpReadStatus status() const { return status_; }
  // The bytes feed() has used so far.
  int64_t consumed_bytes() const { return consumed_bytes_; }
  // The whole request (method, target without its query string, lower-case header names, body); after kOk.
  const HttpRequest& request() const;
  // Whether the client allows another request on this connection (HTTP/1.1 default, Connection header).
  bool keep_alive() const;
  // True while the header is whole, its body is not, and the client waits for "100 Continue" before
  // sending it (Expect: 100-continue; RFC 9110 section 10.1.1).
  bool awaits_continue() const;

 private:
  // Whether `buffer` starts a last chunk too short to retry (see the .cpp).
  bool waits_for_last_chunk(const std::string& buffer) const;

  struct Parser;
  std::unique_ptr<Parser> parser_;
  int64_t header_limit_bytes_;
  HttpReadStatus status_ = HttpReadStatus::kNeedMore;
  int64_t consumed_bytes_ = 0;
  HttpRequest request_;
  bool keep_alive_ = false;
};

}  // namespace tokenline
