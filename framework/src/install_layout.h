// Where the installed (or built) runtime keeps its plugins and default config,
// found relative to libnnplug itself so that no environment variable is needed.
#pragma once

#include <filesystem>

namespace nnplug {

std::filesystem::path library_folder();          // the folder holding libnnplug.so
std::filesystem::path bundled_plugin_folder();   // <libdir>/nnplug/plugins
std::filesystem::path bundled_default_config();  // <datadir>/nnplug/configs/default.yaml

}  // namespace nnplug
