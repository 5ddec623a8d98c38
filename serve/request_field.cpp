#include "serve/request_field.h"

#include <cmath>
#include <limits>

namespace tokenline {
namespace {

using json = nlohmann::json;

// A value shown in an error: its JSON text, cut to 80 bytes without splitting a UTF-8 sequence.
std::string shown(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= 80) return text;
  size_t cut = 77;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string range_text(double lo, double hi) {
  return "[" + json(lo).dump() + ", " + json(hi).dump() + "]";
}

}  // namespace

const char* json_kind_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::binary:
      return "binary data";
    case json::value_t::discarded:
      return "nothing";
  }
  return "nothing";
}

RequestField::RequestField(const json& body) : value_(&body) {}

RequestField RequestField::operator[](std::string_view key) const {
  const std::string path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  const std::string param = param_.empty() ? std::string(key) : param_;
  if (!given()) return RequestField(nullptr, path, param);
  if (!value_->is_object()) wrong_type("an object");
  const auto it = value_->find(key);
  return RequestField(it == value_->end() ? nullptr : &*it, path, param);
}

RequestField RequestField::operator[](size_t i) const {
  return RequestField(&(*value_)[i], path_ + "[" + std::to_string(i) + "]", param_);
}

const json& RequestField::raw() const {
  static const json kNull;  // immutable: shared by every absent field
  return value_ == nullptr ? kNull : *value_;
}

void RequestField::refuse(const std::string& what, std::string code) const {
  throw RequestError(ApiError{.status = 400,
                              .message = (path_.empty() ? "the request body" : path_) + ": " + what,
                              .param = param_,
                              .code = std::move(code)});
}

void RequestField::wrong_type(const char* expected) const {
  refuse(std::string("expected ") + expected + ", found " + json_kind_name(raw()));
}

std::string RequestField::text() const {
  if (!is_string()) wrong_type("a string");
  return value_->get<std::string>();
}

bool RequestField::flag() const {
  if (!given() || !value_->is_boolean()) wrong_type("a boolean");
  return value_->get<bool>();
}

int64_t RequestField::integer(int64_t lo, int64_t hi) const {
  if (!is_integer()) wrong_type("an integer");
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  // An unsigned value above INT64_MAX (2^64 - 1 read as int64 is -1) is out of every range here.
  if (value_->is_number_unsigned() &&
      value_->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    refuse("expected " + range + ", found " + shown(*value_));
  const auto v = value_->get<int64_t>();
  if (v < lo || v > hi) refuse("expected " + range + ", found " + shown(*value_));
  return v;
}

double RequestField::number(double lo, double hi) const {
  if (!given() || !value_->is_number()) wrong_type("a number");
  const auto v = value_->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi)
    refuse("expected a number in " + range_text(lo, hi) + ", found " + shown(*value_));
  return v;
}

void RequestField::expect_array() const {
  if (!is_array()) wrong_type("a list");
}

void RequestField::expect_object() const {
  if (!is_object()) wrong_type("an object");
}

}  // namespace tokenline
