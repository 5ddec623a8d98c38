#include "engine/runtime/http_request_reader.h"

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

HttpRequestReader::HttpRequestReader(int64_t header_limit_bytes, int64_t body_limit_bytes)
    : parser_(std::make_unique<Parser>()) {
  parser_->beast.header_limit(static_cast<uint32_t>(header_limit_bytes));
  parser_->beast.body_limit(static_cast<uint64_t>(body_limit_bytes));
  parser_->beast.eager(true);  // parse the body in the same put() as the header when it is there
}

HttpRequestReader::~HttpRequestReader() = default;

HttpReadStatus HttpRequestReader::feed(std::string& buffer) {
  if (status_ != HttpReadStatus::kNeedMore) return status_;
  while (!buffer.empty()) {
    boost::beast::error_code ec;
    const size_t used = parser_->beast.put(boost::asio::buffer(buffer.data(), buffer.size()), ec);
    buffer.erase(0, used);
    consumed_bytes_ += static_cast<int64_t>(used);
    if (ec == http::error::body_limit || ec == http::error::header_limit)
      return status_ = HttpReadStatus::kTooLarge;
    if (ec && ec != http::error::need_more) return status_ = HttpReadStatus::kBad;
    if (parser_->beast.is_done()) break;
    if (used == 0) return HttpReadStatus::kNeedMore;  // a partial element: Beast wants it whole
  }
  if (!parser_->beast.is_done()) return HttpReadStatus::kNeedMore;
  auto& msg = parser_->beast.get();
  request_.method = std::string(msg.method_string());
  request_.target = std::string(msg.target());
  request_.target.erase(std::min(request_.target.find('?'), request_.target.size()));
  for (const auto& field : msg) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    request_.headers[name] = std::string(field.value());
  }
  keep_alive_ = msg.keep_alive();
  request_.body = std::move(msg.body());
  return status_ = HttpReadStatus::kOk;
}

const HttpRequest& HttpRequestReader::request() const {
  if (status_ != HttpReadStatus::kOk)
    throw std::logic_error("HttpRequestReader::request before a whole request");
  return request_;
}

bool HttpRequestReader::keep_alive() const {
  if (status_ != HttpReadStatus::kOk)
    throw std::logic_error("HttpRequestReader::keep_alive before a whole request");
  return keep_alive_;
}

}  // namespace tokenline
