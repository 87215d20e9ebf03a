#include "plugin_locator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

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

std::string stat_fault(const std::string& what, const std::filesystem::path& path, struct stat& status) {
    if (lstat(path.c_str(), &status) == 0) return {};
    return fmt::format("{} '{}' cannot be examined: {}", what, path.string(), std::strerror(errno));
}

// A plugin name is a file name part, never a way out of the folder it is looked up in.
bool safe_name(const std::string& name) {
    return !name.empty() && name.find("..") == std::string::npos && name.find('\\') == std::string::npos &&
           std::none_of(name.begin(), name.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

// Why `file`, found in `folder`, must not be loaded, or an empty string when it may be;
// real_file receives the file with every symlink resolved, which is what gets opened, so
// a symlink swapped after the checks cannot lead elsewhere. Nothing is opened here.
std::string trust_fault(const std::filesystem::path& file, const std::filesystem::path& folder,
                        std::filesystem::path& real_file) {
    std::error_code failure;
    const auto real_folder = std::filesystem::canonical(folder, failure);
    if (failure)
        return fmt::format("its folder '{}' cannot be resolved: {}", folder.string(), failure.message());
    real_file = std::filesystem::canonical(file, failure);
    if (failure) {
        real_file = file;
        return fmt::format("it cannot be resolved: {}", failure.message());
    }
    // A symlink may name another file of its own folder (a versioned name), never reach
    // out to one the checks below did not cover.
    if (real_file.parent_path() != real_folder)
        return fmt::format("it is a symlink to '{}', which leaves its folder '{}'", real_file.string(),
                           real_folder.string());

    struct stat status {};
    if (auto fault = stat_fault("the plugin file", real_file, status); !fault.empty()) return fault;
    if (!S_ISREG(status.st_mode)) return "it is not a regular file";
    if (auto fault = ownership_fault("the plugin file", status); !fault.empty()) return fault;
    const std::string folder_name = fmt::format("its folder '{}'", real_folder.string());
    if (auto fault = stat_fault("its folder", real_folder, status); !fault.empty()) return fault;
    if (auto fault = ownership_fault(folder_name, status); !fault.empty()) return fault;
    // Above it, a folder others may write to could have its entries swapped, unless the
    // sticky bit (as on /tmp) keeps each entry to its owner.
    for (auto ancestor = real_folder; ancestor != ancestor.parent_path();) {
        ancestor = ancestor.parent_path();
        if (auto fault = stat_fault("the folder", ancestor, status); !fault.empty()) return fault;
        if ((status.st_mode & S_IWOTH) != 0 && (status.st_mode & S_ISVTX) == 0)
            return fmt::format(
                "the folder '{}' above it is writable by others without the sticky bit (mode {})",
                ancestor.string(), mode_text(status.st_mode));
    }
    return {};
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

std::optional<PluginLibrary> load_backend(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_path,
                                          bool allow_insecure, std::string& error) {
    const bool is_path = name.find('/') != std::string::npos;
    std::filesystem::path file, folder;
    if (is_path) {
        file = name;
        if (!std::filesystem::exists(file)) {
            error = fmt::format("backend plugin file '{}' does not exist", name);
            return std::nullopt;
        }
        if (std::filesystem::is_directory(file)) {
            error = fmt::format("backend plugin file '{}' is a folder", name);
            return std::nullopt;
        }
        folder = std::filesystem::absolute(file).parent_path();
    } else {
        if (!safe_name(name)) {
            error = fmt::format(
                "backend name '{}' refused: a plugin name holds no '..', backslash or control "
                "character (a path to a file holds a '/')",
                name);
            return std::nullopt;
        }
        for (const auto& candidate_folder : search_path) {
            const auto candidate = candidate_folder / plugin_file_name(name);
            if (std::filesystem::exists(candidate)) {
                file = candidate;
                folder = candidate_folder;
                break;
            }
        }
        if (file.empty()) {
            std::vector<std::string> folders;
            for (const auto& each : search_path) folders.push_back(each.string());
            const auto names = available_backends(search_path);
            error = fmt::format("backend '{}' not found{}: no {} in [{}]; available: [{}]", name,
                                did_you_mean(name, names), plugin_file_name(name), fmt::join(folders, ", "),
                                fmt::join(names, ", "));
            return std::nullopt;
        }
    }
    // Every check comes before the file is opened: opening it runs its constructors.
    std::filesystem::path real_file = file;
    if (const std::string fault = trust_fault(file, folder, real_file); !fault.empty()) {
        if (!allow_insecure) {
            error = fmt::format("plugin '{}' refused: {}; allow_insecure_plugins: true turns this check off",
                                file.string(), fault);
            return std::nullopt;
        }
        log().warn("plugin '{}' loaded although {}: allow_insecure_plugins is set", file.string(), fault);
    }
    auto library = PluginLibrary::load(real_file, error);
    if (!library) return std::nullopt;
    const std::string declared = library->table().name;
    if (!is_path && declared != name) {
        error = fmt::format("'{}' calls itself '{}', not '{}'", file.string(), declared, name);
        return std::nullopt;
    }
    return library;
}

}  // namespace nnplug
