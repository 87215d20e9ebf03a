// The process-wide runtime between aclInit and aclFinalize: the loaded backend,
// its context, streams, host allocations and live executors.
#pragma once

#include <acl/acl_base.h>
#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>

#include "error_state.h"
#include "plugin_library.h"
#include "runtime_config.h"

struct aclOpExecutor {
    nnplug_op_desc desc{};
    const nnplug_op_i* op = nullptr;
    const char* api = "";           // the second-phase entry point that may run it
    uint64_t workspace_bytes = 0;
    bool repeatable = false;
    bool nothing_to_run = false;    // an empty self
};

namespace nnplug {

class Runtime {
public:
    Runtime(RuntimeConfig config, PluginLibrary library, void* context, void* default_stream);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    const nnplug_plugin& plugin() const { return library_.table(); }
    void* context() const { return context_; }
    const RuntimeConfig& config() const { return config_; }

    // "api: <the backend's last error>", set as this thread's message.
    void fail_from_backend(const char* api);

    // The backend stream behind an aclrtStream (nullptr: the default stream);
    // nullptr with a message for an unknown handle.
    void* resolve_stream(const char* api, aclrtStream stream);
    aclError create_stream(aclrtStream* stream);
    aclError destroy_stream(aclrtStream stream);

    aclError malloc_host(void** pointer, size_t bytes);
    aclError free_host(void* pointer);

    // Executors: registered at the first phase, consumed or destroyed later.
    aclOpExecutor* register_executor(std::unique_ptr<aclOpExecutor> executor);
    // Checks that executor is live and may run under api; nullptr status means go.
    aclnnStatus check_runnable(const char* api, aclOpExecutor* executor);
    void consume(aclOpExecutor* executor);
    aclnnStatus destroy_executor(aclOpExecutor* executor);
    aclnnStatus set_repeatable(aclOpExecutor* executor);

private:
    RuntimeConfig config_;
    PluginLibrary library_;
    void* context_;
    void* default_stream_;

    std::mutex streams_mutex_;
    std::unordered_set<void*> streams_;
    std::mutex host_mutex_;
    std::unordered_set<void*> host_allocations_;

    // Consumed executors stay here for a while so that running one again gets a
    // clear error instead of a use after free.
    static constexpr size_t kConsumedKept = 256;
    std::mutex executors_mutex_;
    std::unordered_set<aclOpExecutor*> live_executors_;
    std::unordered_set<aclOpExecutor*> consumed_executors_;
    std::deque<aclOpExecutor*> consumed_order_;
};

// The runtime for the duration of one API call; false (with a message) before aclInit.
class RuntimeLease {
public:
    explicit RuntimeLease(const char* api);
    explicit operator bool() const { return runtime_ != nullptr; }
    Runtime* operator->() const { return runtime_; }
    Runtime& operator*() const { return *runtime_; }

private:
    std::shared_lock<std::shared_mutex> lock_;
    Runtime* runtime_ = nullptr;
};

// The aclError for a backend status.
aclError acl_error_from(nnplug_status status);

}  // namespace nnplug
