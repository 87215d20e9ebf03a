#include "plugin_locator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "install_layout.h"
#include "spelling.h"

namespace nnplug {
namespace {
constexpr const char* kPrefix = "libnnplug_";
constexpr const char* kSuffix = ".so";
}  // namespace

std::string plugin_file_name(const std::string& backend) { return kPrefix + backend + kSuffix; }

std::vector<std::filesystem::path> plugin_search_path(
    const std::vector<std::filesystem::path>& configured) {
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

std::vector<std::string> available_backends(const std::vector<std::filesystem::path>& search_path) {
    std::vector<std::string> names;
    const std::string prefix = kPrefix, suffix = kSuffix;
    for (const auto& folder : search_path) {
        std::error_code ignored;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) {
            const std::string file = entry.path().filename().string();
            if (file.size() > prefix.size() + suffix.size() && file.rfind(prefix, 0) == 0 &&
                file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
                std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
                if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
            }
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::optional<PluginLibrary> load_backend(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_path,
                                          std::string& error) {
    std::filesystem::path file;
    if (name.find('/') != std::string::npos) {
        file = name;
        if (!std::filesystem::exists(file)) {
            error = fmt::format("backend plugin file '{}' does not exist", name);
            return std::nullopt;
        }
    } else {
        for (const auto& folder : search_path) {
            const auto candidate = folder / plugin_file_name(name);
            if (std::filesystem::exists(candidate)) {
                file = candidate;
                break;
            }
        }
        if (file.empty()) {
            std::vector<std::string> folders;
            for (const auto& folder : search_path) folders.push_back(folder.string());
            const auto names = available_backends(search_path);
            error = fmt::format("backend '{}' not found{}: no {} in [{}]; available: [{}]", name,
                                did_you_mean(name, names), plugin_file_name(name),
                                fmt::join(folders, ", "), fmt::join(names, ", "));
            return std::nullopt;
        }
    }
    auto library = PluginLibrary::load(file, error);
    if (!library) return std::nullopt;
    const std::string declared = library->table().name;
    if (name.find('/') == std::string::npos && declared != name) {
        error = fmt::format("'{}' calls itself '{}', not '{}'", file.string(), declared, name);
        return std::nullopt;
    }
    return library;
}

}  // namespace nnplug
