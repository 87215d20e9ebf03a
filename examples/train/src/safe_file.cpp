#include "safe_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <nnplug/escaped_text.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <random>
#include <stdexcept>

namespace train {
namespace {

[[noreturn]] void fail_errno(const std::string& what, const std::filesystem::path& path) {
    const int error = errno;
    throw std::runtime_error(
        fmt::format("cannot {} '{}': {}", what, nnplug::escaped(path.string()), std::strerror(error)));
}

// Closes a descriptor when it goes out of scope.
struct Descriptor {
    int fd = -1;
    explicit Descriptor(int descriptor) : fd(descriptor) {}
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

void write_all(int fd, const std::string& bytes, const std::filesystem::path& path) {
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_errno("write", path);
        written += static_cast<size_t>(n);
    }
}

// A fresh file `.<name>.<random>.tmp` in the folder; its name. The name is cut so that the
// temporary's fits a file name (NAME_MAX) whenever the name itself does.
std::string create_temporary(int folder_fd, const std::string& name, int& fd) {
    constexpr size_t kDecoration = 22;  // the dots, 16 hex digits and "tmp"
    const std::string stem = name.substr(0, NAME_MAX - kDecoration);
    std::random_device seed;
    std::mt19937_64 random(seed());
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string temporary = fmt::format(".{}.{:016x}.tmp", stem, random());
        fd = ::openat(folder_fd, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0644);
        if (fd >= 0) return temporary;
        if (errno != EEXIST) return temporary;
    }
    errno = EEXIST;
    return {};
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
    const auto folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    const std::string name = path.filename().string();
    const Descriptor folder_fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (folder_fd.fd < 0) fail_errno("open the folder of", path);
    int fd = -1;
    const std::string temporary = create_temporary(folder_fd.fd, name, fd);
    if (fd < 0) fail_errno("create a temporary file beside", path);
    try {
        const Descriptor file(fd);
        write_all(fd, bytes, path);
        if (::fsync(fd) != 0) fail_errno("fsync", path);
    } catch (...) {
        ::unlinkat(folder_fd.fd, temporary.c_str(), 0);
        throw;
    }
    if (::renameat(folder_fd.fd, temporary.c_str(), folder_fd.fd, name.c_str()) != 0) {
        const int error = errno;
        ::unlinkat(folder_fd.fd, temporary.c_str(), 0);
        errno = error;
        fail_errno("rename into place", path);
    }
    // The rename itself is durable once the folder is synced.
    ::fsync(folder_fd.fd);
}

std::string read_regular_file(const std::filesystem::path& path, int64_t max_bytes, const std::string& what) {
    const std::string shown = nnplug::escaped(path.string());
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    const Descriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (file.fd < 0)
        throw std::runtime_error(fmt::format("cannot open {} '{}': {}", what, shown, std::strerror(errno)));
    struct stat status {};
    if (::fstat(file.fd, &status) != 0)
        throw std::runtime_error(fmt::format("cannot stat {} '{}': {}", what, shown, std::strerror(errno)));
    if (!S_ISREG(status.st_mode))
        throw std::runtime_error(fmt::format("{} '{}' is not a regular file ({})", what, shown,
                                             S_ISFIFO(status.st_mode)   ? "a FIFO"
                                             : S_ISCHR(status.st_mode)  ? "a character device"
                                             : S_ISBLK(status.st_mode)  ? "a block device"
                                             : S_ISDIR(status.st_mode)  ? "a folder"
                                             : S_ISSOCK(status.st_mode) ? "a socket"
                                                                        : "not a plain file"));
    if (status.st_size > max_bytes)
        throw std::runtime_error(fmt::format("{} '{}' is {} bytes; the largest accepted is {} bytes", what,
                                             shown, static_cast<int64_t>(status.st_size), max_bytes));
    std::string bytes(static_cast<size_t>(status.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw std::runtime_error(
                fmt::format("cannot read {} '{}': {}", what, shown, std::strerror(errno)));
        if (n == 0) break;  // shrunk while read
        done += static_cast<size_t>(n);
    }
    bytes.resize(done);
    return bytes;
}

}  // namespace train
