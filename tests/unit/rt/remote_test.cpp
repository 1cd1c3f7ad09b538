// The remote backend against an npu-server core on loopback: the same
// results and exceptions as in-process, sessions that end with their
// clients, a refused token, malformed and oversized messages, and
// concurrent clients with independent devices.
#include "npu/rt/backend.h"
#include "npu/rt/runtime.h"
#include "npu_remote.grpc.pb.h"
#include "remote_backend.h"
#include "remote_protocol.h"
#include "remote_server.h"

#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace {

using namespace npu;
using ::testing::HasSubstr;

constexpr const char *kToken = "s3cret-token";
constexpr uint64_t kActivations = 0x1000'0000;

remote::ServerOptions serverOptions() {
  remote::ServerOptions options;
  options.token = kToken;
  return options;
}

remote::ClientOptions clientOptions(std::string address, std::string token = kToken) {
  remote::ClientOptions options;
  options.address = std::move(address);
  options.token = std::move(token);
  return options;
}

rt::RuntimeOptions runtimeOptions(std::string backend) {
  rt::RuntimeOptions options;
  options.backend = std::move(backend);
  return options;
}

struct Loopback {
  remote::Server server{serverOptions()};
  std::string address() const { return "127.0.0.1:" + std::to_string(server.port()); }
  remote::ClientOptions client(std::string token = kToken) const {
    return clientOptions(address(), std::move(token));
  }
  remote::StatusReply status() const {
    auto stub = remote::RemoteDevice::NewStub(
        grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.AddMetadata(std::string(remote::kTokenKey), kToken);
    remote::StatusReply reply;
    const grpc::Status status = stub->ServerStatus(&context, {}, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return reply;
  }
  // The status once `sessions` are active: a session whose stream gRPC
  // ended (a cancelled call, a dead client) is freed by its handler soon
  // after, not before the client learns of the end.
  remote::StatusReply statusWithSessions(uint64_t sessions) const {
    remote::StatusReply reply = status();
    for (int i = 0; i < 200 && reply.active_sessions() != sessions; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      reply = status();
    }
    return reply;
  }
};

std::string faultMessage(rt::Backend &backend, auto access) {
  try {
    access(backend);
  } catch (const mem::DeviceFault &e) {
    return e.what();
  }
  return "no fault";
}

TEST(RemoteTest, MemoryCsrAndFaultsBehaveAsInProcess) {
  Loopback loopback;
  auto remote = remote::connect(loopback.client(), {});
  auto local = rt::createBackend("iss");
  EXPECT_EQ(remote->name(), "remote " + loopback.address() + " (iss)");

  // Three and a half chunks each way.
  std::vector<uint8_t> data(remote::kMaxChunkBytes * 7 / 2);
  std::iota(data.begin(), data.end(), uint8_t(3));
  remote->writeMemory(kActivations, data.data(), data.size());
  std::vector<uint8_t> back(data.size());
  remote->readMemory(kActivations, back.data(), back.size());
  EXPECT_EQ(back, data);
  remote->fillMemory(kActivations + 10, 0xab, 5);
  remote->readMemory(kActivations + 8, back.data(), 8);
  EXPECT_EQ(std::vector<uint8_t>(back.begin(), back.begin() + 8),
            (std::vector<uint8_t>{data[8], data[9], 0xab, 0xab, 0xab, 0xab, 0xab, data[15]}));

  for (auto access : std::vector<std::function<void(rt::Backend &)>>{
           [](rt::Backend &b) {
             uint8_t x;
             b.readMemory(0x7fff'0000'0000, &x, 1);
           },
           [](rt::Backend &b) { b.fillMemory(0x0fff'f000, 1, 8192); },
           [](rt::Backend &b) {
             uint32_t x = 0;
             b.writeMemory(0x3000'0000, &x, 4);
           }}) {
    const std::string message = faultMessage(*local, access);
    EXPECT_NE(message, "no fault");
    EXPECT_EQ(faultMessage(*remote, access), message);
  }
  for (uint32_t offset : {0u, 4u, 8u, 0x40u})
    EXPECT_EQ(remote->readCsr(offset), local->readCsr(offset)) << offset;
  EXPECT_EQ(remote->deviceFault().code, mem::FaultCode::None);
  EXPECT_EQ(remote->stats().packets, 0u);
  const auto regions = remote->memoryStats();
  ASSERT_EQ(regions.size(), local->memoryStats().size());
  EXPECT_EQ(regions[1].name, "activations");
  EXPECT_EQ(regions[1].bytesWritten, data.size() + 5);
}

TEST(RemoteTest, RuntimeStreamFaultsAndRecoversThroughRemote) {
  Loopback loopback;
  setenv("NPU_REMOTE", loopback.address().c_str(), 1);
  setenv("NPU_REMOTE_TOKEN", kToken, 1);
  std::string messages[2];
  for (int remote = 0; remote < 2; ++remote) {
    rt::Runtime runtime(runtimeOptions(remote ? "remote" : "iss"));
    runtime.setRecording(true);
    const uint64_t a = runtime.malloc(64);
    isa::inst::Fill fill;
    fill.dst = a;
    fill.value = 7;
    fill.count = 16;
    isa::inst::Copy bad;
    bad.dst = a;
    bad.src = 0x7fff'0000'0000;
    bad.bytes = 16;
    const isa::Packet packets[] = {isa::packetOf(fill), isa::packetOf(bad)};
    runtime.submit(packets);
    try {
      runtime.synchronize();
    } catch (const rt::Error &e) {
      EXPECT_EQ(e.code(), rt::ErrorCode::DeviceFault);
      messages[remote] = e.what();
    }
    runtime.reset();
    runtime.submit(std::span(packets, 1));
    runtime.synchronize();
    uint32_t out = 0;
    runtime.memcpyDeviceToHost(&out, a, 4);
    EXPECT_EQ(out, 7u);
    EXPECT_EQ(runtime.deviceStats().packets, 1u);
    EXPECT_EQ(runtime.takeRecords().size(), 1u);
  }
  EXPECT_THAT(messages[0], HasSubstr("unmapped"));
  EXPECT_EQ(messages[1], messages[0]);
  unsetenv("NPU_REMOTE");
  unsetenv("NPU_REMOTE_TOKEN");
}

TEST(RemoteTest, BadTokenIsRefusedWithoutASession) {
  Loopback loopback;
  for (const char *token : {"wrong", ""}) {
    try {
      remote::connect(loopback.client(token), {});
      FAIL() << "token '" << token << "' was accepted";
    } catch (const std::runtime_error &e) {
      EXPECT_THAT(e.what(), HasSubstr("remote " + loopback.address()));
      EXPECT_THAT(e.what(), HasSubstr("wrong token"));
      EXPECT_THAT(e.what(), HasSubstr("unauthenticated"));
    }
  }
  EXPECT_EQ(loopback.status().sessions_opened(), 0u);
}

TEST(RemoteTest, UnreachableServerNamesTheAddress) {
  int port;
  {
    Loopback gone;
    port = gone.server.port();
  }
  try {
    remote::connect(clientOptions("127.0.0.1:" + std::to_string(port), ""), {});
    FAIL() << "connected to a closed port";
  } catch (const std::runtime_error &e) {
    EXPECT_THAT(e.what(), HasSubstr("remote 127.0.0.1:" + std::to_string(port)));
    EXPECT_THAT(e.what(), HasSubstr("unavailable"));
  }
}

// A stream that sends `message` (raw bytes) after a valid open, and the
// status it ends with.
grpc::Status sendRaw(const Loopback &loopback, const std::string &message) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxSendMessageSize(64 << 20);
  auto channel =
      grpc::CreateCustomChannel(loopback.address(), grpc::InsecureChannelCredentials(), arguments);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.AddMetadata(std::string(remote::kTokenKey), kToken);
  grpc::CompletionQueue queue;
  auto call = stub.PrepareCall(&context, "/npu.remote.RemoteDevice/Session", &queue);
  void *tag;
  bool ok;
  auto step = [&] { EXPECT_TRUE(queue.Next(&tag, &ok)); };
  call->StartCall(nullptr);
  step();
  remote::Request open;
  open.mutable_open()->set_iss_mode(static_cast<uint32_t>(sim::Mode::Both));
  for (const mem::Region &region : mem::AddressMap::defaults().regions) {
    remote::Region &r = *open.mutable_open()->add_regions();
    r.set_name(region.name);
    r.set_base(region.base);
    r.set_size(region.size);
    r.set_readable(region.readable);
    r.set_writable(region.writable);
    r.set_csr(region.kind == mem::Region::Kind::Csr);
  }
  for (const std::string &bytes : {open.SerializeAsString(), message}) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer buffer(&slice, 1);
    call->Write(buffer, nullptr);
    step();
  }
  call->WritesDone(nullptr);
  step();
  // Finish completes only once the server's messages (the reply to open)
  // have been read.
  grpc::ByteBuffer reply;
  do {
    call->Read(&reply, nullptr);
    step();
  } while (ok);
  grpc::Status status;
  call->Finish(&status, nullptr);
  step();
  return status;
}

TEST(RemoteTest, TruncatedAndOversizedMessagesEndOnlyTheirSession) {
  Loopback loopback;
  remote::Request write;
  write.mutable_write_memory()->set_address(kActivations);
  write.mutable_write_memory()->set_data(std::string(4096, 'x'));
  const std::string whole = write.SerializeAsString();
  grpc::Status truncated = sendRaw(loopback, whole.substr(0, whole.size() / 2));
  EXPECT_EQ(truncated.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(truncated.error_message(), HasSubstr("malformed or truncated"));

  write.mutable_write_memory()->set_data(std::string(2 * remote::kMaxMessageBytes, 'x'));
  grpc::Status oversized = sendRaw(loopback, write.SerializeAsString());
  EXPECT_EQ(oversized.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << oversized.error_message();

  auto client = remote::connect(loopback.client(), {});
  uint32_t value = 42;
  client->writeMemory(kActivations, &value, 4);
  client->readMemory(kActivations, &value, 4);
  EXPECT_EQ(value, 42u);
  const remote::StatusReply status = loopback.statusWithSessions(1);
  EXPECT_EQ(status.active_sessions(), 1u);
  EXPECT_EQ(status.sessions_opened(), 3u);
}

TEST(RemoteTest, KilledClientsSessionIsFreedAndTheServerGoesOn) {
  Loopback loopback;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ready[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, ready[0]);
  const std::string address = loopback.address();
  const char *argv[] = {"/proc/self/exe", "--hold-session", address.c_str(), nullptr};
  pid_t child;
  ASSERT_EQ(posix_spawn(&child, argv[0], &actions, nullptr, const_cast<char **>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(ready[1]);
  char line[16] = {};
  ASSERT_GT(read(ready[0], line, sizeof line - 1), 0) << "the client never got going";
  close(ready[0]);
  EXPECT_STREQ(line, "ready\n");
  const remote::StatusReply holding = loopback.status();
  EXPECT_EQ(holding.active_sessions(), 1u);
  EXPECT_GE(holding.resident_bytes(), 8u << 20);

  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  const remote::StatusReply after = loopback.statusWithSessions(0);
  EXPECT_EQ(after.active_sessions(), 0u);
  EXPECT_EQ(after.resident_bytes(), 0u);

  auto next = remote::connect(loopback.client(), {});
  uint32_t value = 0;
  next->readMemory(kActivations, &value, 4);
  EXPECT_EQ(value, 0u) << "the new session saw the dead one's memory";
}

// Run in a child by the test above: holds a session with 8 MiB of device
// memory touched and keeps it busy until killed.
int holdSession(const char *address) {
  auto backend = remote::connect(clientOptions(address), {});
  std::vector<uint8_t> data(8 << 20, 0x5a);
  backend->writeMemory(kActivations, data.data(), data.size());
  std::fputs("ready\n", stdout);
  std::fflush(stdout);
  for (;;)
    backend->readMemory(kActivations, data.data(), 4096);
}

TEST(RemoteTest, ConcurrentClientsHaveIndependentDevices) {
  Loopback loopback;
  auto work = [&](uint32_t seed, std::string &failure) {
    auto backend = remote::connect(loopback.client(), {});
    std::vector<uint32_t> data(4096), back(4096);
    for (uint32_t round = 0; round < 200 && failure.empty(); ++round) {
      std::iota(data.begin(), data.end(), seed * 1'000'000 + round);
      backend->writeMemory(kActivations, data.data(), data.size() * 4);
      backend->readMemory(kActivations, back.data(), back.size() * 4);
      if (back != data)
        failure = "client " + std::to_string(seed) + " read another's data in round " +
                  std::to_string(round);
    }
  };
  std::string failures[2];
  std::thread first(work, 1, std::ref(failures[0]));
  std::thread second(work, 2, std::ref(failures[1]));
  first.join();
  second.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  EXPECT_EQ(loopback.status().sessions_opened(), 2u);
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RemoteTest, TlsWithASelfSignedCertificate) {
  char directory[] = "/tmp/npu_remote_tls_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string key = std::string(directory) + "/key.pem";
  const std::string certificate = std::string(directory) + "/cert.pem";
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -addext "
      "subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + certificate + " 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  remote::ServerOptions options = serverOptions();
  options.tlsCertificate = readText(certificate);
  options.tlsKey = readText(key);
  std::filesystem::remove_all(directory);
  remote::Server server(options);
  const std::string address = "127.0.0.1:" + std::to_string(server.port());

  remote::ClientOptions client = clientOptions(address);
  client.tlsCaCertificate = options.tlsCertificate;
  auto backend = remote::connect(client, {});
  uint32_t value = 0x1234'5678;
  backend->writeMemory(kActivations, &value, 4);
  value = 0;
  backend->readMemory(kActivations, &value, 4);
  EXPECT_EQ(value, 0x1234'5678u);

  try {
    remote::connect(clientOptions(address), {});
    FAIL() << "a plaintext client reached the TLS server";
  } catch (const std::runtime_error &e) {
    EXPECT_THAT(e.what(), HasSubstr("remote " + address));
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "--hold-session") == 0)
    return holdSession(argv[2]);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
