#include "plugin_locator.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nnplug/escaped_text.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "install_layout.h"
#include "logging.h"
#include "spelling.h"

namespace nnplug {
namespace {
constexpr const char* kPrefix = "libnnplug_";
constexpr const char* kSuffix = ".so";

std::string mode_text(mode_t mode) {
    return fmt::format("{:04o}", mode & 07777);
}

// The rule for the plugin file and the folder holding it: owned by root or by us, and
// writable by nobody else, so that only they could have put code there.
std::string ownership_fault(const std::string& what, const struct stat& status) {
    const uid_t self = geteuid();
    if (status.st_uid != 0 && status.st_uid != self)
        return fmt::format("{} is owned by uid {}, neither root nor the current user (uid {})", what,
                           status.st_uid, self);
    if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return fmt::format("{} is writable by group or others (mode {})", what, mode_text(status.st_mode));
    return {};
}

// An open descriptor, closed when it goes.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd = -1) : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0) close(fd_);
    }
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    FileDescriptor& operator=(FileDescriptor&& other) noexcept {
        std::swap(fd_, other.fd_);
        return *this;
    }
    int get() const { return fd_; }

private:
    int fd_;
};

// A plugin name is a file name part, never a way out of the folder it is looked up in.
bool safe_name(const std::string& name) {
    return !name.empty() && name.find("..") == std::string::npos && name.find('\\') == std::string::npos &&
           std::none_of(name.begin(), name.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

// The rule for a folder above the plugin's, as ssh's StrictModes: owned by root or by us,
// and writable by no group or others unless the sticky bit (as on /tmp) keeps each entry
// to its owner.
std::string ancestor_fault(const std::string& where, const struct stat& status) {
    const uid_t self = geteuid();
    if (status.st_uid != 0 && status.st_uid != self)
        return fmt::format(
            "the folder '{}' above it is owned by uid {}, neither root nor the current user (uid {})", where,
            status.st_uid, self);
    if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (status.st_mode & S_ISVTX) == 0)
        return fmt::format(
            "the folder '{}' above it is writable by group or others without the sticky bit (mode {})", where,
            mode_text(status.st_mode));
    return {};
}

// Opens real_folder one component at a time from the root, never following a symlink,
// and checks each folder on the descriptor it opened: what is checked is what is used.
FileDescriptor open_folder(const std::filesystem::path& real_folder, std::string& fault) {
    FileDescriptor folder(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    std::filesystem::path reached = "/";
    for (const auto& part : real_folder.relative_path()) {
        struct stat status {};
        if (fstat(folder.get(), &status) != 0) {
            fault =
                fmt::format("the folder '{}' cannot be examined: {}", reached.string(), std::strerror(errno));
            return FileDescriptor();
        }
        if (fault = ancestor_fault(reached.string(), status); !fault.empty()) return FileDescriptor();
        FileDescriptor next(
            openat(folder.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        reached /= part;
        if (next.get() < 0) {
            fault =
                fmt::format("the folder '{}' cannot be opened: {}", reached.string(), std::strerror(errno));
            return FileDescriptor();
        }
        folder = std::move(next);
    }
    return folder;
}

// Opens `name` in the folder open as folder_fd, following symlinks only to other names of
// that folder (a versioned name); O_NONBLOCK so that a FIFO planted there cannot hang us.
FileDescriptor open_in_folder(int folder_fd, std::string name, std::string& fault) {
    constexpr int kMaxLinks = 8;
    for (int links = 0; links <= kMaxLinks; ++links) {
        FileDescriptor file(openat(folder_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (file.get() >= 0) return file;
        if (errno != ELOOP) {
            fault = fmt::format("it cannot be opened: {}", std::strerror(errno));
            return FileDescriptor();
        }
        char target[PATH_MAX];
        const ssize_t length = readlinkat(folder_fd, name.c_str(), target, sizeof target - 1);
        if (length <= 0) {
            fault = fmt::format("its symlink cannot be read: {}", std::strerror(errno));
            return FileDescriptor();
        }
        name.assign(target, static_cast<size_t>(length));
        if (name.find('/') != std::string::npos || name == "..") {
            fault = "symlink";  // worded by the caller, who knows the paths
            return FileDescriptor();
        }
    }
    fault = "it is a chain of more than 8 symlinks";
    return FileDescriptor();
}

// Opens `file`, found in `folder`, for loading, and checks it as ssh checks its key files:
// every check is an fstat of a descriptor opened from the root with openat, and the
// descriptor returned is the file checked, so nothing swapped in after the checks can be
// loaded. Returns an empty fault when it may be loaded; with a fault, the descriptor is
// still returned where the file could be opened (allow_insecure_plugins loads it).
FileDescriptor open_plugin(const std::filesystem::path& file, const std::filesystem::path& folder,
                           std::string& fault) {
    std::error_code failure;
    const auto real_folder = std::filesystem::canonical(folder, failure);
    if (failure) {
        fault = fmt::format("its folder '{}' cannot be resolved: {}", folder.string(), failure.message());
        return FileDescriptor();
    }
    FileDescriptor folder_fd = open_folder(real_folder, fault);
    if (folder_fd.get() < 0) return FileDescriptor();
    struct stat status {};
    if (fstat(folder_fd.get(), &status) != 0) {
        fault =
            fmt::format("its folder '{}' cannot be examined: {}", real_folder.string(), std::strerror(errno));
        return FileDescriptor();
    }
    const std::string folder_name = fmt::format("its folder '{}'", real_folder.string());
    FileDescriptor plugin = open_in_folder(folder_fd.get(), file.filename().string(), fault);
    if (fault == "symlink") {
        const auto real_file = std::filesystem::canonical(file, failure);
        fault = fmt::format("it is a symlink to '{}', which leaves its folder '{}'",
                            failure ? file.string() : real_file.string(), real_folder.string());
    }
    if (plugin.get() < 0) return plugin;
    if (fault = ownership_fault(folder_name, status); !fault.empty()) return plugin;
    if (fstat(plugin.get(), &status) != 0) {
        fault = fmt::format("it cannot be examined: {}", std::strerror(errno));
        return plugin;
    }
    if (!S_ISREG(status.st_mode)) {
        fault = "it is not a regular file";
        return FileDescriptor();
    }
    fault = ownership_fault("the plugin file", status);
    return plugin;
}
}  // namespace

std::string plugin_file_name(const std::string& backend) {
    return kPrefix + backend + kSuffix;
}

std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::filesystem::path>& configured) {
    std::vector<std::filesystem::path> path = configured;
    if (const char* from_environment = std::getenv("NNPLUG_PLUGIN_PATH")) {
        std::string list = from_environment;
        size_t start = 0;
        while (start <= list.size()) {
            const size_t end = std::min(list.find(':', start), list.size());
            if (end > start) path.emplace_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    path.push_back(bundled_plugin_folder());
    return path;
}

std::optional<std::string> backend_of_file_name(const std::string& file) {
    const std::string prefix = kPrefix, suffix = kSuffix;
    if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        return std::nullopt;
    return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

std::vector<std::string> available_backends(const std::vector<std::filesystem::path>& search_path) {
    std::vector<std::string> names;
    for (const auto& folder : search_path) {
        std::error_code ignored;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) {
            const auto name = backend_of_file_name(entry.path().filename().string());
            if (name && std::find(names.begin(), names.end(), *name) == names.end()) names.push_back(*name);
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

namespace {

// The longest backend name: its file, libnnplug_<name>.so, must fit a file name (NAME_MAX).
constexpr size_t kMaxBackendNameBytes =
    NAME_MAX - std::char_traits<char>::length(kPrefix) - std::char_traits<char>::length(kSuffix);

// The plugin file a backend name or path means, and the folder holding it; false with the
// reason in error when there is none. Looking never throws: a name the file system refuses
// (too long, a folder that cannot be searched) is a reason like any other.
bool find_plugin_file(const std::string& name, const std::vector<std::filesystem::path>& search_path,
                      std::filesystem::path& file, std::filesystem::path& folder, std::string& error) {
    std::error_code code;
    if (const size_t nul = name.find('\0'); nul != std::string::npos) {
        // The file system would read the name up to the NUL: another file.
        error = fmt::format("backend '{}' refused: it holds a NUL byte at byte {}", brief(name, PATH_MAX),
                            nul + 1);
        return false;
    }
    if (name.find('/') != std::string::npos) {
        file = name;
        const auto status = std::filesystem::status(file, code);
        if (status.type() == std::filesystem::file_type::not_found) {
            error = fmt::format("backend plugin file '{}' does not exist", brief(name, PATH_MAX));
        } else if (code) {
            error = fmt::format("backend plugin file '{}' cannot be looked at: {}", brief(name, PATH_MAX),
                                code.message());
        } else if (status.type() == std::filesystem::file_type::directory) {
            error = fmt::format("backend plugin file '{}' is a folder", brief(name, PATH_MAX));
        } else {
            folder = std::filesystem::absolute(file).parent_path();
            return true;
        }
        return false;
    }
    if (!safe_name(name)) {
        error = fmt::format(
            "backend name '{}' refused: a plugin name holds no '..', backslash or control "
            "character (a path to a file holds a '/')",
            brief(name));
        return false;
    }
    if (name.size() > kMaxBackendNameBytes) {
        error = fmt::format(
            "backend name '{}' refused: it is {} bytes; a backend name is at most {}, so that {} "
            "fits a file name ({} bytes)",
            brief(name), name.size(), kMaxBackendNameBytes, plugin_file_name("<name>"), NAME_MAX);
        return false;
    }
    for (const auto& candidate_folder : search_path) {
        const auto candidate = candidate_folder / plugin_file_name(name);
        if (std::filesystem::exists(candidate, code)) {
            file = candidate;
            folder = candidate_folder;
            return true;
        }
    }
    std::vector<std::string> folders;
    for (const auto& each : search_path) folders.push_back(each.string());
    const auto names = available_backends(search_path);
    error = fmt::format("backend '{}' not found{}: no {} in [{}]; available: [{}]", name,
                        did_you_mean(name, names), plugin_file_name(name), fmt::join(folders, ", "),
                        fmt::join(names, ", "));
    return false;
}

}  // namespace

std::optional<PluginLibrary> load_backend(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_path,
                                          bool allow_insecure, std::string& error) {
    const bool is_path = name.find('/') != std::string::npos;
    std::filesystem::path file, folder;
    if (!find_plugin_file(name, search_path, file, folder, error)) return std::nullopt;
    // Every check comes before the file is loaded: loading it runs its constructors.
    std::string fault;
    FileDescriptor plugin = open_plugin(file, folder, fault);
    if (!fault.empty()) {
        if (!allow_insecure) {
            error = fmt::format("plugin '{}' refused: {}; allow_insecure_plugins: true turns this check off",
                                file.string(), fault);
            return std::nullopt;
        }
        log().warn("plugin '{}' loaded although {}: allow_insecure_plugins is set", file.string(), fault);
        if (plugin.get() < 0) plugin = FileDescriptor(open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        struct stat status {};
        if (plugin.get() < 0 || fstat(plugin.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
            error = fmt::format("plugin '{}' cannot be opened as a regular file", file.string());
            return std::nullopt;
        }
    }
    auto library = PluginLibrary::load(plugin.get(), file, error);
    if (!library) return std::nullopt;
    const std::string declared = library->table().name;
    if (!is_path && declared != name) {
        error = fmt::format("'{}' calls itself '{}', not '{}'", file.string(), declared, name);
        return std::nullopt;
    }
    return library;
}

}  // namespace nnplug
