#include "plugin_library.h"

#include <fmt/format.h>

#include <cstring>

namespace nnplug {
namespace {

// The first member every version of the table keeps: what we read before trusting more.
struct TableHeader {
    uint32_t abi_version;
    uint32_t struct_size;
};

bool table_complete(const nnplug_plugin& table, std::string& missing) {
    const std::pair<const void*, const char*> required[] = {
        {table.name, "name"},
        {reinterpret_cast<const void*>(table.create), "create"},
        {reinterpret_cast<const void*>(table.destroy), "destroy"},
        {reinterpret_cast<const void*>(table.soc_name), "soc_name"},
        {reinterpret_cast<const void*>(table.dtype_mask), "dtype_mask"},
        {reinterpret_cast<const void*>(table.last_error), "last_error"},
        {reinterpret_cast<const void*>(table.device.malloc), "device.malloc"},
        {reinterpret_cast<const void*>(table.device.free), "device.free"},
        {reinterpret_cast<const void*>(table.device.memcpy), "device.memcpy"},
        {reinterpret_cast<const void*>(table.device.memset), "device.memset"},
        {reinterpret_cast<const void*>(table.device.stream_create), "device.stream_create"},
        {reinterpret_cast<const void*>(table.device.stream_destroy), "device.stream_destroy"},
        {reinterpret_cast<const void*>(table.device.stream_synchronize), "device.stream_synchronize"},
    };
    for (const auto& [pointer, name] : required) {
        if (pointer == nullptr) {
            missing = name;
            return false;
        }
    }
    for (size_t i = 0; i < table.op_count; ++i) {
        if (table.ops[i].workspace_size == nullptr || table.ops[i].launch == nullptr) {
            missing = fmt::format("ops[{}].workspace_size or ops[{}].launch", i, i);
            return false;
        }
    }
    if (table.op_count > 0 && table.ops == nullptr) {
        missing = "ops";
        return false;
    }
    return true;
}

}  // namespace

std::optional<PluginLibrary> PluginLibrary::load(const std::filesystem::path& file, std::string& error) {
    boost::dll::shared_library library;
    try {
        library.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& exception) {
        error = fmt::format("'{}' is not a loadable plugin: {}", file.string(), exception.what());
        return std::nullopt;
    }
    if (!library.has(NNPLUG_PLUGIN_ENTRY_NAME)) {
        error = fmt::format("'{}' is not an nnplug plugin: it does not export '{}'", file.string(),
                            NNPLUG_PLUGIN_ENTRY_NAME);
        return std::nullopt;
    }
    const auto entry = library.get<const nnplug_plugin*()>(NNPLUG_PLUGIN_ENTRY_NAME);
    const nnplug_plugin* table = nullptr;
    try {
        table = entry();
    } catch (...) {
        error = fmt::format("'{}': its entry symbol threw an exception", file.string());
        return std::nullopt;
    }
    if (table == nullptr) {
        error = fmt::format("'{}': its entry symbol returned no table", file.string());
        return std::nullopt;
    }
    TableHeader header;
    std::memcpy(&header, table, sizeof header);
    if (header.abi_version != NNPLUG_PLUGIN_ABI_VERSION) {
        error = fmt::format("'{}' was built for plugin ABI version {}, this runtime speaks version {}",
                            file.string(), header.abi_version, NNPLUG_PLUGIN_ABI_VERSION);
        return std::nullopt;
    }
    if (header.struct_size != sizeof(nnplug_plugin)) {
        error = fmt::format("'{}' declares a plugin table of {} bytes, this runtime expects {}",
                            file.string(), header.struct_size, sizeof(nnplug_plugin));
        return std::nullopt;
    }
    std::string missing;
    if (!table_complete(*table, missing)) {
        error = fmt::format("'{}': its plugin table has no '{}'", file.string(), missing);
        return std::nullopt;
    }
    return PluginLibrary(std::move(library), table, file);
}

}  // namespace nnplug
