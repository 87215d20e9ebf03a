// The process's runtime between aclInit and aclFinalize: reading the config, loading
// the backend, creating one context per device, and the lease every API call takes.
#include <acl/acl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include "logging.h"
#include "plugin_locator.h"
#include "runtime.h"

namespace nnplug {
namespace {

std::shared_mutex runtime_mutex;  // shared by API calls, exclusive for aclInit/aclFinalize
// Set while aclFinalize waits for the lock: new calls are turned away instead of joining
// the readers, which would otherwise keep the writer waiting for as long as they call.
std::atomic<bool> finalizing{false};
std::unique_ptr<Runtime> runtime;  // null outside aclInit..aclFinalize
// Set in the child of a fork() of a process with a runtime. The child has the runtime's
// memory but none of its threads (atlas_emu's stream workers, oneTBB's): a call that waited
// for them would wait forever, so every call is refused until aclInit is called again.
std::atomic<bool> forked{false};
// The process that made the runtime, for the message.
std::atomic<pid_t> runtime_process{0};

extern "C" void note_fork_in_child() {
    if (runtime_process.load(std::memory_order_relaxed) != 0) forked.store(true, std::memory_order_relaxed);
}

// In the child of a fork: lets go of the parent's runtime without destroying it (its
// destructor would wait for threads that do not exist here; its memory is the parent's
// copy and leaks). Whether it was.
bool abandon_forked_runtime() {
    if (!forked.load(std::memory_order_relaxed)) return false;
    (void)runtime.release();
    runtime_process.store(0, std::memory_order_relaxed);
    forked.store(false, std::memory_order_relaxed);
    return true;
}

// A backend cannot drive more devices than this; a larger count is a broken plugin.
constexpr uint32_t kMaxDevices = 1024;

// Destroys what was created so far when a later device fails to come up.
struct CreatedDevices {
    const nnplug_plugin& plugin;
    std::vector<DeviceContext> devices;
    ~CreatedDevices() {
        for (const DeviceContext& device : devices) destroy_device_context(plugin, device);
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
    DeviceContext device;
    nnplug_status status = NNPLUG_OK;
    std::string error;
    if (!create_device_context(plugin, options, index, device, status, error)) {
        set_last_error("aclInit: {} (config {})", error, config.source);
        return acl_error_from(status);
    }
    created.devices.push_back(device);
    return ACL_SUCCESS;
}

aclError initialize(const char* config_path) {
    RuntimeConfig config;
    ConfigError failure;
    if (!load_effective_config(config_path, config, failure)) {
        set_last_error(failure.message);
        return failure.code;
    }
    log().set_level(*parse_log_level(config.log_level));

    std::string error;
    const auto search_path = plugin_search_path(config.plugin_paths);
    auto library = load_backend(config.backend, search_path, config.allow_insecure_plugins, error);
    if (!library) {
        log().error("{}", error);
        set_last_error("aclInit: {}", error);
        return ACL_ERROR_FAILURE;
    }
    const nnplug_plugin& plugin = library->table();
    std::vector<nnplug_option> pairs;
    if (!backend_options(plugin, config, pairs, error)) {
        set_last_error("aclInit: {}", error);
        return ACL_ERROR_PARSE_FILE;
    }

    // Device 0 first: it tells how many devices the backend drives with these options.
    CreatedDevices created{plugin, {}};
    if (const aclError status = create_device(plugin, pairs, 0, config, created)) return status;
    const uint32_t count =
        plugin.device_count != nullptr ? plugin.device_count(created.devices[0].context) : 1;
    if (count == 0 || count > kMaxDevices) {
        set_last_error("aclInit: backend '{}' reports {} devices; expected 1 to {}", plugin.name, count,
                       kMaxDevices);
        return ACL_ERROR_FAILURE;
    }
    for (uint32_t index = 1; index < count; ++index)
        if (const aclError status =
                create_device(plugin, pairs, static_cast<int32_t>(index), config, created))
            return status;
    // description is optional, and a null from a plugin must not fail the whole aclInit here
    const char* soc = soc_name_of(plugin, created.devices[0].context);
    log().info("backend '{}' ({}, SoC {}, {} device(s)) from {}; config {}", plugin.name,
               plugin.description != nullptr ? plugin.description : "no description",
               soc != nullptr ? soc : "?", count, library->file().string(), config.source);
    // The backends ops are routed to: one that cannot serve is reported and left out.
    auto routing = std::make_unique<OpRouting>(config, *library, search_path);
    runtime = std::make_unique<Runtime>(std::move(config), std::move(*library), created.release(),
                                        std::move(routing));
    static const bool watching_forks = pthread_atfork(nullptr, nullptr, note_fork_in_child) == 0;
    (void)watching_forks;
    runtime_process.store(getpid(), std::memory_order_relaxed);
    return ACL_SUCCESS;
}

}  // namespace

RuntimeLease::RuntimeLease(const char* api) {
    if (forked.load(std::memory_order_relaxed)) {  // before the lock, which a parent's thread may hold
        set_last_error(
            "{}: the runtime was initialized in process {}, and this is a child of it made by fork(); "
            "call aclInit again in the child (aclFinalize first is not needed)",
            api, runtime_process.load(std::memory_order_relaxed));
        return;
    }
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
        nnplug::abandon_forked_runtime();
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
        if (nnplug::abandon_forked_runtime()) return ACL_SUCCESS;  // the parent's runtime is the parent's
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
        nnplug::runtime_process.store(0, std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

const char* aclGetRecentErrMsg(void) {
    return nnplug::last_error();
}

}  // extern "C"
