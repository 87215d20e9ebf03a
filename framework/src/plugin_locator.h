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

// The backend name a file name stands for (libnnplug_<name>.so), or nullopt for another file.
std::optional<std::string> backend_of_file_name(const std::string& file_name);

// The search path, in order: the config's plugin_paths, $NNPLUG_PLUGIN_PATH
// (colon-separated), then the plugin folder of this installation.
std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::filesystem::path>& configured);

// The names of the backends found on the search path.
std::vector<std::string> available_backends(const std::vector<std::filesystem::path>& search_path);

// Loads backend `name` (or the file it names, when it contains a '/'). The file is opened
// once and, before any of its code runs, must be trusted as ssh's StrictModes trusts key
// files, checked with fstat on that descriptor and on each folder above it opened with
// openat from the root: the file and its folder owned by root or the effective user and
// writable by no group or others, every folder above them likewise unless sticky, and a
// symlink only to another name of its folder. The library loaded is that descriptor. With allow_insecure a
// failed check is a logged warning instead. A name holding '..' or a backslash is refused either way. A found
// file that is refused or is not a good plugin is an error, never skipped silently for a later one; error
// receives one line naming the file and the reason, for the caller to report.
std::optional<PluginLibrary> load_backend(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_path,
                                          bool allow_insecure, std::string& error);

}  // namespace nnplug
