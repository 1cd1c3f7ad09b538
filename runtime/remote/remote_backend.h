// The `remote` backend: a device hosted by npu-server, driven over gRPC
// (npu_remote.proto, docs/runtime.md "Remote device").
#pragma once

#include "npu/rt/backend.h"

#include <memory>
#include <string>

namespace npu::remote {

struct ClientOptions {
  std::string address; // HOST:PORT of npu-server
  std::string token;   // sent as the metadata "npu-token"; empty: none
  // PEM of the CA that signed the server's certificate; set: TLS.
  std::string tlsCaCertificate;

  // NPU_REMOTE (required), NPU_REMOTE_TOKEN and NPU_REMOTE_TLS_CA (a PEM
  // file); std::runtime_error naming the variable when one is unusable.
  static ClientOptions fromEnvironment();
};

// Opens a session: throws std::runtime_error naming the address when the
// server cannot be reached or refuses it (bad token, bad options).
std::unique_ptr<rt::Backend> connect(const ClientOptions &client,
                                     const rt::BackendOptions &options);

} // namespace npu::remote
