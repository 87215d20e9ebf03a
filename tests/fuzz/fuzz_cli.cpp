// libFuzzer target: the nnplug command line and the config file it reads. The input is a
// config file's text (its length in the first two bytes) and then the arguments, separated
// by NUL bytes; the argument "@config" stands for the config file. The arguments are parsed
// by the program's own subcommands (cli/*_command.cpp); `nnplug info` runs (the config
// through aclInit's reader, the plugin search, the inventory), `nnplug conformance` is only
// parsed (it forks children and runs for seconds). Any outcome is fine except a crash, a
// sanitizer report or an exception that escapes the commands.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"

namespace nnplug::cli {
Command conformance_command(CLI::App& app);
Command info_command(CLI::App& app);
}  // namespace nnplug::cli

namespace {

// The config as a file without touching the disk: a memfd, named through /proc/self/fd.
class MemoryFile {
public:
    MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("nnplug-fuzz-cli.yaml", MFD_CLOEXEC)) {
        if (fd_ < 0) std::abort();
        for (size_t written = 0; written < size;) {
            const ssize_t n = write(fd_, data + written, size - written);
            if (n <= 0) std::abort();
            written += static_cast<size_t>(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemoryFile() { close(fd_); }
    const std::string& path() const { return path_; }

private:
    int fd_;
    std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // What `nnplug info` prints is not looked at; the fuzzer reports on stderr.
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    setenv("NNPLUG_LOG_LEVEL", "off", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const size_t config_size = std::min<size_t>(size - 2, size_t{data[0]} << 8 | data[1]);
    const MemoryFile config(data + 2, config_size);
    std::vector<std::string> arguments;
    std::string current;
    for (size_t i = 2 + config_size; i < size && arguments.size() < 32; ++i) {
        if (data[i] != 0) {
            current += static_cast<char>(data[i]);
            continue;
        }
        arguments.push_back(current == "@config" ? config.path() : current);
        current.clear();
    }
    if (!current.empty()) arguments.push_back(current == "@config" ? config.path() : current);

    CLI::App app{"nnplug"};
    app.require_subcommand(1);
    const nnplug::cli::Command conformance = nnplug::cli::conformance_command(app);
    const nnplug::cli::Command info = nnplug::cli::info_command(app);
    std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // CLI11 parses from the back
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& error) {
        std::ostringstream out, err;
        app.exit(error, out, err);
        return 0;
    }
    if (info.subcommand->parsed()) {
        try {
            info.run();
        } catch (const std::exception& error) {
            std::fprintf(stderr, "fuzz_cli: contract broken: nnplug info threw: %s\n", error.what());
            std::abort();
        }
    }
    (void)conformance;  // parsed only
    return 0;
}
