// nnplug's YAML configuration: which backend, per-op routing and fallback, logging, plugin
// search paths, plugin trust and per-backend options.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nnplug {

// A backend option as written in the file, with its position for messages.
struct BackendOption {
    std::string key;
    std::string value;
    std::string location;  // "file:line:column"
};

struct RuntimeConfig {
    std::string source = "<built-in default>";
    std::string backend =
        "cpu_tbb";  // a name, or a path (it holds a '/') made absolute against the file's folder
    std::string log_level = "warn";
    std::vector<std::filesystem::path> plugin_paths;  // made absolute against the file's folder
    bool allow_insecure_plugins = false;              // skip the ownership and permission checks
    std::map<std::string, std::vector<BackendOption>> backend_options;
    // Per-op routing: an op's aclnn name -> the backend that runs it instead of `backend`
    // (a name or a path, like `backend`).
    std::map<std::string, std::string> op_backends;
    // Where a call goes when its backend lacks the op, did not load or refuses the call:
    // a backend (name or path), or "" (the default, written `none`) for nowhere: the call fails.
    std::string fallback;
};

struct ConfigError {
    int code = 0;  // an aclError
    std::string message;
};

// The largest config file read (1 MiB); a larger one is refused before it is read.
constexpr size_t kMaxConfigBytes = size_t{1} << 20;

// Reads and checks a config file. Returns false and fills error on a missing file
// (ACL_ERROR_INVALID_FILE) or on bad YAML, an unknown key or a bad value
// (ACL_ERROR_PARSE_FILE, with file, line, column and key in the message).
bool load_runtime_config(const std::filesystem::path& path, RuntimeConfig& config, ConfigError& error);

// The config aclInit(argument) runs with: the file named by argument, else $NNPLUG_CONFIG,
// else the installed default.yaml, else the built-in defaults; then NNPLUG_BACKEND,
// NNPLUG_LOG_LEVEL and NNPLUG_ALLOW_INSECURE_PLUGINS override their keys. False with the
// error (its message starts "aclInit: ") when the file or an override is bad.
bool load_effective_config(const char* argument, RuntimeConfig& config, ConfigError& error);

}  // namespace nnplug
