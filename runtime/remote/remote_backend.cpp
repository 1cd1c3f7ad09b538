#include "remote_backend.h"

#include "backends.h"
#include "npu_remote.grpc.pb.h"
#include "remote_protocol.h"

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace npu::remote {

namespace {

const char *statusCodeName(grpc::StatusCode code) {
  switch (code) {
  case grpc::StatusCode::CANCELLED: return "cancelled";
  case grpc::StatusCode::INVALID_ARGUMENT: return "invalid argument";
  case grpc::StatusCode::DEADLINE_EXCEEDED: return "deadline exceeded";
  case grpc::StatusCode::RESOURCE_EXHAUSTED: return "resource exhausted";
  case grpc::StatusCode::UNAUTHENTICATED: return "unauthenticated";
  case grpc::StatusCode::UNAVAILABLE: return "unavailable";
  case grpc::StatusCode::INTERNAL: return "internal";
  default: return "error";
  }
}

Open openRequest(const rt::BackendOptions &options) {
  Open open;
  for (const mem::Region &region : options.addressMap.regions) {
    Region &r = *open.add_regions();
    r.set_name(region.name);
    r.set_base(region.base);
    r.set_size(region.size);
    r.set_readable(region.readable);
    r.set_writable(region.writable);
    r.set_csr(region.kind == mem::Region::Kind::Csr);
  }
  open.set_iss_mode(static_cast<uint32_t>(options.issMode));
  if (options.memoryTiming) {
    MemoryTiming &timing = *open.mutable_memory_timing();
    timing.set_latency(options.memoryTiming->latency);
    timing.set_bytes_per_cycle(options.memoryTiming->bytesPerCycle);
    timing.set_stall_percent(options.memoryTiming->stallPercent);
  }
  return open;
}

// Calls are serialised: one request and its reply at a time on the
// session's stream, whichever thread makes them.
class RemoteBackend final : public rt::Backend {
public:
  RemoteBackend(const ClientOptions &client, const rt::BackendOptions &options)
      : name_("remote " + client.address) {
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (!client.tlsCaCertificate.empty()) {
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = client.tlsCaCertificate;
      credentials = grpc::SslCredentials(ssl);
    }
    grpc::ChannelArguments arguments;
    arguments.SetMaxReceiveMessageSize(kMaxMessageBytes);
    arguments.SetMaxSendMessageSize(kMaxMessageBytes);
    // A server whose host vanished is found by keepalive pings: the call
    // waiting on it fails instead of waiting forever (npu-server allows
    // pings this often).
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
    arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    stub_ =
        RemoteDevice::NewStub(grpc::CreateCustomChannel(client.address, credentials, arguments));
    if (!client.token.empty())
      context_.AddMetadata(std::string(kTokenKey), client.token);
    stream_ = stub_->Session(&context_);
    Request request;
    *request.mutable_open() = openRequest(options);
    name_ += " (" + call(request).opened().backend() + ")";
  }

  ~RemoteBackend() override {
    if (broken_)
      return;
    Request request;
    request.mutable_close();
    stream_->Write(request);
    stream_->WritesDone();
    stream_->Finish();
  }

  std::string_view name() const override { return name_; }

  void readMemory(uint64_t address, void *dst, uint64_t length) override {
    auto *out = static_cast<uint8_t *>(dst);
    Request request;
    uint64_t done = 0;
    do {
      const uint64_t chunk = std::min(length - done, kMaxChunkBytes);
      request.mutable_read_memory()->set_address(address + done);
      request.mutable_read_memory()->set_length(chunk);
      const Reply reply = call(request);
      if (reply.data().size() != chunk)
        throw std::runtime_error(name_ + ": read " + std::to_string(reply.data().size()) +
                                 " bytes instead of " + std::to_string(chunk));
      std::copy(reply.data().begin(), reply.data().end(), out + done);
      done += chunk;
    } while (done < length);
  }

  void writeMemory(uint64_t address, const void *src, uint64_t length) override {
    const auto *in = static_cast<const uint8_t *>(src);
    Request request;
    uint64_t done = 0;
    do {
      const uint64_t chunk = std::min(length - done, kMaxChunkBytes);
      request.mutable_write_memory()->set_address(address + done);
      request.mutable_write_memory()->set_data(in + done, chunk);
      call(request);
      done += chunk;
    } while (done < length);
  }

  void fillMemory(uint64_t address, uint8_t value, uint64_t length) override {
    Request request;
    request.mutable_fill_memory()->set_address(address);
    request.mutable_fill_memory()->set_value(value);
    request.mutable_fill_memory()->set_length(length);
    call(request);
  }

  std::vector<mem::PhysicalMemory::RegionStats> memoryStats() const override {
    Request request;
    request.mutable_memory_stats();
    return fromProto(call(request).memory_stats());
  }

  void resetMemoryCounters() override {
    Request request;
    request.mutable_reset_memory_counters();
    call(request);
  }

  uint32_t readCsr(uint32_t offset) override {
    Request request;
    request.mutable_read_csr()->set_offset(offset);
    return call(request).csr_value();
  }

  void writeCsr(uint32_t offset, uint32_t value) override {
    Request request;
    request.mutable_write_csr()->set_offset(offset);
    request.mutable_write_csr()->set_value(value);
    call(request);
  }

  void waitIdle() override {
    Request request;
    request.mutable_wait_idle();
    call(request);
  }

  void setRecording(bool enabled) override {
    Request request;
    request.mutable_set_recording()->set_enabled(enabled);
    call(request);
  }

  sim::Stats stats() const override {
    Request request;
    request.mutable_stats();
    return fromProto(call(request).stats());
  }

  std::vector<sim::PacketRecord> takeRecords() override {
    Request request;
    request.mutable_take_records();
    return fromProto(call(request).records());
  }

  mem::Fault deviceFault() override {
    Request request;
    request.mutable_device_fault();
    return fromProto(call(request).fault());
  }

  std::string summary() const override {
    Request request;
    request.mutable_summary();
    return call(request).summary();
  }

private:
  // The reply to `request`, or the backend's exception rethrown.
  Reply call(const Request &request) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_)
      throw std::runtime_error(name_ + ": the session has ended: " + brokenReason_);
    Reply reply;
    if (!stream_->Write(request) || !stream_->Read(&reply)) {
      const grpc::Status status = stream_->Finish();
      broken_ = true;
      brokenReason_ =
          status.ok() ? "the server closed it"
                      : status.error_message() + " (" + statusCodeName(status.error_code()) + ")";
      throw std::runtime_error(name_ + ": " + brokenReason_);
    }
    if (!reply.has_error())
      return reply;
    const Error &error = reply.error();
    switch (error.kind()) {
    case Error::DEVICE_FAULT: throw mem::DeviceFault(fromProto(error.fault()));
    case Error::INVALID_ARGUMENT: throw std::invalid_argument(error.message());
    case Error::OUT_OF_RANGE: throw std::out_of_range(error.message());
    default: throw std::runtime_error(error.message());
    }
  }

  std::string name_;
  std::unique_ptr<RemoteDevice::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<Request, Reply>> stream_;
  mutable std::mutex mutex_;
  mutable bool broken_ = false;
  mutable std::string brokenReason_;
};

std::string readFile(const std::string &path, const char *variable) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(std::string(variable) + ": cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

ClientOptions ClientOptions::fromEnvironment() {
  ClientOptions options;
  const char *address = std::getenv("NPU_REMOTE");
  if (!address || !*address)
    throw std::runtime_error("the remote backend needs NPU_REMOTE=HOST:PORT of an npu-server");
  options.address = address;
  if (const char *token = std::getenv("NPU_REMOTE_TOKEN"))
    options.token = token;
  if (const char *ca = std::getenv("NPU_REMOTE_TLS_CA"); ca && *ca)
    options.tlsCaCertificate = readFile(ca, "NPU_REMOTE_TLS_CA");
  return options;
}

std::unique_ptr<rt::Backend> connect(const ClientOptions &client,
                                     const rt::BackendOptions &options) {
  return std::make_unique<RemoteBackend>(client, options);
}

} // namespace npu::remote

namespace npu::rt {

std::unique_ptr<Backend> makeRemoteBackend(const BackendOptions &options) {
  return remote::connect(remote::ClientOptions::fromEnvironment(), options);
}

} // namespace npu::rt
