// The process's runtime between aclInit and aclFinalize: reading the config, loading
// the backend, creating one context per device, and the lease every API call takes.
#include <acl/acl.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "install_layout.h"
#include "logging.h"
#include "plugin_locator.h"
#include "runtime.h"
#include "spelling.h"

namespace nnplug {
namespace {

std::shared_mutex runtime_mutex;   // shared by API calls, exclusive for aclInit/aclFinalize
// Set while aclFinalize waits for the lock: new calls are turned away instead of joining
// the readers, which would otherwise keep the writer waiting for as long as they call.
std::atomic<bool> finalizing{false};
std::unique_ptr<Runtime> runtime;  // null outside aclInit..aclFinalize

// A backend cannot drive more devices than this; a larger count is a broken plugin.
constexpr uint32_t kMaxDevices = 1024;

const char* environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

// Which file to read: the argument, $NNPLUG_CONFIG, the installed default, or none.
std::optional<std::filesystem::path> config_file(const char* argument) {
    if (argument != nullptr && *argument != '\0') return std::filesystem::path(argument);
    if (const char* from_environment = environment("NNPLUG_CONFIG")) return std::filesystem::path(from_environment);
    const auto bundled = bundled_default_config();
    if (std::filesystem::exists(bundled)) return bundled;
    return std::nullopt;
}

// Checks the config's options for the chosen backend against the ones the plugin declares.
bool check_backend_options(const nnplug_plugin& plugin, const std::vector<BackendOption>& options,
                           std::string& error) {
    std::vector<std::string> known;
    for (size_t i = 0; i < plugin.option_count; ++i) known.emplace_back(plugin.options[i].key);
    for (const auto& option : options) {
        if (std::find(known.begin(), known.end(), option.key) == known.end()) {
            error = fmt::format("{}: unknown option '{}' for backend '{}'{}", option.location, option.key,
                                plugin.name, did_you_mean(option.key, known));
            return false;
        }
    }
    return true;
}

// Destroys what was created so far when a later device fails to come up.
struct CreatedDevices {
    const nnplug_plugin& plugin;
    std::vector<DeviceContext> devices;
    ~CreatedDevices() {
        for (const DeviceContext& device : devices) {
            if (device.default_stream != nullptr) plugin.device->stream_destroy(device.context, device.default_stream);
            plugin.destroy(device.context);
        }
    }
    std::vector<DeviceContext> release() {
        std::vector<DeviceContext> kept;
        kept.swap(devices);
        return kept;
    }
};

// Creates the context and default stream of device `index`; false with the message set.
aclError create_device(const nnplug_plugin& plugin, const std::vector<nnplug_option>& options, int32_t index,
                       const RuntimeConfig& config, CreatedDevices& created) {
    void* context = nullptr;
    const nnplug_status status = plugin.create(options.data(), options.size(), index, &context);
    if (status != NNPLUG_OK) {
        const char* reason = plugin.last_error(nullptr);
        set_last_error("aclInit: backend '{}' refused its options ({}) for device {}: {}", plugin.name, config.source,
                       index, reason != nullptr ? reason : "no reason given");
        return acl_error_from(status);
    }
    created.devices.push_back({context, nullptr});
    if (plugin.device->stream_create(context, &created.devices.back().default_stream) != NNPLUG_OK) {
        const char* reason = plugin.last_error(context);
        set_last_error("aclInit: backend '{}' cannot create the default stream of device {}: {}", plugin.name, index,
                       reason != nullptr ? reason : "no reason given");
        return ACL_ERROR_RT_FAILURE;
    }
    return ACL_SUCCESS;
}

aclError initialize(const char* config_path) {
    RuntimeConfig config;
    if (const auto file = config_file(config_path)) {
        ConfigError error;
        if (!load_runtime_config(*file, config, error)) {
            set_last_error(error.message);
            return error.code;
        }
    }
    if (const char* backend = environment("NNPLUG_BACKEND")) config.backend = backend;
    if (const char* level = environment("NNPLUG_LOG_LEVEL")) config.log_level = level;
    if (const char* insecure = environment("NNPLUG_ALLOW_INSECURE_PLUGINS")) {
        const std::string_view value = insecure;
        if (value != "1" && value != "0" && value != "true" && value != "false") {
            set_last_error("aclInit: NNPLUG_ALLOW_INSECURE_PLUGINS is '{}'; expected 1, 0, true or false", value);
            return ACL_ERROR_INVALID_PARAM;
        }
        config.allow_insecure_plugins = value == "1" || value == "true";
    }
    const auto level = parse_log_level(config.log_level);
    if (!level) {
        set_last_error("aclInit: log level '{}' is not one of trace, debug, info, warn, error, off",
                       config.log_level);
        return ACL_ERROR_INVALID_PARAM;
    }
    log().set_level(*level);

    std::string error;
    auto library =
        load_backend(config.backend, plugin_search_path(config.plugin_paths), config.allow_insecure_plugins, error);
    if (!library) {
        set_last_error("aclInit: {}", error);
        return ACL_ERROR_FAILURE;
    }
    const nnplug_plugin& plugin = library->table();
    const auto& options = config.backend_options[plugin.name];
    if (!check_backend_options(plugin, options, error)) {
        set_last_error("aclInit: {}", error);
        return ACL_ERROR_PARSE_FILE;
    }
    std::vector<nnplug_option> pairs;
    for (const auto& option : options) pairs.push_back({option.key.c_str(), option.value.c_str()});
    // A plugin that declares a log_level option follows the runtime's level unless its
    // own section sets one, so one `log_level:` (or NNPLUG_LOG_LEVEL) governs both.
    const bool declares_log_level =
        std::any_of(plugin.options, plugin.options + plugin.option_count,
                    [](const nnplug_option_info& info) { return std::string_view(info.key) == "log_level"; });
    const bool sets_log_level = std::any_of(options.begin(), options.end(),
                                            [](const BackendOption& option) { return option.key == "log_level"; });
    if (declares_log_level && !sets_log_level) pairs.push_back({"log_level", config.log_level.c_str()});

    // Device 0 first: it tells how many devices the backend drives with these options.
    CreatedDevices created{plugin, {}};
    if (const aclError status = create_device(plugin, pairs, 0, config, created)) return status;
    const uint32_t count = plugin.device_count != nullptr ? plugin.device_count(created.devices[0].context) : 1;
    if (count == 0 || count > kMaxDevices) {
        set_last_error("aclInit: backend '{}' reports {} devices; expected 1 to {}", plugin.name, count, kMaxDevices);
        return ACL_ERROR_FAILURE;
    }
    for (uint32_t index = 1; index < count; ++index)
        if (const aclError status = create_device(plugin, pairs, static_cast<int32_t>(index), config, created))
            return status;
    // description is optional, and a null from a plugin must not fail the whole aclInit here
    const char* soc = plugin.soc_name(created.devices[0].context);
    log().info("backend '{}' ({}, SoC {}, {} device(s)) from {}; config {}", plugin.name,
               plugin.description != nullptr ? plugin.description : "no description", soc != nullptr ? soc : "?",
               count, library->file().string(), config.source);
    runtime = std::make_unique<Runtime>(std::move(config), std::move(*library), created.release());
    return ACL_SUCCESS;
}

}  // namespace

RuntimeLease::RuntimeLease(const char* api) {
    if (finalizing.load(std::memory_order_acquire)) {
        set_last_error("{}: aclFinalize is running", api);
        return;
    }
    lock_ = std::shared_lock(runtime_mutex);
    runtime_ = runtime.get();
    if (runtime_ == nullptr) set_last_error("{}: aclInit has not been called", api);
}

}  // namespace nnplug

extern "C" {

aclError aclInit(const char* configPath) {
    return nnplug::guarded("aclInit", [&] {
        std::unique_lock lock(nnplug::runtime_mutex);
        if (nnplug::runtime) {
            nnplug::set_last_error("aclInit: already initialized; call aclFinalize first");
            return ACL_ERROR_REPEAT_INITIALIZE;
        }
        return nnplug::initialize(configPath);
    });
}

aclError aclFinalize(void) {
    return nnplug::guarded("aclFinalize", [&] {
        nnplug::finalizing.store(true, std::memory_order_release);
        struct Reopen {  // whatever happens below, later calls are let in again
            ~Reopen() { nnplug::finalizing.store(false, std::memory_order_release); }
        } reopen;
        std::unique_lock lock(nnplug::runtime_mutex);
        if (!nnplug::runtime) {
            nnplug::set_last_error("aclFinalize: not initialized (aclInit not called, or already finalized)");
            return ACL_ERROR_REPEAT_FINALIZE;
        }
        nnplug::runtime.reset();
        return ACL_SUCCESS;
    });
}

const char* aclGetRecentErrMsg(void) { return nnplug::last_error(); }

}  // extern "C"
