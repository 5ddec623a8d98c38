// HttpRequestReader without sockets: pipelined requests in one buffer, a request fed byte by byte, a chunked
// body, the header and body limits (kTooLarge), garbage (kBad), the query string removed, keep-alive.
#include "serve/http_request_reader.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

namespace tokenline {
namespace {

constexpr int64_t kHeaderLimitBytes = 1024;
constexpr int64_t kBodyLimitBytes = 64;

const std::string kPost =
    "POST /v1/completions?stream=false HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    "Content-Length: 14\r\n\r\n{\"prompt\":\"a\"}";

// Feeds `bytes` one at a time, as a connection delivering a byte per read would; the last status.
HttpReadStatus feed_byte_by_byte(HttpRequestReader& reader, const std::string& bytes) {
  std::string buffer;
  HttpReadStatus status = HttpReadStatus::kNeedMore;
  for (const char c : bytes) {
    buffer += c;
    status = reader.feed(buffer);
  }
  return status;
}

}  // namespace

TEST_CASE("a whole request: method, target without query, lower-case headers, body", "[runtime][http]") {
  HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
  std::string buffer = kPost;
  REQUIRE(reader.feed(buffer) == HttpReadStatus::kOk);
  CHECK(buffer.empty());
  CHECK(reader.consumed_bytes() == static_cast<int64_t>(kPost.size()));
  const HttpRequest& req = reader.request();
  CHECK(req.method == "POST");
  CHECK(req.target == "/v1/completions");
  CHECK(req.header("content-type") == "application/json");
  CHECK(req.header("Content-Type").empty());
  CHECK(req.body == "{\"prompt\":\"a\"}");
  CHECK(reader.keep_alive());
}

TEST_CASE("pipelined requests in one buffer are read one at a time, the rest left", "[runtime][http]") {
  const std::string second = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  std::string buffer = kPost + second;
  HttpRequestReader first_reader(kHeaderLimitBytes, kBodyLimitBytes);
  REQUIRE(first_reader.feed(buffer) == HttpReadStatus::kOk);
  CHECK(buffer == second);
  CHECK(first_reader.request().target == "/v1/completions");
  // A finished reader leaves the next request's bytes alone.
  CHECK(first_reader.feed(buffer) == HttpReadStatus::kOk);
  CHECK(buffer == second);

  HttpRequestReader second_reader(kHeaderLimitBytes, kBodyLimitBytes);
  REQUIRE(second_reader.feed(buffer) == HttpReadStatus::kOk);
  CHECK(buffer.empty());
  CHECK(second_reader.request().method == "GET");
  CHECK(second_reader.request().target == "/health");
  CHECK_FALSE(second_reader.keep_alive());
}

TEST_CASE("a request split byte by byte needs more until its last byte", "[runtime][http]") {
  HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
  std::string buffer;
  for (size_t i = 0; i + 1 < kPost.size(); ++i) {
    buffer += kPost[i];
    REQUIRE(reader.feed(buffer) == HttpReadStatus::kNeedMore);
  }
  buffer += kPost.back();
  REQUIRE(reader.feed(buffer) == HttpReadStatus::kOk);
  CHECK(buffer.empty());
  CHECK(reader.consumed_bytes() == static_cast<int64_t>(kPost.size()));
  CHECK(reader.request().body == "{\"prompt\":\"a\"}");
}

TEST_CASE("a chunked body is joined, HTTP/1.0 without keep-alive closes", "[runtime][http]") {
  HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
  std::string buffer =
      "POST /v1/chat/completions HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
  REQUIRE(reader.feed(buffer) == HttpReadStatus::kOk);
  CHECK(reader.request().body == "hello world");
  CHECK(reader.request().header("transfer-encoding") == "chunked");
  CHECK_FALSE(reader.keep_alive());
}

// Beast 1.74 takes a chunk's size off the body limit before parsing its extensions, at each retry; a
// well-formed extension arriving byte by byte is still read whole (a malformed one ends "too large").
TEST_CASE("a chunk extension split byte by byte", "[runtime][http]") {
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string good = head + "7;name=\"a quoted value\"\r\nabcdefg\r\n0\r\n\r\n";
  HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
  REQUIRE(feed_byte_by_byte(reader, good) == HttpReadStatus::kOk);
  CHECK(reader.request().body == "abcdefg");

  const std::string malformed = head + "7;x=\"\x01zz\r\n" + std::string(100, 'z');
  HttpRequestReader whole(kHeaderLimitBytes, kBodyLimitBytes);
  std::string buffer = malformed;
  CHECK(whole.feed(buffer) == HttpReadStatus::kNeedMore);
  HttpRequestReader split(kHeaderLimitBytes, kBodyLimitBytes);
  CHECK(feed_byte_by_byte(split, malformed) == HttpReadStatus::kTooLarge);
}

// An empty chunked body ("0\r\n\r\n") arriving in small pieces: Boost 1.74's debug build asserts that a
// retried last chunk comes with 5 bytes or more, true only after an earlier chunk (boostorg/beast#2861, fixed
// in later Boost); the reader waits for them, so a split empty body reads whole in a sanitized build too
// (fuzz finding).
TEST_CASE("an empty chunked body split in pieces of one to three bytes", "[runtime][http]") {
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string& body : {std::string("0\r\n\r\n"), std::string("000\r\n\r\n"),
                                  std::string("0;a=b\r\n\r\n"), std::string("0\r\nX-T: 1\r\n\r\n")}) {
    for (size_t piece = 1; piece <= 3; ++piece) {
      HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
      std::string buffer = head;
      REQUIRE(reader.feed(buffer) == HttpReadStatus::kNeedMore);
      for (size_t at = 0; at < body.size(); at += piece) {
        buffer += body.substr(at, piece);
        const HttpReadStatus status = reader.feed(buffer);
        INFO(body << " in pieces of " << piece << ", " << at + piece << " bytes");
        REQUIRE(status == (at + piece >= body.size() ? HttpReadStatus::kOk : HttpReadStatus::kNeedMore));
      }
      CHECK(buffer.empty());
      CHECK(reader.request().body.empty());
    }
  }
}

TEST_CASE("headers or a body past the limits are too large, the exact limit is not", "[runtime][http]") {
  SECTION("header") {
    HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
    std::string buffer = "GET / HTTP/1.1\r\nX-Pad: " + std::string(kHeaderLimitBytes, 'a') + "\r\n\r\n";
    CHECK(reader.feed(buffer) == HttpReadStatus::kTooLarge);
    CHECK_THROWS_AS(reader.request(), std::logic_error);
  }
  // Fuzz finding: Beast alone took a long request line plus fields each under the limit in one piece.
  SECTION("a header over the limit in one piece, its request line and fields each under it") {
    HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
    std::string buffer =
        "GET /" + std::string(600, 't') + " HTTP/1.1\r\nX-Pad: " + std::string(600, 'a') + "\r\n\r\n";
    CHECK(reader.feed(buffer) == HttpReadStatus::kTooLarge);
  }
  SECTION("a header of exactly the limit, in one piece or byte by byte") {
    const std::string start = "GET / HTTP/1.1\r\nX-Pad: ";
    const std::string header =
        start + std::string(static_cast<size_t>(kHeaderLimitBytes) - start.size() - 4, 'a') + "\r\n\r\n";
    REQUIRE(header.size() == static_cast<size_t>(kHeaderLimitBytes));
    HttpRequestReader whole(kHeaderLimitBytes, kBodyLimitBytes);
    std::string buffer = header;
    CHECK(whole.feed(buffer) == HttpReadStatus::kOk);
    HttpRequestReader split(kHeaderLimitBytes, kBodyLimitBytes);
    CHECK(feed_byte_by_byte(split, header) == HttpReadStatus::kOk);
    HttpRequestReader over(kHeaderLimitBytes, kBodyLimitBytes);
    buffer = header.substr(0, start.size()) + "a" + header.substr(start.size());
    CHECK(over.feed(buffer) == HttpReadStatus::kTooLarge);
  }
  SECTION("content-length body") {
    HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
    std::string buffer =
        "POST / HTTP/1.1\r\nContent-Length: " + std::to_string(kBodyLimitBytes + 1) + "\r\n\r\n";
    CHECK(reader.feed(buffer) == HttpReadStatus::kTooLarge);
  }
  SECTION("chunked body") {
    HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
    const std::string chunk = std::string(40, 'b');
    std::string buffer = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n28\r\n" + chunk +
                         "\r\n28\r\n" + chunk + "\r\n0\r\n\r\n";
    CHECK(reader.feed(buffer) == HttpReadStatus::kTooLarge);
  }
  SECTION("a body of exactly the limit") {
    HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
    std::string buffer = "POST / HTTP/1.1\r\nContent-Length: " + std::to_string(kBodyLimitBytes) +
                         "\r\n\r\n" + std::string(kBodyLimitBytes, 'c');
    REQUIRE(reader.feed(buffer) == HttpReadStatus::kOk);
    CHECK(reader.request().body.size() == static_cast<size_t>(kBodyLimitBytes));
  }
}

TEST_CASE("garbage is bad, and stays bad", "[runtime][http]") {
  for (const std::string garbage :
       {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", "GET / HTTP/9.9\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Header\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n"}) {
    INFO(garbage);
    HttpRequestReader reader(kHeaderLimitBytes, kBodyLimitBytes);
    std::string buffer = garbage;
    CHECK(reader.feed(buffer) == HttpReadStatus::kBad);
    std::string more = "GET / HTTP/1.1\r\n\r\n";
    CHECK(reader.feed(more) == HttpReadStatus::kBad);
    CHECK(more.size() == 18);
  }
}

// Beast's rule (the fuzz harness's one allowed difference between one piece and several): the fields of a
// header's first piece are checked at once, later ones only when the header is whole.
TEST_CASE("a bad field in an unfinished header is bad in one piece, needs more when split",
          "[runtime][http]") {
  const std::string unfinished = "GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n";
  HttpRequestReader whole(kHeaderLimitBytes, kBodyLimitBytes);
  std::string buffer = unfinished;
  CHECK(whole.feed(buffer) == HttpReadStatus::kBad);

  HttpRequestReader split(kHeaderLimitBytes, kBodyLimitBytes);
  std::string first = unfinished.substr(0, 5);
  CHECK(split.feed(first) == HttpReadStatus::kNeedMore);
  first += unfinished.substr(5);
  CHECK(split.feed(first) == HttpReadStatus::kNeedMore);
  first += "\r\n";
  CHECK(split.feed(first) == HttpReadStatus::kBad);
}

}  // namespace tokenline
