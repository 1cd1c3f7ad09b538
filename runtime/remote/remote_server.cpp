#include "remote_server.h"

#include "npu_remote.grpc.pb.h"
#include "remote_protocol.h"

#include "npu/rt/backend.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <stdexcept>

namespace npu::remote {

namespace {

// A live session's device. The session's thread holds `mutex` while it
// calls the backend, so that ServerStatus may ask it for its memory.
struct Device {
  std::mutex mutex;
  std::unique_ptr<rt::Backend> backend;
};

rt::BackendOptions backendOptions(const Open &open) {
  rt::BackendOptions options;
  options.addressMap.regions.clear();
  for (const Region &r : open.regions())
    options.addressMap.regions.push_back(
        {.name = r.name(),
         .base = r.base(),
         .size = r.size(),
         .readable = r.readable(),
         .writable = r.writable(),
         .kind = r.csr() ? mem::Region::Kind::Csr : mem::Region::Kind::Memory});
  options.addressMap.validate();
  if (open.iss_mode() > static_cast<uint32_t>(sim::Mode::Both))
    throw std::invalid_argument("unknown ISS mode " + std::to_string(open.iss_mode()));
  options.issMode = static_cast<sim::Mode>(open.iss_mode());
  if (open.has_memory_timing()) {
    sim::MemoryTiming timing{open.memory_timing().latency(), open.memory_timing().bytes_per_cycle(),
                             open.memory_timing().stall_percent()};
    timing.validate();
    options.memoryTiming = timing;
  }
  return options;
}

void setError(Reply &reply, Error::Kind kind, const std::string &message) {
  Error &error = *reply.mutable_error();
  error.set_kind(kind);
  error.set_message(message);
}

// One request against the device; a thrown exception becomes the reply's
// error so that the client rethrows it and the session goes on.
void serve(rt::Backend &backend, const Request &request, Reply &reply) {
  try {
    switch (request.call_case()) {
    case Request::kReadMemory: {
      const ReadMemory &read = request.read_memory();
      if (read.length() > kMaxChunkBytes)
        throw std::invalid_argument("a read of " + std::to_string(read.length()) +
                                    " bytes exceeds the protocol's chunk of " +
                                    std::to_string(kMaxChunkBytes));
      std::string &data = *reply.mutable_data();
      data.resize(read.length());
      backend.readMemory(read.address(), data.data(), read.length());
      break;
    }
    case Request::kWriteMemory:
      backend.writeMemory(request.write_memory().address(), request.write_memory().data().data(),
                          request.write_memory().data().size());
      reply.mutable_done();
      break;
    case Request::kFillMemory:
      if (request.fill_memory().value() > 0xff)
        throw std::invalid_argument("fill value " + std::to_string(request.fill_memory().value()) +
                                    " is not a byte");
      backend.fillMemory(request.fill_memory().address(),
                         static_cast<uint8_t>(request.fill_memory().value()),
                         request.fill_memory().length());
      reply.mutable_done();
      break;
    case Request::kMemoryStats:
      *reply.mutable_memory_stats() = toProto(backend.memoryStats());
      break;
    case Request::kResetMemoryCounters:
      backend.resetMemoryCounters();
      reply.mutable_done();
      break;
    case Request::kReadCsr:
      reply.set_csr_value(backend.readCsr(request.read_csr().offset()));
      break;
    case Request::kWriteCsr:
      backend.writeCsr(request.write_csr().offset(), request.write_csr().value());
      reply.mutable_done();
      break;
    case Request::kWaitIdle:
      backend.waitIdle();
      reply.mutable_done();
      break;
    case Request::kSetRecording:
      backend.setRecording(request.set_recording().enabled());
      reply.mutable_done();
      break;
    case Request::kStats: *reply.mutable_stats() = toProto(backend.stats()); break;
    case Request::kTakeRecords: *reply.mutable_records() = toProto(backend.takeRecords()); break;
    case Request::kDeviceFault: *reply.mutable_fault() = toProto(backend.deviceFault()); break;
    case Request::kSummary: reply.set_summary(backend.summary()); break;
    case Request::kOpen: throw std::invalid_argument("the session is already open");
    case Request::kClose:
    case Request::CALL_NOT_SET:
      throw std::invalid_argument("a request without a call (client newer than npu-server?)");
    }
  } catch (const mem::DeviceFault &e) {
    setError(reply, Error::DEVICE_FAULT, e.what());
    *reply.mutable_error()->mutable_fault() = toProto(e.fault());
  } catch (const std::invalid_argument &e) {
    setError(reply, Error::INVALID_ARGUMENT, e.what());
  } catch (const std::out_of_range &e) {
    setError(reply, Error::OUT_OF_RANGE, e.what());
  } catch (const std::exception &e) {
    setError(reply, Error::RUNTIME, e.what());
  }
}

class Service final : public RemoteDevice::Service {
public:
  Service(std::string backend, std::string token)
      : backend_(std::move(backend)), token_(std::move(token)) {}

  grpc::Status Session(grpc::ServerContext *context,
                       grpc::ServerReaderWriter<Reply, Request> *stream) override {
    if (!authorized(*context))
      return unauthenticated();
    Request request;
    if (!stream->Read(&request))
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "npu-server: the session's first message is missing or not a valid request"};
    if (!request.has_open())
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "npu-server: the first request of a session must be open"};
    auto device = std::make_shared<Device>();
    try {
      device->backend = rt::createBackend(backend_, backendOptions(request.open()));
    } catch (const std::invalid_argument &e) {
      return {grpc::StatusCode::INVALID_ARGUMENT, std::string("npu-server: ") + e.what()};
    } catch (const std::exception &e) {
      return {grpc::StatusCode::INTERNAL, std::string("npu-server: ") + e.what()};
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      devices_.insert(device);
      ++sessionsOpened_;
    }
    Reply reply;
    reply.mutable_opened()->set_backend(backend_);
    bool closed = false;
    if (stream->Write(reply)) {
      while (stream->Read(&request)) {
        if (request.has_close()) {
          closed = true;
          break;
        }
        reply.Clear();
        {
          std::lock_guard<std::mutex> lock(device->mutex);
          serve(*device->backend, request, reply);
        }
        if (!stream->Write(reply))
          break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      devices_.erase(device);
    }
    {
      std::lock_guard<std::mutex> lock(device->mutex);
      device->backend.reset();
    }
    if (!closed && !context->IsCancelled())
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "npu-server: the session's stream ended without a close request (a malformed or "
              "truncated message?); the session is gone"};
    return grpc::Status::OK;
  }

  grpc::Status ServerStatus(grpc::ServerContext *context, const StatusRequest *,
                            StatusReply *reply) override {
    if (!authorized(*context))
      return unauthenticated();
    std::set<std::shared_ptr<Device>> devices;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      devices = devices_;
      reply->set_sessions_opened(sessionsOpened_);
    }
    reply->set_backend(backend_);
    reply->set_active_sessions(devices.size());
    uint64_t resident = 0;
    for (const auto &device : devices) {
      std::lock_guard<std::mutex> lock(device->mutex);
      if (device->backend)
        for (const auto &region : device->backend->memoryStats())
          resident += region.residentBytes;
    }
    reply->set_resident_bytes(resident);
    return grpc::Status::OK;
  }

private:
  bool authorized(const grpc::ServerContext &context) const {
    if (token_.empty())
      return true;
    const auto &metadata = context.client_metadata();
    auto it = metadata.find(grpc::string_ref(kTokenKey.data(), kTokenKey.size()));
    return it != metadata.end() &&
           tokensEqual(std::string_view(it->second.data(), it->second.size()), token_);
  }
  static grpc::Status unauthenticated() {
    return {grpc::StatusCode::UNAUTHENTICATED,
            "npu-server: missing or wrong token (the client sends $NPU_REMOTE_TOKEN)"};
  }

  const std::string backend_;
  const std::string token_;
  std::mutex mutex_;
  std::set<std::shared_ptr<Device>> devices_;
  uint64_t sessionsOpened_ = 0;
};

} // namespace

struct Server::Impl {
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

Server::Server(const ServerOptions &options) : impl_(std::make_unique<Impl>()) {
  std::string servable;
  for (const std::string &name : rt::availableBackends())
    if (name != "remote")
      servable += (servable.empty() ? "" : ", ") + name;
  const auto names = rt::availableBackends();
  if (std::find(names.begin(), names.end(), options.backend) == names.end() ||
      options.backend == "remote")
    throw std::runtime_error("npu-server: cannot serve backend '" + options.backend +
                             "' (available: " + servable + ")");
  if (options.tlsCertificate.empty() != options.tlsKey.empty())
    throw std::runtime_error("npu-server: TLS needs both a certificate and its key");
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tlsCertificate.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({options.tlsKey, options.tlsCertificate});
    credentials = grpc::SslServerCredentials(ssl);
  }
  impl_->service = std::make_unique<Service>(options.backend, options.token);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &impl_->port);
  builder.RegisterService(impl_->service.get());
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // A client whose host vanished without closing its connection (no FIN or
  // RST reaches us) is found by keepalive pings and its session freed in
  // about 40 s, however long its device stays idle.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Clients ping as often (remote_backend.cpp); allow it.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 20'000);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0)
    throw std::runtime_error("npu-server: cannot listen on " + options.listen);
}

Server::~Server() {
  shutdown();
  wait();
}

int Server::port() const {
  return impl_->port;
}

void Server::shutdown() {
  impl_->server->Shutdown(std::chrono::system_clock::now());
}

void Server::wait() {
  impl_->server->Wait();
}

} // namespace npu::remote
