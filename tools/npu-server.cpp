// npu-server: serves a backend (iss, rtl, cosim) to `remote` backends over
// gRPC; every client session gets a device of its own (docs/tools.md).
#include "cli.h"
#include "remote_server.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

std::string readFile(const std::string &path, const char *what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(std::string(what) + ": cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

int main(int argc, char **argv) {
  namespace po = npu::cli::po;
  npu::remote::ServerOptions server;
  std::string tokenFile, certificateFile, keyFile;
  po::options_description options("Options");
  options.add_options()("listen,l", po::value(&server.listen)->default_value("127.0.0.1:0"),
                        "HOST:PORT to listen on; port 0 picks a free port (printed on stdout)")(
      "backend,b", po::value(&server.backend)->default_value("iss"),
      "the backend every session gets: iss, or rtl and cosim when built with Verilator")(
      "token-file", po::value(&tokenFile),
      "file holding the shared token clients must send (else $NPU_REMOTE_TOKEN; neither: no "
      "authentication)")("tls-cert", po::value(&certificateFile),
                         "PEM certificate: serve TLS (with --tls-key)")(
      "tls-key", po::value(&keyFile), "PEM private key of --tls-cert");
  po::positional_options_description positional;
  po::variables_map vm;
  const npu::cli::Tool tool{"npu-server", "[options]",
                            "Serves an NPU backend over gRPC to the `remote` backend "
                            "(NPU_REMOTE=HOST:PORT)."};
  if (auto code = npu::cli::parse(tool, argc, argv, options, positional, vm))
    return *code;

  try {
    if (!tokenFile.empty()) {
      server.token = readFile(tokenFile, "--token-file");
      while (!server.token.empty() && (server.token.back() == '\n' || server.token.back() == '\r'))
        server.token.pop_back();
      if (server.token.empty())
        throw std::runtime_error("--token-file: '" + tokenFile + "' holds no token");
    } else if (const char *token = std::getenv("NPU_REMOTE_TOKEN")) {
      server.token = token;
    }
    if (!certificateFile.empty())
      server.tlsCertificate = readFile(certificateFile, "--tls-cert");
    if (!keyFile.empty())
      server.tlsKey = readFile(keyFile, "--tls-key");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npu-server: %s\n", e.what());
    return npu::cli::kExitInput;
  }

  // Blocked before gRPC starts its threads, so that only sigwait sees them.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  std::unique_ptr<npu::remote::Server> running;
  try {
    running = std::make_unique<npu::remote::Server>(server);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return npu::cli::kExitUsage;
  }
  const std::string host = server.listen.substr(0, server.listen.rfind(':'));
  std::printf("npu-server: listening on %s:%d, backend %s%s%s\n", host.c_str(), running->port(),
              server.backend.c_str(), server.tlsCertificate.empty() ? "" : ", TLS",
              server.token.empty() ? ", no token" : "");
  std::fflush(stdout);
  if (server.token.empty())
    std::fprintf(stderr, "npu-server: warning: no token: anyone who reaches the port can use the "
                         "device\n");

  int signal = 0;
  sigwait(&stopSignals, &signal);
  std::fprintf(stderr, "npu-server: %s, shutting down\n", signal == SIGINT ? "SIGINT" : "SIGTERM");
  running->shutdown();
  running->wait();
  return npu::cli::closeStdout(tool, npu::cli::kExitOk);
}
