// `tokenline serve` as a separate process: clients POST completions concurrently over HTTP, identical
// prompts get identical greedy completions (and the second hits the prefix cache), bad requests get 400
// with OpenAI error objects, a request longer than the model's context is refused (context_length_exceeded),
// and after
// --max-requests the server drains and writes the same three outputs as tokenline run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/traces/test_dir.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Reply {
  int status = 0;
  std::string body;
};

// One HTTP/1.1 exchange over a fresh connection (the server closes after each reply).
Reply http(int port, const std::string& method, const std::string& target, const std::string& body) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " +
                              "application/json\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\nConnection: close\r\n\r\n" + body;
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) response.append(buf, static_cast<size_t>(n));
  close(fd);
  Reply r;
  const size_t space = response.find(' ');
  const size_t head_end = response.find("\r\n\r\n");
  REQUIRE(space != std::string::npos);
  REQUIRE(head_end != std::string::npos);
  r.status = std::stoi(response.substr(space + 1, 3));
  r.body = response.substr(head_end + 4);
  return r;
}

Reply complete(int port, const std::string& prompt, int max_tokens) {
  return http(
      port, "POST", "/v1/completions",
      json{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"ignore_eos", true}}.dump());
}

// Waits until `path` holds `needle` (or the deadline passes); returns its text.
std::string wait_for(const fs::path& path, const std::string& needle, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = fs::exists(path) ? tokenline::testing::read_all(path.string()) : "";
    if (text.find(needle) != std::string::npos) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return text;
}

// Signals the server at scope exit, so that a failed test leaves no server behind (it has exited by then
// when the test passed).
struct KillAtExit {
  fs::path pid_file;
  ~KillAtExit() {
    const std::string pid = fs::exists(pid_file) ? tokenline::testing::read_all(pid_file.string()) : "";
    if (!pid.empty()) kill(static_cast<pid_t>(std::stol(pid)), SIGTERM);
  }
};

}  // namespace

TEST_CASE("tokenline serve: concurrent HTTP completions through the real engine, then the three outputs") {
  const fs::path dir = fs::temp_directory_path() / "tokenline_serve_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path err = dir / "stderr.txt", out = dir / "out";
  // 4 requests leave the engine (the too-long one is refused before it); then the server drains and exits.
  const std::string cmd = std::string("'") + TOKENLINE_BINARY +
                          "' serve --port 0 --max-requests 4 --kv-pages 64" + " --page-size 16 --out '" +
                          out.string() + "' >/dev/null 2>'" + err.string() + "' & echo $! > '" +
                          (dir / "pid").string() + "'";
  const KillAtExit guard{dir / "pid"};
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string banner = wait_for(err, "listening on http://127.0.0.1:", 30);
  const size_t at = banner.find("127.0.0.1:");
  REQUIRE(at != std::string::npos);
  const int port = std::stoi(banner.substr(at + 10));

  CHECK(http(port, "GET", "/health", "").status == 200);
  const Reply missing = http(port, "POST", "/v1/completions", "{\"max_tokens\": 4}");
  CHECK(missing.status == 400);
  CHECK(json::parse(missing.body)["error"]["param"] == "prompt");
  CHECK(complete(port, "hello", 0).status == 400);
  CHECK(http(port, "GET", "/v2/nothing", "").status == 404);
  // Longer than the model's 4,096-token context: refused before the engine (OpenAI's error code).
  const Reply too_long = complete(port, "x", 5000);
  CHECK(too_long.status == 400);
  CHECK(json::parse(too_long.body)["error"]["code"] == "context_length_exceeded");

  // Three clients at once (continuous batching), two with the same 40-byte prompt.
  const std::string shared = "the same prompt twice, batched together.";
  Reply a, b, c;
  std::thread ta([&] { a = complete(port, shared, 12); });
  std::thread tb([&] { b = complete(port, shared, 12); });
  std::thread tc([&] { c = complete(port, "a different prompt", 6); });
  ta.join();
  tb.join();
  tc.join();
  REQUIRE(a.status == 200);
  REQUIRE(b.status == 200);
  REQUIRE(c.status == 200);
  const json ja = json::parse(a.body), jb = json::parse(b.body), jc = json::parse(c.body);
  CHECK(ja["usage"]["completion_tokens"] == 12);
  CHECK(ja["usage"]["prompt_tokens"] == 41);  // BOS + 40 bytes
  CHECK(jc["usage"]["completion_tokens"] == 6);
  CHECK(ja["choices"][0]["token_ids"] == jb["choices"][0]["token_ids"]);  // greedy, batch-independent
  CHECK(ja["choices"][0]["token_ids"] != jc["choices"][0]["token_ids"]);
  // Later, alone: the same completion, its prompt's full pages from the prefix cache.
  const Reply again = complete(port, shared, 12);
  REQUIRE(again.status == 200);
  const json jd = json::parse(again.body);
  CHECK(jd["choices"][0]["token_ids"] == ja["choices"][0]["token_ids"]);
  CHECK(jd["usage"]["prompt_tokens_details"]["cached_tokens"] == 32);  // two full 16-token pages of 41 tokens

  const std::string done = wait_for(err, "outputs in", 60);
  INFO(done);
  REQUIRE(done.find("4 arrived, 4 completed") != std::string::npos);
  const json metrics = json::parse(tokenline::testing::read_all((out / "metrics.json").string()));
  CHECK(metrics["run"]["mode"] == "serve");
  CHECK(fs::exists(out / "trace.json"));
  fs::remove_all(dir);
}
