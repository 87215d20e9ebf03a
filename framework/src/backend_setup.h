// Bringing up a loaded plugin: its options from the config, checked against the ones it
// declares, and one device context with its default stream.
#pragma once

#include <nnplug/plugin.h>

#include <string>
#include <vector>

#include "runtime_config.h"

namespace nnplug {

// The option pairs create() receives: the plugin's section of `backends:`, checked against
// the options it declares, plus the runtime's log level for a plugin that declares
// log_level and whose section sets none. False with a one-line error on an unknown option.
// The pairs point into config, which must outlive them.
bool backend_options(const nnplug_plugin& plugin, const RuntimeConfig& config,
                     std::vector<nnplug_option>& pairs, std::string& error);

// A device context and its default stream.
struct DeviceContext {
    void* context = nullptr;
    void* default_stream = nullptr;
};

// Creates device `index`'s context and default stream; false with a one-line error (and
// nothing left behind) when the plugin refuses. status receives the plugin's status.
bool create_device_context(const nnplug_plugin& plugin, const std::vector<nnplug_option>& options,
                           int32_t index, DeviceContext& device, nnplug_status& status, std::string& error);

// Destroys a context made by create_device_context, its default stream first.
void destroy_device_context(const nnplug_plugin& plugin, const DeviceContext& device);

}  // namespace nnplug
