// What this installation of nnplug offers, as `nnplug info` prints it: the config aclInit
// would read, the plugin search path, every plugin file found there (described, or
// refused with the reason) and the backend each op's calls go to. Part of libnnplug for
// the project's own tools; not a stable interface for programs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nnplug {

struct PluginReport {
    std::string path;     // the file
    std::string refused;  // why it cannot be used; empty when it loaded and came up
    // Filled once the table was read:
    std::string name, description;
    uint32_t abi_version = 0;
    std::vector<std::string> ops;     // aclnn names
    std::vector<std::string> dtypes;  // of device 0 with the config's options
    std::string soc;
    uint32_t device_count = 0;
    std::string memory;  // "host" or "device"
};

struct OpRouteReport {
    std::string op;       // aclnn name
    std::string backend;  // where its calls go first
    std::string note;     // what happens when that backend cannot take a call, or why it cannot
};

struct Inventory {
    std::string config_file;   // "<built-in default>" when none is read
    std::string config_error;  // why the config cannot be used; the rest is then partial
    std::string backend;       // the device's backend, as configured
    std::string fallback;      // "none" or a backend
    std::vector<std::string> search_path;
    std::vector<PluginReport> plugins;  // in search order, then the ones named by path
    std::vector<OpRouteReport> routes;
};

// Reads the config as aclInit(config_path) would and looks at every plugin without
// starting the runtime (each is loaded only after the trust checks aclInit applies).
__attribute__((visibility("default"))) Inventory take_inventory(const char* config_path);

}  // namespace nnplug
