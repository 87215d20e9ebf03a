// The training's file handling: outputs written whole through a fresh temporary file that
// never follows a planted link; inputs refused unless regular files of a bounded size;
// user text printed escaped.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "acl_test_support.h"
#include "safe_file.h"

namespace {

using nnplug::test::TempFolder;
using namespace train;
namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& error) {
        return error.what();
    }
    return "no error";
}

std::vector<std::string> names_in(const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string text_of(const fs::path& path) {
    return read_regular_file(path, 1 << 20, "file");
}

TEST(TrainFiles, WriteReplacesTheFileWholeAndLeavesNoTemporary) {
    TempFolder folder;
    const auto path = folder.write("metrics.csv", "old\n");
    write_file_atomically(path, "new contents\n");
    EXPECT_EQ(text_of(path), "new contents\n");
    EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"metrics.csv"});
}

TEST(TrainFiles, ALinkAtTheTargetIsReplacedAndItsTargetKept) {
    TempFolder folder;
    const auto victim = folder.write("victim", "precious\n");
    fs::create_directory(folder.path() / "out");
    const auto path = folder.path() / "out" / "summary.json";
    fs::create_symlink(victim, path);
    write_file_atomically(path, "{}\n");
    EXPECT_EQ(text_of(victim), "precious\n");
    EXPECT_FALSE(fs::is_symlink(path));
    EXPECT_EQ(text_of(path), "{}\n");
}

TEST(TrainFiles, LinksAtPredictableTemporaryNamesAreNeverFollowed) {
    TempFolder folder;
    const auto victim = folder.write("victim", "precious\n");
    fs::create_directory(folder.path() / "out");
    const auto path = folder.path() / "out" / "checkpoint.bin";
    for (const std::string name : {"checkpoint.bin.tmp", ".checkpoint.bin.tmp", "checkpoint.bin~"})
        fs::create_symlink(victim, folder.path() / "out" / name);
    write_file_atomically(path, "bytes");
    EXPECT_EQ(text_of(victim), "precious\n");
    EXPECT_EQ(text_of(path), "bytes");
    EXPECT_EQ(names_in(folder.path() / "out").size(), 4u);  // the links and the file, nothing else
}

// A name of 255 bytes is a valid file name; its temporary, decorated, must still fit one.
TEST(TrainFiles, TheLongestFileNameIsWritten) {
    TempFolder folder;
    const auto path = folder.path() / std::string(255, 'n');
    write_file_atomically(path, "bytes");
    EXPECT_EQ(text_of(path), "bytes");
    EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{std::string(255, 'n')});
}

TEST(TrainFiles, AFailedWriteNamesTheFileAndLeavesNoTemporary) {
    TempFolder folder;
    fs::create_directory(folder.path() / "config.yaml");  // the rename cannot replace a folder
    const std::string error = error_of([&] { write_file_atomically(folder.path() / "config.yaml", "x"); });
    EXPECT_NE(error.find("cannot rename into place '" + (folder.path() / "config.yaml").string() + "'"),
              std::string::npos)
        << error;
    EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"config.yaml"});
    EXPECT_NE(
        error_of([&] { write_file_atomically(folder.path() / "missing" / "a.csv", "x"); }).find("missing"),
        std::string::npos);
}

TEST(TrainFiles, ReadRefusesFifosDevicesFoldersAndOversizedFilesWithoutHanging) {
    TempFolder folder;
    const auto fifo = folder.path() / "fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(error_of([&] { read_regular_file(fifo, 100, "config"); }),
              "config '" + fifo.string() + "' is not a regular file (a FIFO)");
    EXPECT_EQ(error_of([&] { read_regular_file("/dev/zero", 100, "checkpoint"); }),
              "checkpoint '/dev/zero' is not a regular file (a character device)");
    EXPECT_EQ(error_of([&] { read_regular_file(folder.path(), 100, "config"); }),
              "config '" + folder.path().string() + "' is not a regular file (a folder)");
    const auto big = folder.write("big", std::string(101, 'x'));
    EXPECT_EQ(error_of([&] { read_regular_file(big, 100, "config"); }),
              "config '" + big.string() + "' is 101 bytes; the largest accepted is 100 bytes");
    EXPECT_EQ(read_regular_file(folder.write("ok", std::string(100, 'y')), 100, "config"),
              std::string(100, 'y'));
    EXPECT_NE(error_of([&] {
                  read_regular_file(folder.path() / "none", 100, "config");
              }).find("cannot open config '" + (folder.path() / "none").string() + "'"),
              std::string::npos);
}

}  // namespace
