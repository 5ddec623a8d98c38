// RequestField: the one typed accessor through which every field of an OpenAI request body is read. A
// field is a JSON value and its path in the body ("messages[0].role"); a read of the wrong type or out of
// range throws RequestError, whose ApiError (400) names the path, what was expected and what was found:
// "messages[0].role: expected a string, found a number". Absent and null read as not given (the OpenAI
// SDKs send null for unset optional fields). Edge-only (serve/): nlohmann/json stays in serve's .cpp files
// and this header.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "serve/openai_request.h"

namespace tokenline {

// A request refused while it is read: caught once, at the top of the parse, and answered with error().
class RequestError : public std::runtime_error {
 public:
  explicit RequestError(ApiError error) : std::runtime_error(error.message), error_(std::move(error)) {}
  const ApiError& error() const { return error_; }

 private:
  ApiError error_;
};

class RequestField {
 public:
  // The body itself (path "", param ""). REQUIRES: body outlives every field read from it.
  explicit RequestField(const nlohmann::json& body);

  // A member of this object (not given when absent); a field that is not an object is refused.
  RequestField operator[](std::string_view key) const;
  // Element i of this array. REQUIRES: is_array() and i < size().
  RequestField operator[](size_t i) const;

  bool given() const { return value_ != nullptr && !value_->is_null(); }
  bool is_string() const { return given() && value_->is_string(); }
  bool is_array() const { return given() && value_->is_array(); }
  bool is_object() const { return given() && value_->is_object(); }
  bool is_integer() const { return given() && value_->is_number_integer(); }
  size_t size() const { return given() ? value_->size() : 0; }  // elements or members
  const std::string& path() const { return path_; }
  const std::string& param() const { return param_; }  // the top-level field: OpenAI's error param
  // The value (JSON null when not given), for a check that is not a type (an enum's value, a shape).
  const nlohmann::json& raw() const;

  // Typed reads of a given field; each throws RequestError on another type or a value out of range.
  std::string text() const;                       // a string
  bool flag() const;                              // a boolean
  int64_t integer(int64_t lo, int64_t hi) const;  // an integer in [lo, hi] (2^64 - 1 is out of range)
  double number(double lo, double hi) const;      // a number (integer or not) in [lo, hi]
  void expect_array() const;
  void expect_object() const;

  // Throws RequestError: "<path>: <what>" with this field's param and code.
  [[noreturn]] void refuse(const std::string& what, std::string code = "") const;

 private:
  RequestField(const nlohmann::json* value, std::string path, std::string param)
      : value_(value), path_(std::move(path)), param_(std::move(param)) {}
  [[noreturn]] void wrong_type(const char* expected) const;

  const nlohmann::json* value_;  // nullptr: absent
  std::string path_;
  std::string param_;
};

// What a JSON value is, as the errors name it: "a string", "a number", "an object", "null", ...
const char* json_kind_name(const nlohmann::json& value);

}  // namespace tokenline
