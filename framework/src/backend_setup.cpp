#include "backend_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "spelling.h"

namespace nnplug {

bool backend_options(const nnplug_plugin& plugin, const RuntimeConfig& config,
                     std::vector<nnplug_option>& pairs, std::string& error) {
    static const std::vector<BackendOption> kNone;
    const auto section = config.backend_options.find(plugin.name);
    const auto& options = section != config.backend_options.end() ? section->second : kNone;
    std::vector<std::string> known;
    for (size_t i = 0; i < plugin.option_count; ++i) known.emplace_back(plugin.options[i].key);
    for (const auto& option : options) {
        if (std::find(known.begin(), known.end(), option.key) == known.end()) {
            error = fmt::format("{}: unknown option '{}' for backend '{}'{}", option.location, option.key,
                                plugin.name, did_you_mean(option.key, known));
            return false;
        }
    }
    pairs.clear();
    for (const auto& option : options) pairs.push_back({option.key.c_str(), option.value.c_str()});
    // A plugin that declares a log_level option follows the runtime's level unless its
    // own section sets one, so one `log_level:` (or NNPLUG_LOG_LEVEL) governs both.
    const bool declares_log_level = std::find(known.begin(), known.end(), "log_level") != known.end();
    const bool sets_log_level = std::any_of(options.begin(), options.end(), [](const BackendOption& option) {
        return option.key == "log_level";
    });
    if (declares_log_level && !sets_log_level) pairs.push_back({"log_level", config.log_level.c_str()});
    return true;
}

bool create_device_context(const nnplug_plugin& plugin, const std::vector<nnplug_option>& options,
                           int32_t index, DeviceContext& device, nnplug_status& status, std::string& error) {
    void* context = nullptr;
    status = plugin.create(options.data(), options.size(), index, &context);
    if (status != NNPLUG_OK) {
        const char* reason = plugin.last_error(nullptr);
        error = fmt::format("backend '{}' refused its options for device {}: {}", plugin.name, index,
                            reason != nullptr ? reason : "no reason given");
        return false;
    }
    void* stream = nullptr;
    status = plugin.device->stream_create(context, &stream);
    if (status != NNPLUG_OK) {
        const char* reason = plugin.last_error(context);
        error = fmt::format("backend '{}' cannot create the default stream of device {}: {}", plugin.name,
                            index, reason != nullptr ? reason : "no reason given");
        plugin.destroy(context);
        return false;
    }
    device = {context, stream};
    return true;
}

void destroy_device_context(const nnplug_plugin& plugin, const DeviceContext& device) {
    if (device.default_stream != nullptr)
        plugin.device->stream_destroy(device.context, device.default_stream);
    plugin.destroy(device.context);
}

}  // namespace nnplug
