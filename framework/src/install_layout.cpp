#include "install_layout.h"

#include <dlfcn.h>

namespace nnplug {

std::filesystem::path library_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&library_folder), &info) == 0 || info.dli_fname == nullptr) return {};
    std::error_code ignored;
    const auto library = std::filesystem::canonical(info.dli_fname, ignored);
    return ignored ? std::filesystem::path(info.dli_fname).parent_path() : library.parent_path();
}

// NNPLUG_PLUGIN_SUBDIR and NNPLUG_CONFIG_FROM_LIBDIR are set by the build, relative to the
// library folder, identical in the build tree and the install tree.
std::filesystem::path bundled_plugin_folder() {
    return library_folder() / NNPLUG_PLUGIN_SUBDIR;
}

std::filesystem::path bundled_default_config() {
    return (library_folder() / NNPLUG_CONFIG_FROM_LIBDIR / "default.yaml").lexically_normal();
}

}  // namespace nnplug
