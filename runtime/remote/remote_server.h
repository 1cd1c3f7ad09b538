// npu-server's core: hosts one backend per session over gRPC
// (npu_remote.proto, docs/runtime.md "Remote device").
#pragma once

#include <memory>
#include <string>

namespace npu::remote {

struct ServerOptions {
  std::string listen = "127.0.0.1:0"; // HOST:PORT; port 0 picks a free one
  std::string backend = "iss";        // what every session gets
  std::string token;                  // empty: no authentication
  // PEM text; both set: TLS, neither: plaintext.
  std::string tlsCertificate;
  std::string tlsKey;
};

class Server {
public:
  // Listens at once; throws std::runtime_error when it cannot (address in
  // use, unknown backend, half a TLS configuration).
  explicit Server(const ServerOptions &options);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  int port() const;
  // Ends every session (their clients see CANCELLED) and stops listening.
  void shutdown();
  // Returns once shutdown() has finished.
  void wait();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace npu::remote
