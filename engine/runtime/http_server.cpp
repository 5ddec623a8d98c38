#include "engine/runtime/http_server.h"

// clang-format off
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without including it
// clang-format on

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/input_error.h"

namespace tokenline {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr uint64_t kBodyLimitBytes = 1 << 20;  // a prompt of a million bytes is more than any test needs

}  // namespace

struct HttpServer::Impl {
  HttpHandler handler;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accept_thread;
  std::mutex mutex;
  std::condition_variable idle;
  int64_t open_connections = 0;
  bool stopped = false;

  void accept_next() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;  // the acceptor was closed
      {
        const std::lock_guard<std::mutex> lock(mutex);
        ++open_connections;
      }
      std::thread([this, s = std::move(socket)]() mutable { serve(std::move(s)); }).detach();
      accept_next();
    });
  }

  // One request, its reply, close. Malformed requests get 400; a dropped client is not an error.
  void serve(tcp::socket socket) {
    beast::error_code ec;
    beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    parser.body_limit(kBodyLimitBytes);
    http::read(socket, buffer, parser, ec);
    HttpResponse reply;
    if (ec) {
      reply = HttpResponse{400, "text/plain", "bad request: " + ec.message() + "\n"};
    } else {
      const auto& req = parser.get();
      reply = handler(HttpRequest{std::string(req.method_string()), std::string(req.target()), req.body()});
    }
    http::response<http::string_body> res{static_cast<http::status>(reply.status), 11};
    res.set(http::field::server, "tokenline");
    res.set(http::field::content_type, reply.content_type);
    res.keep_alive(false);
    res.body() = std::move(reply.body);
    res.prepare_payload();
    http::write(socket, res, ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    const std::lock_guard<std::mutex> lock(mutex);
    --open_connections;
    idle.notify_all();
  }
};

HttpServer::HttpServer(const std::string& host, int32_t port, HttpHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) throw InputError("--host", "an IP address such as 127.0.0.1", "'" + host + "'");
  const tcp::endpoint endpoint{address, static_cast<uint16_t>(port)};
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw InputError("--port", "a port this process can listen on at " + host,
                     std::to_string(port) + " (" + ec.message() + ")");
  }
  impl_->accept_next();
  impl_->accept_thread = std::thread([this] { impl_->io.run(); });
}

HttpServer::~HttpServer() {
  stop();
}

int32_t HttpServer::port() const {
  return impl_->acceptor.local_endpoint().port();
}

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  asio::post(impl_->io, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
  impl_->accept_thread.join();
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->idle.wait(lock, [this] { return impl_->open_connections == 0; });
}

}  // namespace tokenline
