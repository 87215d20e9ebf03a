// The process-wide runtime between aclInit and aclFinalize: the device's backend, one
// context per device it drives, the backends ops are routed to, streams, host
// allocations and live executors.
#pragma once

#include <acl/acl_base.h>
#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend_setup.h"
#include "error_state.h"
#include "op_routing.h"
#include "plugin_library.h"
#include "runtime_config.h"

namespace nnplug {
struct OpSchema;
}

// A first phase's result: the checked descriptor and the backend's plan for it.
struct aclOpExecutor {
    nnplug_op_desc desc{};
    const nnplug_op_i* op = nullptr;
    void* plan = nullptr;                      // the backend's; released once, at consumption or destruction
    void* context = nullptr;                   // the context op and plan belong to
    nnplug::RoutedBackend* routed = nullptr;   // the backend the op is routed to; null: the device's
    int32_t device = 0;                        // the device current when it was made
    const char* api = "";                      // the second-phase entry point that may run it
    const nnplug::OpSchema* schema = nullptr;  // the op's; null only before the first phase fills it
    // The first phase's tensors by slot (null: absent), which aclSetTensorAddr and its kin name.
    const aclTensor* tensors[NNPLUG_MAX_OPERANDS] = {};
    // An operand moved since the last run: the next run checks the operands' overlap first,
    // once all of a caller's moves are made (one move at a time may pass through a state
    // where a moved operand meets another's old memory).
    std::atomic<bool> moved{false};
    int runs = 0;  // of a repeatable executor, in progress (guarded by the runtime's executors lock)
    uint64_t workspace_bytes = 0;
    bool repeatable = false;
    bool nothing_to_run = false;  // an empty self
    // With an empty self, the reduced outputs the run still writes, and the bits each gets
    // (static data: an asynchronous copy may read them after the call returned).
    const void* empty_values[NNPLUG_MAX_OPERANDS] = {};
    bool writes_empty_values() const {
        for (const void* value : empty_values)
            if (value != nullptr) return true;
        return false;
    }
};

namespace nnplug {

// The largest block aclrtMalloc and aclrtMallocHost hand to a backend or the host allocator
// (2^48 bytes, 256 TiB): anything larger is a wrapped or nonsense size, refused before any
// rounding up could wrap it to a small block.
constexpr size_t kMaxAllocationBytes = size_t{1} << 48;

// The aclError and aclnnStatus for a backend status: the one mapping of the runtime.
aclError acl_error_from(nnplug_status status);
aclnnStatus aclnn_status_from(nnplug_status status);

class Runtime {
public:
    // devices: one context per device `library` drives; routing: the other backends.
    Runtime(RuntimeConfig config, PluginLibrary library, std::vector<DeviceContext> devices,
            std::unique_ptr<OpRouting> routing);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    const nnplug_plugin& plugin() const { return library_.table(); }
    const nnplug_device_i& device_table() const { return *library_.table().device; }
    const RuntimeConfig& config() const { return config_; }
    OpRouting& routing() { return *routing_; }

    // Devices: the count the backend reported, and the calling host thread's current one.
    uint32_t device_count() const { return static_cast<uint32_t>(devices_.size()); }
    int32_t current_device() const;
    // ACL_ERROR_RT_INVALID_DEVICEID with a message for an id outside [0, count).
    aclError check_device_id(const char* api, int32_t device) const;
    void set_current_device(int32_t device);
    // The backend context of the current device, or of `device`.
    void* context() const { return devices_[static_cast<size_t>(current_device())].context; }
    void* context(int32_t device) const { return devices_[static_cast<size_t>(device)].context; }

    // "api: <the backend's last error>" as this thread's message; returns the status's aclError.
    aclError fail_from_backend(const char* api, nnplug_status status);

    // The backend stream behind an aclrtStream of the current device (nullptr: its default
    // stream); nullptr with a message for an unknown handle or one of another device.
    void* resolve_stream(const char* api, aclrtStream stream);
    aclError create_stream(aclrtStream* stream);
    aclError destroy_stream(aclrtStream stream);
    // Waits for every stream of device, default stream included.
    aclError synchronize_device(const char* api, int32_t device);

    // Device memory of the current device, with its owner recorded when several devices
    // exist, so that a pointer of one device used while another is current is refused.
    aclError malloc_device(void** pointer, size_t bytes);
    aclError free_device(void* pointer);
    // False (with "api: <what> <pointer> is memory of device d, but device c is current")
    // for a pointer allocated on a device other than the current one.
    bool check_on_current_device(const char* api, const char* what, const void* pointer) const;
    // Whether device memory has an owner to check (there are several devices).
    bool tracks_memory_owners() const { return devices_.size() > 1; }
    // False (with "api: <what> of N bytes at p runs past the end of its M-byte aclrtMalloc
    // block ...") when [start, start + bytes) starts inside a live aclrtMalloc block of any
    // device and runs past its end (the padding the runtime adds included). Memory outside
    // every block is not this check's business: a host-memory backend takes any host memory.
    bool check_within_block(const char* api, const char* what, const void* start, uint64_t bytes) const;

    aclError malloc_host(void** pointer, size_t bytes);
    aclError free_host(void* pointer);

    // Executors: registered at the first phase, consumed or destroyed later.
    aclOpExecutor* register_executor(std::unique_ptr<aclOpExecutor> executor);
    // Checks that executor is live, belongs to the current device and may run under api,
    // and takes it for one run, in one step: a non-repeatable one stops being live here, so
    // that no second run of it can start; a repeatable one destroyed during the run is
    // freed by finish_run. Every successful claim is followed by one finish_run: ran false
    // (refused before the backend saw it) gives a non-repeatable executor back.
    aclnnStatus claim(const char* api, aclOpExecutor* executor);
    void finish_run(aclOpExecutor* executor, bool ran);
    aclnnStatus destroy_executor(aclOpExecutor* executor);
    aclnnStatus set_repeatable(aclOpExecutor* executor);
    // Runs change(executor) on a live repeatable executor of the current device that no run
    // is using, under the executors' lock, so that no run starts while it changes; api names
    // the call in the refusals.
    template <typename Change>
    aclnnStatus change_idle_repeatable(const char* api, aclOpExecutor* executor, Change&& change) {
        std::lock_guard lock(executors_mutex_);
        if (const aclnnStatus status = check_idle_repeatable(api, executor)) return status;
        return change(*executor);
    }

private:
    void release_plan(aclOpExecutor& executor);
    aclnnStatus check_idle_repeatable(const char* api, const aclOpExecutor* executor) const;
    // One aclrtMalloc block: the size asked for, and the size with the runtime's padding.
    struct Block {
        size_t requested;
        size_t padded;
    };
    // The device whose memory holds pointer, or -1.
    int32_t owner_of(const void* pointer) const;

    RuntimeConfig config_;
    PluginLibrary library_;
    std::vector<DeviceContext> devices_;
    std::unique_ptr<OpRouting> routing_;  // destroyed before library_, after every plan is released
    uint64_t generation_;  // tells this runtime's thread-local current device from a past one's

    std::mutex streams_mutex_;
    // A created stream: the backend's own handle, and its device.
    struct CreatedStream {
        void* backend;
        int32_t device;
    };
    // By the handle aclrtCreateStream gave out: a number never given out before in this
    // process, so that a destroyed stream's handle never names a stream made since, even
    // after aclFinalize and aclInit (the backend may reuse its addresses).
    std::unordered_map<void*, CreatedStream> streams_;

    mutable std::mutex memory_mutex_;
    std::vector<std::map<uintptr_t, Block>> allocations_;  // live aclrtMalloc blocks, per device

    std::mutex host_mutex_;
    std::unordered_set<void*> host_allocations_;

    // Consumed executors stay here for a while so that running one again gets a
    // clear error instead of a use after free.
    static constexpr size_t kConsumedKept = 256;
    std::mutex executors_mutex_;
    std::unordered_set<aclOpExecutor*> live_executors_;
    std::unordered_set<aclOpExecutor*> running_executors_;        // claimed, not yet finished
    std::unordered_set<aclOpExecutor*> destroyed_while_running_;  // freed by the last run
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

// Returns call()'s status; an exception becomes a status with a message, never crossing the C API.
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

}  // namespace nnplug
