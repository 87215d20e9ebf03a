// Finds backend plugins by name in the search path and loads them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "plugin_library.h"

namespace nnplug {

// The file a backend called name lives in: libnnplug_<name>.so.
std::string plugin_file_name(const std::string& backend);

// The search path, in order: the config's plugin_paths, $NNPLUG_PLUGIN_PATH
// (colon-separated), then the plugin folder of this installation.
std::vector<std::filesystem::path> plugin_search_path(
    const std::vector<std::filesystem::path>& configured);

// The names of the backends found on the search path.
std::vector<std::string> available_backends(const std::vector<std::filesystem::path>& search_path);

// Loads backend `name` (or the file it names, when it contains a '/'). A found file that
// is not a good plugin is an error, never skipped silently for a later one.
std::optional<PluginLibrary> load_backend(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_path,
                                          std::string& error);

}  // namespace nnplug
