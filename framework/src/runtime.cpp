#include "runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "logging.h"

namespace nnplug {
namespace {

// aclrtSetDevice is per host thread, as in CANN. The generation ties a thread's choice
// to one runtime, so a device set before an aclFinalize does not outlive it.
struct ThreadDevice {
    uint64_t generation = 0;
    int32_t device = 0;
};
thread_local ThreadDevice thread_device;
std::atomic<uint64_t> runtime_generations{0};

}  // namespace

aclError acl_error_from(nnplug_status status) {
    switch (status) {
        case NNPLUG_OK:
            return ACL_SUCCESS;
        case NNPLUG_ERR_INVALID_ARGUMENT:
            return ACL_ERROR_INVALID_PARAM;
        case NNPLUG_ERR_UNSUPPORTED:
            return ACL_ERROR_FAILURE;
        case NNPLUG_ERR_OUT_OF_MEMORY:
            return ACL_ERROR_RT_MEMORY_ALLOCATION;
        case NNPLUG_ERR_BAD_HANDLE:
            return ACL_ERROR_INVALID_PARAM;  // the runtime checks streams itself
        case NNPLUG_ERR_KERNEL:
            return ACL_ERROR_RT_FAILURE;
        default:
            return ACL_ERROR_INTERNAL_ERROR;
    }
}

aclnnStatus aclnn_status_from(nnplug_status status) {
    switch (status) {
        case NNPLUG_OK:
            return ACLNN_SUCCESS;
        case NNPLUG_ERR_INVALID_ARGUMENT:
        case NNPLUG_ERR_UNSUPPORTED:
            return ACLNN_ERR_PARAM_INVALID;
        case NNPLUG_ERR_INTERNAL:
            return ACLNN_ERR_INNER;
        default:
            return ACLNN_ERR_RUNTIME_ERROR;
    }
}

Runtime::Runtime(RuntimeConfig config, PluginLibrary library, std::vector<DeviceContext> devices,
                 std::unique_ptr<OpRouting> routing)
    : config_(std::move(config)),
      library_(std::move(library)),
      devices_(std::move(devices)),
      routing_(std::move(routing)),
      generation_(++runtime_generations),
      allocations_(devices_.size()) {}

Runtime::~Runtime() {
    const auto& device = device_table();
    for (auto& [handle, stream] : streams_) device.stream_destroy(context(stream.device), stream.backend);
    for (const DeviceContext& each : devices_) device.stream_destroy(each.context, each.default_stream);
    for (auto* executors : {&live_executors_, &running_executors_, &destroyed_while_running_}) {
        for (aclOpExecutor* executor : *executors) {
            release_plan(*executor);
            delete executor;
        }
    }
    for (aclOpExecutor* executor : consumed_executors_) delete executor;
    for (void* pointer : host_allocations_) std::free(pointer);
    for (const DeviceContext& each : devices_) plugin().destroy(each.context);
    routing_.reset();  // the routed backends' contexts, once no plan of theirs is left
}

int32_t Runtime::current_device() const {
    return thread_device.generation == generation_ ? thread_device.device : 0;
}

aclError Runtime::check_device_id(const char* api, int32_t device) const {
    if (device < 0 || static_cast<uint32_t>(device) >= device_count()) {
        set_last_error("{}: device {} does not exist; backend '{}' drives {} device(s)", api, device,
                       plugin().name, device_count());
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    return ACL_SUCCESS;
}

void Runtime::set_current_device(int32_t device) {
    thread_device = {generation_, device};
}

aclError Runtime::fail_from_backend(const char* api, nnplug_status status) {
    const char* reason = plugin().last_error(context());
    set_last_error("{}: {}", api, reason && *reason ? reason : "the backend failed without a message");
    return acl_error_from(status);
}

void* Runtime::resolve_stream(const char* api, aclrtStream stream) {
    const int32_t current = current_device();
    if (stream == nullptr) return devices_[static_cast<size_t>(current)].default_stream;
    std::lock_guard lock(streams_mutex_);
    const auto found = streams_.find(stream);
    if (found == streams_.end()) {
        set_last_error("{}: stream {} was not created by aclrtCreateStream or is destroyed", api, stream);
        return nullptr;
    }
    if (found->second.device != current) {
        set_last_error("{}: stream {} belongs to device {}, but device {} is current (aclrtSetDevice)", api,
                       stream, found->second.device, current);
        return nullptr;
    }
    return found->second.backend;
}

namespace {

// The next stream handle: process-wide, above every context handle (acl_rt_api.cpp), and
// never given out twice.
std::atomic<uintptr_t> g_next_stream_handle{uintptr_t{1} << 44};

}  // namespace

aclError Runtime::create_stream(aclrtStream* stream) {
    const int32_t device = current_device();
    void* created = nullptr;
    const nnplug_status status = device_table().stream_create(context(device), &created);
    if (status != NNPLUG_OK) return fail_from_backend("aclrtCreateStream", status);
    void* handle = reinterpret_cast<void*>(g_next_stream_handle.fetch_add(1));
    std::lock_guard lock(streams_mutex_);
    streams_.emplace(handle, CreatedStream{created, device});
    *stream = handle;
    return ACL_SUCCESS;
}

aclError Runtime::destroy_stream(aclrtStream stream) {
    CreatedStream destroyed{};
    {
        std::lock_guard lock(streams_mutex_);
        const auto found = stream == nullptr ? streams_.end() : streams_.find(stream);
        if (found == streams_.end()) {
            set_last_error(
                "aclrtDestroyStream: stream {} was not created by aclrtCreateStream or is "
                "already destroyed",
                stream);
            return ACL_ERROR_INVALID_RESOURCE_HANDLE;
        }
        destroyed = found->second;
        streams_.erase(found);
    }
    const nnplug_status status = device_table().stream_destroy(context(destroyed.device), destroyed.backend);
    if (status != NNPLUG_OK) return fail_from_backend("aclrtDestroyStream", status);
    return ACL_SUCCESS;
}

aclError Runtime::synchronize_device(const char* api, int32_t device) {
    std::vector<void*> streams = {devices_[static_cast<size_t>(device)].default_stream};
    {
        std::lock_guard lock(streams_mutex_);
        for (const auto& [handle, stream] : streams_)
            if (stream.device == device) streams.push_back(stream.backend);
    }
    for (void* stream : streams) {
        const nnplug_status status = device_table().stream_synchronize(context(device), stream);
        if (status == NNPLUG_OK) continue;
        // A stream of the list that the backend no longer knows was destroyed by another
        // thread since the list was taken, and its destroy waited for its work. (Whether it
        // is still registered says nothing: a stream created since may have its address.)
        if (status == NNPLUG_ERR_BAD_HANDLE && stream != streams.front()) continue;
        return fail_from_backend(api, status);
    }
    return ACL_SUCCESS;
}

aclError Runtime::malloc_device(void** pointer, size_t bytes) {
    if (bytes > kMaxAllocationBytes) {
        set_last_error("aclrtMalloc: size {} bytes is beyond any device's memory (at most {} bytes)", bytes,
                       kMaxAllocationBytes);
        return ACL_ERROR_BAD_ALLOC;
    }
    // CANN's runtime rounds a size up to a multiple of 32 bytes and adds 32; programs written
    // for it (CANN's own samples among them) read views that reach into that padding. It is
    // zeroed, so such a read is deterministic.
    const size_t padded = (bytes + 31) / 32 * 32 + 32;
    const int32_t device = current_device();
    nnplug_status status = device_table().malloc(context(device), padded, pointer);
    if (status != NNPLUG_OK) return fail_from_backend("aclrtMalloc", status);
    status = device_table().memset(context(device), static_cast<char*>(*pointer) + bytes, 0, padded - bytes);
    if (status != NNPLUG_OK) {
        device_table().free(context(device), *pointer);
        *pointer = nullptr;
        return fail_from_backend("aclrtMalloc", status);
    }
    {
        std::lock_guard lock(memory_mutex_);
        allocations_[static_cast<size_t>(device)][reinterpret_cast<uintptr_t>(*pointer)] =
            Block{bytes, padded};
    }
    return ACL_SUCCESS;
}

aclError Runtime::free_device(void* pointer) {
    if (!check_on_current_device("aclrtFree", "devPtr", pointer)) return ACL_ERROR_INVALID_PARAM;
    const int32_t device = current_device();
    const nnplug_status status = device_table().free(context(device), pointer);
    if (status != NNPLUG_OK) return fail_from_backend("aclrtFree", status);
    {
        std::lock_guard lock(memory_mutex_);
        allocations_[static_cast<size_t>(device)].erase(reinterpret_cast<uintptr_t>(pointer));
    }
    return ACL_SUCCESS;
}

int32_t Runtime::owner_of(const void* pointer) const {
    const auto address = reinterpret_cast<uintptr_t>(pointer);
    std::lock_guard lock(memory_mutex_);
    for (size_t device = 0; device < allocations_.size(); ++device) {
        const auto& blocks = allocations_[device];
        auto after = blocks.upper_bound(address);
        if (after == blocks.begin()) continue;
        const auto& [start, block] = *std::prev(after);
        if (address < start + block.padded) return static_cast<int32_t>(device);
    }
    return -1;
}

bool Runtime::check_within_block(const char* api, const char* what, const void* start, uint64_t bytes) const {
    if (start == nullptr || bytes == 0) return true;
    const auto address = reinterpret_cast<uintptr_t>(start);
    std::lock_guard lock(memory_mutex_);
    for (const auto& blocks : allocations_) {
        const auto after = blocks.upper_bound(address);
        if (after == blocks.begin()) continue;
        const auto& [base, block] = *std::prev(after);
        if (address >= base + block.padded) continue;
        const uint64_t room = base + block.padded - address;
        if (bytes <= room) return true;
        set_last_error(
            "{}: {} of {} bytes at {} runs past the end of its {}-byte aclrtMalloc block ({} bytes "
            "from {} to the block's end)",
            api, what, bytes, start, block.requested, room, start);
        return false;
    }
    return true;
}

bool Runtime::check_on_current_device(const char* api, const char* what, const void* pointer) const {
    if (!tracks_memory_owners() || pointer == nullptr) return true;
    const int32_t owner = owner_of(pointer);
    const int32_t current = current_device();
    if (owner < 0 || owner == current) return true;
    set_last_error("{}: {} {} is memory of device {}, but device {} is current (aclrtSetDevice)", api, what,
                   pointer, owner, current);
    return false;
}

aclError Runtime::malloc_host(void** pointer, size_t bytes) {
    constexpr size_t kAlignment = 64;
    if (bytes > kMaxAllocationBytes) {  // also keeps the rounding below from wrapping
        set_last_error("aclrtMallocHost: size {} bytes is beyond any host's memory (at most {} bytes)", bytes,
                       kMaxAllocationBytes);
        return ACL_ERROR_BAD_ALLOC;
    }
    void* allocated = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (allocated == nullptr) {
        set_last_error("aclrtMallocHost: cannot allocate {} bytes of host memory", bytes);
        return ACL_ERROR_BAD_ALLOC;
    }
    std::lock_guard lock(host_mutex_);
    host_allocations_.insert(allocated);
    *pointer = allocated;
    return ACL_SUCCESS;
}

aclError Runtime::free_host(void* pointer) {
    {
        std::lock_guard lock(host_mutex_);
        if (host_allocations_.erase(pointer) == 0) {
            set_last_error("aclrtFreeHost: {} was not allocated by aclrtMallocHost or is already freed",
                           pointer);
            return ACL_ERROR_INVALID_PARAM;
        }
    }
    std::free(pointer);
    return ACL_SUCCESS;
}

aclOpExecutor* Runtime::register_executor(std::unique_ptr<aclOpExecutor> executor) {
    std::lock_guard lock(executors_mutex_);
    live_executors_.insert(executor.get());
    return executor.release();
}

aclnnStatus Runtime::claim(const char* api, aclOpExecutor* executor) {
    if (executor == nullptr) {
        set_last_error("{}: executor is null", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::lock_guard lock(executors_mutex_);
    if (live_executors_.count(executor) == 0) {
        if (consumed_executors_.count(executor) != 0 || running_executors_.count(executor) != 0)
            set_last_error(
                "{}: executor {} was consumed by its one run; make it repeatable with "
                "aclSetAclOpExecutorRepeatable to run it again",
                api, static_cast<void*>(executor));
        else
            set_last_error("{}: executor {} is not a live executor (never created, or destroyed)", api,
                           static_cast<void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (std::string_view(executor->api) != api) {
        set_last_error("{}: executor was made by {}GetWorkspaceSize, not {}GetWorkspaceSize", api,
                       executor->api, api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (executor->device != current_device()) {
        set_last_error("{}: executor was made on device {}, but device {} is current (aclrtSetDevice)", api,
                       executor->device, current_device());
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (executor->repeatable) {
        ++executor->runs;
    } else {
        live_executors_.erase(executor);  // no second run of it can start
        running_executors_.insert(executor);
    }
    return ACLNN_SUCCESS;
}

void Runtime::release_plan(aclOpExecutor& executor) {
    if (executor.plan != nullptr && executor.op->release != nullptr)
        executor.op->release(executor.context, executor.plan);
    executor.plan = nullptr;
}

void Runtime::finish_run(aclOpExecutor* executor, bool ran) {
    std::lock_guard lock(executors_mutex_);
    if (executor->runs > 0) {  // a repeatable executor's run
        if (--executor->runs > 0) return;
        if (destroyed_while_running_.erase(executor) == 0) return;  // stays live
        release_plan(*executor);
        delete executor;
        return;
    }
    if (running_executors_.erase(executor) == 0) return;
    if (!ran) {  // refused before it ran: not consumed
        live_executors_.insert(executor);
        return;
    }
    release_plan(*executor);
    consumed_executors_.insert(executor);
    consumed_order_.push_back(executor);
    if (consumed_order_.size() > kConsumedKept) {
        aclOpExecutor* oldest = consumed_order_.front();
        consumed_order_.pop_front();
        if (consumed_executors_.erase(oldest) != 0) delete oldest;
    }
}

aclnnStatus Runtime::destroy_executor(aclOpExecutor* executor) {
    if (executor == nullptr) {
        set_last_error("aclDestroyAclOpExecutor: executor is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::lock_guard lock(executors_mutex_);
    if (live_executors_.erase(executor) == 0 && consumed_executors_.erase(executor) == 0) {
        set_last_error("aclDestroyAclOpExecutor: executor {} is not live (never created, or destroyed)",
                       static_cast<void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (executor->runs != 0) {  // the last run in progress frees it
        destroyed_while_running_.insert(executor);
        return ACLNN_SUCCESS;
    }
    auto queued = std::find(consumed_order_.begin(), consumed_order_.end(), executor);
    if (queued != consumed_order_.end()) consumed_order_.erase(queued);
    release_plan(*executor);
    delete executor;
    return ACLNN_SUCCESS;
}

aclnnStatus Runtime::check_idle_repeatable(const char* api, const aclOpExecutor* executor) const {
    auto* key = const_cast<aclOpExecutor*>(executor);
    if (live_executors_.count(key) == 0) {
        set_last_error("{}: executor {} is not live (consumed, destroyed or never created)", api,
                       static_cast<const void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!executor->repeatable) {
        set_last_error(
            "{}: executor {} is not repeatable; make it so with aclSetAclOpExecutorRepeatable first", api,
            static_cast<const void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (executor->runs != 0) {
        set_last_error("{}: executor {} is running ({} on another thread); set its addresses between runs",
                       api, static_cast<const void*>(executor), executor->api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (executor->device != current_device()) {
        set_last_error("{}: executor was made on device {}, but device {} is current (aclrtSetDevice)", api,
                       executor->device, current_device());
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus Runtime::set_repeatable(aclOpExecutor* executor) {
    if (executor == nullptr) {
        set_last_error("aclSetAclOpExecutorRepeatable: executor is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::lock_guard lock(executors_mutex_);
    if (live_executors_.count(executor) == 0) {
        set_last_error("aclSetAclOpExecutorRepeatable: executor {} is not live (consumed or destroyed)",
                       static_cast<void*>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    executor->repeatable = true;
    return ACLNN_SUCCESS;
}

}  // namespace nnplug
