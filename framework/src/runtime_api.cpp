// The acl* runtime calls of acl/acl_base.h and acl/acl_rt.h.
#include <acl/acl.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "backend_registry.h"
#include "install_layout.h"
#include "logging.h"
#include "runtime.h"
#include "spelling.h"

namespace nnplug {
namespace {

std::shared_mutex runtime_mutex;   // shared by API calls, exclusive for aclInit/aclFinalize
std::unique_ptr<Runtime> runtime;  // null outside aclInit..aclFinalize
std::atomic<int32_t> current_device{0};  // set from any thread under the shared lock

constexpr uint32_t kDeviceCount = 1;

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
    const auto level = parse_log_level(config.log_level);
    if (!level) {
        set_last_error("aclInit: log level '{}' is not one of trace, debug, info, warn, error, off",
                       config.log_level);
        return ACL_ERROR_INVALID_PARAM;
    }
    log().set_level(*level);

    std::string error;
    auto library = load_backend(config.backend, plugin_search_path(config.plugin_paths), error);
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
    void* context = nullptr;
    char reason[512] = "";
    const nnplug_status status = plugin.create(pairs.data(), pairs.size(), &context, reason, sizeof reason);
    if (status != NNPLUG_OK) {
        set_last_error("aclInit: backend '{}' refused its options ({}): {}", plugin.name, config.source,
                       reason);
        return status == NNPLUG_ERR_INVALID_ARGUMENT ? ACL_ERROR_INVALID_PARAM : acl_error_from(status);
    }
    void* default_stream = nullptr;
    if (plugin.device.stream_create(context, &default_stream) != NNPLUG_OK) {
        set_last_error("aclInit: backend '{}' cannot create its default stream: {}", plugin.name,
                       plugin.last_error(context));
        plugin.destroy(context);
        return ACL_ERROR_RT_FAILURE;
    }
    log().info("backend '{}' ({}, SoC {}) from {}; config {}", plugin.name, plugin.description,
               plugin.soc_name(context), library->file().string(), config.source);
    runtime = std::make_unique<Runtime>(std::move(config), std::move(*library), context, default_stream);
    current_device = 0;
    return ACL_SUCCESS;
}

template <typename Call>
aclError guarded(const char* api, Call&& call) noexcept {
    try {
        return call();
    } catch (const std::bad_alloc&) {
        set_last_error("{}: out of host memory", api);
        return ACL_ERROR_BAD_ALLOC;
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", api, exception.what());
        return ACL_ERROR_INTERNAL_ERROR;
    }
}

aclError check_device(const char* api, int32_t device) {
    if (device < 0 || static_cast<uint32_t>(device) >= kDeviceCount) {
        set_last_error("{}: device {} does not exist; there are {} device(s)", api, device, kDeviceCount);
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    return ACL_SUCCESS;
}

bool valid_memcpy_kind(aclrtMemcpyKind kind) {
    return kind >= ACL_MEMCPY_HOST_TO_HOST && kind <= ACL_MEMCPY_DEVICE_TO_DEVICE;
}

aclError check_copy(const char* api, void* dst, size_t dest_max, const void* src, size_t count,
                    aclrtMemcpyKind kind) {
    if (dst == nullptr || src == nullptr) {
        set_last_error("{}: dst or src is null", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (dest_max < count) {
        set_last_error("{}: count {} exceeds destMax {}; nothing copied", api, count, dest_max);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!valid_memcpy_kind(kind)) {
        set_last_error("{}: kind {} is not an aclrtMemcpyKind", api, static_cast<int>(kind));
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

}  // namespace

RuntimeLease::RuntimeLease(const char* api) : lock_(runtime_mutex), runtime_(runtime.get()) {
    if (runtime_ == nullptr) set_last_error("{}: aclInit has not been called", api);
}

}  // namespace nnplug

using nnplug::guarded;
using nnplug::RuntimeLease;
using nnplug::set_last_error;

extern "C" {

aclError aclInit(const char* configPath) {
    return guarded("aclInit", [&] {
        std::unique_lock lock(nnplug::runtime_mutex);
        if (nnplug::runtime) {
            set_last_error("aclInit: already initialized; call aclFinalize first");
            return ACL_ERROR_REPEAT_INITIALIZE;
        }
        return nnplug::initialize(configPath);
    });
}

aclError aclFinalize(void) {
    return guarded("aclFinalize", [&] {
        std::unique_lock lock(nnplug::runtime_mutex);
        if (!nnplug::runtime) {
            set_last_error("aclFinalize: not initialized (aclInit not called, or already finalized)");
            return ACL_ERROR_REPEAT_FINALIZE;
        }
        nnplug::runtime.reset();
        return ACL_SUCCESS;
    });
}

const char* aclGetRecentErrMsg(void) { return nnplug::last_error(); }

aclError aclrtSetDevice(int32_t deviceId) {
    RuntimeLease runtime("aclrtSetDevice");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (const aclError error = nnplug::check_device("aclrtSetDevice", deviceId)) return error;
    nnplug::current_device = deviceId;
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    return guarded("aclrtResetDevice", [&] {
        RuntimeLease runtime("aclrtResetDevice");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (const aclError error = nnplug::check_device("aclrtResetDevice", deviceId)) return error;
        // Resetting waits for the device's work, as CANN does; resources stay until aclFinalize.
        const auto& device = runtime->plugin().device;
        if (device.stream_synchronize(runtime->context(), runtime->resolve_stream("", nullptr)) != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtResetDevice");
            return ACL_ERROR_RT_FAILURE;
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtGetDevice(int32_t* deviceId) {
    RuntimeLease runtime("aclrtGetDevice");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (deviceId == nullptr) {
        set_last_error("aclrtGetDevice: deviceId is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *deviceId = nnplug::current_device;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
    RuntimeLease runtime("aclrtGetDeviceCount");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (count == nullptr) {
        set_last_error("aclrtGetDeviceCount: count is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *count = nnplug::kDeviceCount;
    return ACL_SUCCESS;
}

const char* aclrtGetSocName(void) {
    RuntimeLease runtime("aclrtGetSocName");
    if (!runtime) return nullptr;
    return runtime->plugin().soc_name(runtime->context());
}

// One implicit context per device: the handle is the device number plus one.
aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    RuntimeLease runtime("aclrtCreateContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtCreateContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (const aclError error = nnplug::check_device("aclrtCreateContext", deviceId)) return error;
    *context = reinterpret_cast<aclrtContext>(static_cast<intptr_t>(deviceId) + 1);
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
    RuntimeLease runtime("aclrtDestroyContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtDestroyContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
    RuntimeLease runtime("aclrtSetCurrentContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    const auto device = static_cast<int32_t>(reinterpret_cast<intptr_t>(context) - 1);
    if (context == nullptr || nnplug::check_device("aclrtSetCurrentContext", device) != ACL_SUCCESS) {
        set_last_error("aclrtSetCurrentContext: {} is not a context from aclrtCreateContext", context);
        return ACL_ERROR_INVALID_PARAM;
    }
    nnplug::current_device = device;
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
    RuntimeLease runtime("aclrtGetCurrentContext");
    if (!runtime) return ACL_ERROR_UNINITIALIZE;
    if (context == nullptr) {
        set_last_error("aclrtGetCurrentContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *context = reinterpret_cast<aclrtContext>(static_cast<intptr_t>(nnplug::current_device) + 1);
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    return guarded("aclrtCreateStream", [&] {
        RuntimeLease runtime("aclrtCreateStream");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (stream == nullptr) {
            set_last_error("aclrtCreateStream: stream is null");
            return ACL_ERROR_INVALID_PARAM;
        }
        return runtime->create_stream(stream);
    });
}

aclError aclrtDestroyStream(aclrtStream stream) {
    return guarded("aclrtDestroyStream", [&] {
        RuntimeLease runtime("aclrtDestroyStream");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        return runtime->destroy_stream(stream);
    });
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    return guarded("aclrtSynchronizeStream", [&] {
        RuntimeLease runtime("aclrtSynchronizeStream");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        void* resolved = runtime->resolve_stream("aclrtSynchronizeStream", stream);
        if (resolved == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        const nnplug_status status = runtime->plugin().device.stream_synchronize(runtime->context(), resolved);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtSynchronizeStream");
            return nnplug::acl_error_from(status);
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtSynchronizeDevice(void) { return aclrtSynchronizeStream(nullptr); }

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
    return guarded("aclrtMalloc", [&] {
        RuntimeLease runtime("aclrtMalloc");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (devPtr == nullptr || size == 0) {
            set_last_error("aclrtMalloc: devPtr is null or size is 0");
            return ACL_ERROR_INVALID_PARAM;
        }
        if (policy < ACL_MEM_MALLOC_HUGE_FIRST || policy > ACL_MEM_MALLOC_NORMAL_ONLY) {
            set_last_error("aclrtMalloc: policy {} is not an aclrtMemMallocPolicy", static_cast<int>(policy));
            return ACL_ERROR_INVALID_PARAM;
        }
        const nnplug_status status = runtime->plugin().device.malloc(runtime->context(), size, devPtr);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtMalloc");
            return nnplug::acl_error_from(status);
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtFree(void* devPtr) {
    return guarded("aclrtFree", [&] {
        RuntimeLease runtime("aclrtFree");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (devPtr == nullptr) {
            set_last_error("aclrtFree: devPtr is null");
            return ACL_ERROR_INVALID_PARAM;
        }
        const nnplug_status status = runtime->plugin().device.free(runtime->context(), devPtr);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtFree");
            return status == NNPLUG_ERR_BAD_HANDLE ? ACL_ERROR_INVALID_PARAM : nnplug::acl_error_from(status);
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
    return guarded("aclrtMallocHost", [&] {
        RuntimeLease runtime("aclrtMallocHost");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (hostPtr == nullptr || size == 0) {
            set_last_error("aclrtMallocHost: hostPtr is null or size is 0");
            return ACL_ERROR_INVALID_PARAM;
        }
        return runtime->malloc_host(hostPtr, size);
    });
}

aclError aclrtFreeHost(void* hostPtr) {
    return guarded("aclrtFreeHost", [&] {
        RuntimeLease runtime("aclrtFreeHost");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        return runtime->free_host(hostPtr);
    });
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    return guarded("aclrtMemcpy", [&] {
        RuntimeLease runtime("aclrtMemcpy");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (const aclError error = nnplug::check_copy("aclrtMemcpy", dst, destMax, src, count, kind)) return error;
        if (count == 0) return ACL_SUCCESS;
        const nnplug_status status = runtime->plugin().device.memcpy(runtime->context(), dst, src, count, kind);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtMemcpy");
            return nnplug::acl_error_from(status);
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    return guarded("aclrtMemcpyAsync", [&] {
        RuntimeLease runtime("aclrtMemcpyAsync");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (const aclError error = nnplug::check_copy("aclrtMemcpyAsync", dst, destMax, src, count, kind))
            return error;
        void* resolved = runtime->resolve_stream("aclrtMemcpyAsync", stream);
        if (resolved == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        if (count == 0) return ACL_SUCCESS;
        const auto& device = runtime->plugin().device;
        nnplug_status status;
        if (device.memcpy_async != nullptr) {
            status = device.memcpy_async(runtime->context(), dst, src, count, kind, resolved);
        } else {  // a backend without async copies: keep stream order by waiting first
            status = device.stream_synchronize(runtime->context(), resolved);
            if (status == NNPLUG_OK) status = device.memcpy(runtime->context(), dst, src, count, kind);
        }
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtMemcpyAsync");
            return nnplug::acl_error_from(status);
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    return guarded("aclrtMemset", [&] {
        RuntimeLease runtime("aclrtMemset");
        if (!runtime) return ACL_ERROR_UNINITIALIZE;
        if (devPtr == nullptr || maxCount < count) {
            set_last_error("aclrtMemset: devPtr is null or count {} exceeds maxCount {}", count, maxCount);
            return ACL_ERROR_INVALID_PARAM;
        }
        if (count == 0) return ACL_SUCCESS;
        const nnplug_status status = runtime->plugin().device.memset(runtime->context(), devPtr, value, count);
        if (status != NNPLUG_OK) {
            runtime->fail_from_backend("aclrtMemset");
            return nnplug::acl_error_from(status);
        }
        return ACL_SUCCESS;
    });
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
    RuntimeLease runtime("aclSetAclOpExecutorRepeatable");
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    return runtime->set_repeatable(executor);
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
    RuntimeLease runtime("aclDestroyAclOpExecutor");
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    return runtime->destroy_executor(executor);
}

}  // extern "C"
