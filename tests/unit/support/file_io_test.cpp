// libnpu_support: outputs never destroy what was there, inputs are read
// within a bound, outputs that are inputs are refused.
#include "npu/support/file_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace npu::io;
namespace fs = std::filesystem;

class FileIo : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("npu_file_io_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  static std::string contents(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Names in the directory: a failed write must leave no temporary file.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

std::string messageOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const FileError &e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(FileIo, AFullDeviceIsAnErrorAndIsNotRemoved) {
  const std::string error = messageOf([] { writeFile("/dev/full", std::string(100000, 'x')); });
  EXPECT_EQ(error, "/dev/full: write error: No space left on device");
  struct stat st;
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  writeFile("/dev/null", "discarded");
}

TEST_F(FileIo, AnExistingFileIsReplacedOnlyOnCommit) {
  const std::string target = path("out.bin");
  writeFile(target, "old");
  chmod(target.c_str(), 0640);
  {
    OutputFile out(target);
    out.write("new contents");
    EXPECT_EQ(contents(target), "old");
    EXPECT_EQ(entries().size(), 2u); // the target and the temporary file beside it
    // Destroyed without commit (a failure): the old file stays, the
    // temporary file goes.
  }
  EXPECT_EQ(contents(target), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.bin"});
  writeFile(target, "new");
  EXPECT_EQ(contents(target), "new");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.bin"});
}

TEST_F(FileIo, ASymbolicLinkKeepsPointingAtTheReplacedFile) {
  writeFile(path("real.bin"), "old");
  fs::create_symlink("real.bin", path("link.bin"));
  writeFile(path("link.bin"), "new");
  EXPECT_TRUE(fs::is_symlink(path("link.bin")));
  EXPECT_EQ(contents(path("real.bin")), "new");
}

TEST_F(FileIo, DirectoriesAndMissingDirectoriesAreErrors) {
  EXPECT_EQ(messageOf([&] { OutputFile out(dir_.string()); }), dir_.string() + ": is a directory");
  EXPECT_NE(messageOf([&] {
              writeFile(path("no/such/dir/x"), "x");
            }).find(path("no/such/dir/x") + ": cannot create a file in"),
            std::string::npos);
  EXPECT_EQ(entries(), std::vector<std::string>{});
}

TEST_F(FileIo, DevFdWritesToTheOpenDescriptor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  writeFile("/dev/fd/" + std::to_string(fds[1]), "through the pipe");
  close(fds[1]);
  char buffer[64] = {};
  EXPECT_EQ(read(fds[0], buffer, sizeof buffer), 16);
  close(fds[0]);
  EXPECT_STREQ(buffer, "through the pipe");
}

TEST_F(FileIo, ReadsAreBounded) {
  writeFile(path("small"), "0123456789");
  EXPECT_EQ(readFile(path("small"), 10, "the test limit").size(), 10u);
  EXPECT_EQ(messageOf([&] { readFile(path("small"), 9, "the test limit"); }),
            path("small") + ": 10 bytes exceed the test limit (9 bytes)");
  EXPECT_EQ(messageOf([] { readFile("/dev/zero", 1 << 20, "the test limit"); }),
            "/dev/zero: exceeds the test limit (1 MiB); does this stream ever end?");
  EXPECT_EQ(messageOf([&] { readFile(dir_.string(), 1 << 20, "the test limit"); }),
            dir_.string() + ": is a directory, not a file");
  EXPECT_EQ(messageOf([&] { readFile(path("missing"), 1 << 20, "the test limit"); }),
            path("missing") + ": cannot open: No such file or directory");
  writeFile(path("empty"), "");
  EXPECT_TRUE(readFile(path("empty"), 0, "the test limit").empty());
}

TEST_F(FileIo, OutputsThatAreInputsAreRefused) {
  writeFile(path("in.txt"), "source");
  fs::create_hard_link(path("in.txt"), path("hard.txt"));
  fs::create_symlink("in.txt", path("soft.txt"));
  const std::vector<NamedPath> inputs{{path("in.txt"), "the input"}};
  for (const std::string &alias :
       {path("in.txt"), path("hard.txt"), path("soft.txt"), (dir_ / "." / "in.txt").string()})
    EXPECT_NE(messageOf([&] {
                checkOutputs({{alias, "the output (-o)"}}, inputs);
              }).find(": the output (-o) is also the input"),
              std::string::npos)
        << alias;
  // Two outputs that are one file, existing or not.
  EXPECT_EQ(messageOf([&] {
              checkOutputs({{path("a"), "the output (-o)"}, {path("./a"), "the listing (-l)"}}, {});
            }),
            path("./a") + ": the listing (-l) is also the output (-o) (" + path("a") + ")");
  // Devices may be named any number of times.
  checkOutputs({{"/dev/null", "one"}, {"/dev/null", "two"}}, {{"/dev/null", "the input"}});
  checkOutputs({{path("new.bin"), "the output (-o)"}}, inputs);
  EXPECT_EQ(contents(path("in.txt")), "source");
}

TEST(FileIoText, ByteSizes) {
  EXPECT_EQ(byteSize(1), "1 byte");
  EXPECT_EQ(byteSize(1000), "1000 bytes");
  EXPECT_EQ(byteSize(4096), "4 KiB");
  EXPECT_EQ(byteSize(uint64_t(3) << 29), "1536 MiB");
  EXPECT_EQ(byteSize(uint64_t(4) << 30), "4 GiB");
}

} // namespace
