#include "serve/http_request_reader.h"

// clang-format off
#include <utility>  // before Beast: Boost 1.74's Asio headers use std::exchange without including it
// clang-format on

#include <algorithm>
#include <boost/beast/http.hpp>
#include <cctype>
#include <stdexcept>

namespace tokenline {

namespace http = boost::beast::http;

struct HttpRequestReader::Parser {
  http::request_parser<http::string_body> beast;
};

namespace {

// The parsed message as the handlers see it (its body moved out).
HttpRequest to_request(http::request<http::string_body>& msg) {
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.target.erase(std::min(req.target.find('?'), req.target.size()));
  for (const auto& field : msg) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    req.headers[name] = std::string(field.value());
  }
  req.body = std::move(msg.body());
  req.version = static_cast<int32_t>(msg.version());
  return req;
}

}  // namespace

// Beast 1.74 retries a last chunk ("0\r\n") whose trailer is not whole from the chunk's first byte, and its
// debug build asserts that the retry holds 5 bytes or more, true only after an earlier chunk (the CRLF that
// ends it is retried too): "0\r\n" then one byte aborts a sanitized build (boostorg/beast#2861, fixed in
// Boost 1.86; release builds read on correctly). No chunked body ends in fewer than 5 bytes from a chunk's
// start ("0\r\n\r\n"), so waiting for them changes no outcome.
bool HttpRequestReader::waits_for_last_chunk(const std::string& buffer) const {
  return parser_->beast.is_header_done() && parser_->beast.chunked() && buffer.size() < 5 &&
         buffer.compare(0, 3, "0\r\n") == 0;
}

HttpRequestReader::HttpRequestReader(int64_t header_limit_bytes, int64_t body_limit_bytes)
    : parser_(std::make_unique<Parser>()), header_limit_bytes_(header_limit_bytes) {
  parser_->beast.header_limit(static_cast<uint32_t>(header_limit_bytes));
  parser_->beast.body_limit(static_cast<uint64_t>(body_limit_bytes));
  parser_->beast.eager(true);  // parse the body in the same put() as the header when it is there
}

HttpRequestReader::~HttpRequestReader() = default;

HttpReadStatus HttpRequestReader::feed(std::string& buffer) {
  if (status_ != HttpReadStatus::kNeedMore) return status_;
  while (!buffer.empty()) {
    if (waits_for_last_chunk(buffer)) return HttpReadStatus::kNeedMore;
    // Beast 1.74 applies its header limit to the request line and to the fields separately when they come
    // in one piece (up to twice the limit), so the header is shown at most the limit's bytes: a header not
    // whole within them is longer than the limit, however the bytes were split (fuzz finding).
    const bool in_header = !parser_->beast.is_header_done();
    const size_t window =
        in_header ? std::min(buffer.size(), static_cast<size_t>(header_limit_bytes_ - consumed_bytes_))
                  : buffer.size();
    boost::beast::error_code ec;
    const size_t used = parser_->beast.put(boost::asio::buffer(buffer.data(), window), ec);
    buffer.erase(0, used);
    consumed_bytes_ += static_cast<int64_t>(used);
    if (ec == http::error::body_limit || ec == http::error::header_limit)
      return status_ = HttpReadStatus::kTooLarge;
    const int64_t header_seen_bytes = consumed_bytes_ + static_cast<int64_t>(window - used);
    if (in_header && !parser_->beast.is_header_done() && header_seen_bytes >= header_limit_bytes_ &&
        (!ec || ec == http::error::need_more))
      return status_ = HttpReadStatus::kTooLarge;
    if (ec && ec != http::error::need_more) return status_ = HttpReadStatus::kBad;
    if (parser_->beast.is_done()) break;
    if (used == 0) return HttpReadStatus::kNeedMore;  // a partial element: Beast wants it whole
  }
  if (!parser_->beast.is_done()) return HttpReadStatus::kNeedMore;
  auto& msg = parser_->beast.get();
  keep_alive_ = msg.keep_alive();
  request_ = to_request(msg);
  return status_ = HttpReadStatus::kOk;
}

const HttpRequest& HttpRequestReader::request() const {
  if (status_ != HttpReadStatus::kOk)
    throw std::logic_error("HttpRequestReader::request before a whole request");
  return request_;
}

bool HttpRequestReader::awaits_continue() const {
  if (status_ != HttpReadStatus::kNeedMore || !parser_->beast.is_header_done()) return false;
  if (parser_->beast.get().version() < 11) return false;  // RFC 9110 10.1.1: ignored from HTTP/1.0
  const auto expect = parser_->beast.get()[http::field::expect];
  return boost::beast::iequals(expect, "100-continue");
}

bool HttpRequestReader::keep_alive() const {
  if (status_ != HttpReadStatus::kOk)
    throw std::logic_error("HttpRequestReader::keep_alive before a whole request");
  return keep_alive_;
}

}  // namespace tokenline
