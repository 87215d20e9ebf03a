// A backend shared object loaded through Boost.DLL, with its table checked.
#pragma once

#define BOOST_DLL_USE_STD_FS
#include <nnplug/plugin.h>

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <optional>
#include <string>

namespace nnplug {

// Limits of a plugin table that no real plugin comes near. Past them a table is corrupt,
// and they bound how much a check reads. docs/plugin-abi.md lists them.
constexpr size_t kMaxPluginOps = 256;
constexpr size_t kMaxPluginOptions = 256;
constexpr size_t kMaxPluginNameBytes = 255;      // the plugin's name, op names, option keys
constexpr size_t kMaxPluginTextBytes = 4095;     // descriptions and default values
constexpr uint32_t kMaxPluginTableBytes = 4096;  // the struct_size of any table

// The SoC name a plugin's context reports, or "unknown" where it returns null (the ABI
// asks for a string; a null one must not reach a printf or a string compare).
const char* soc_name_of(const nnplug_plugin& plugin, void* context);

class PluginLibrary {
public:
    // Loads the file open as fd (through /proc/self/fd, so the file checked is the file
    // loaded) and reads its table; `file` names it in messages. On failure returns nullopt
    // and a one-line reason (not a loadable library, no entry symbol, an ABI version or size
    // it cannot read, a member that is missing, out of bounds or in unreadable memory). The
    // caller decides beforehand whether the file may be loaded at all: this runs its
    // constructors. The caller keeps fd and closes it after.
    static std::optional<PluginLibrary> load(int fd, const std::filesystem::path& file, std::string& error);

    const nnplug_plugin& table() const { return *table_; }
    const std::filesystem::path& file() const { return file_; }

private:
    PluginLibrary(boost::dll::shared_library library, const nnplug_plugin* table, std::filesystem::path file)
        : library_(std::move(library)), table_(table), file_(std::move(file)) {}

    boost::dll::shared_library library_;  // keeps the code of table_ mapped
    const nnplug_plugin* table_;
    std::filesystem::path file_;
};

}  // namespace nnplug
