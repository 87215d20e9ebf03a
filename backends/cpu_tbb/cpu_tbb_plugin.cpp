// cpu_tbb: the CPU backend. Device memory is host memory; streams run their work
// at once on the calling thread, spread over a oneTBB arena.
#include <nnplug/plugin.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bce_kernels.h"

namespace nnplug::cpu {
namespace {

thread_local std::string recent_error;

nnplug_status fail(nnplug_status status, std::string message) {
    recent_error = std::move(message);
    return status;
}

struct CpuContext {
    int threads = 1;
    int64_t grain = 16384;  // elements per task: 64 KiB of float32 per operand
    std::unique_ptr<tbb::task_arena> arena;

    std::mutex memory_mutex;
    std::unordered_map<void*, size_t> allocations;
    std::mutex streams_mutex;
    std::unordered_set<void*> streams;
};

CpuContext& as_context(void* ctx) { return *static_cast<CpuContext*>(ctx); }

constexpr int kMaxThreads = 4096;

constexpr nnplug_option_info kOptions[] = {
    {"threads", "0", "worker threads; 0 uses every core"},
    {"grain", "16384", "elements per parallel task (at least 1024)"},
};

bool parse_integer(const char* text, long long minimum, long long& value) {
    char* end = nullptr;
    errno = 0;
    value = std::strtoll(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' && value >= minimum;
}

nnplug_status create_context(const nnplug_option* options, size_t option_count, void** ctx, char* error,
                             size_t error_len) {
    auto context = std::make_unique<CpuContext>();
    long long threads = 0;
    for (size_t i = 0; i < option_count; ++i) {
        long long value = 0;
        const std::string key = options[i].key;
        if (key == "threads") {
            if (!parse_integer(options[i].value, 0, value) || value > kMaxThreads) {
                std::snprintf(error, error_len, "option threads = '%s' is not a whole number in [0, %d]",
                              options[i].value, kMaxThreads);
                return NNPLUG_ERR_INVALID_ARGUMENT;
            }
            threads = value;
        } else if (key == "grain") {
            if (!parse_integer(options[i].value, 1024, value)) {
                std::snprintf(error, error_len, "option grain = '%s' is not a whole number >= 1024", options[i].value);
                return NNPLUG_ERR_INVALID_ARGUMENT;
            }
            context->grain = value;
        } else {
            std::snprintf(error, error_len, "unknown option '%s'", key.c_str());
            return NNPLUG_ERR_INVALID_ARGUMENT;
        }
    }
    context->threads = threads > 0 ? static_cast<int>(threads) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    context->arena = std::make_unique<tbb::task_arena>(context->threads);
    *ctx = context.release();
    return NNPLUG_OK;
}

// No exception crosses the plugin boundary.
nnplug_status create(const nnplug_option* options, size_t option_count, void** ctx, char* error,
                     size_t error_len) {
    try {
        return create_context(options, option_count, ctx, error, error_len);
    } catch (const std::exception& exception) {
        std::snprintf(error, error_len, "cannot create the CPU context: %s", exception.what());
        return NNPLUG_ERR_OUT_OF_MEMORY;
    }
}

void destroy(void* ctx) {
    auto* context = static_cast<CpuContext*>(ctx);
    for (auto& [pointer, bytes] : context->allocations) std::free(pointer);
    for (void* stream : context->streams) delete static_cast<char*>(stream);
    delete context;
}

const char* soc_name(void*) { return "CPU"; }
uint32_t dtype_mask(void*) {
    return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16);
}
const char* last_error(void*) { return recent_error.c_str(); }

nnplug_status device_malloc(void* ctx, size_t bytes, void** pointer) {
    constexpr size_t kAlignment = 64;
    void* allocated = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (allocated == nullptr)
        return fail(NNPLUG_ERR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes");
    auto& context = as_context(ctx);
    std::lock_guard lock(context.memory_mutex);
    context.allocations.emplace(allocated, bytes);
    *pointer = allocated;
    return NNPLUG_OK;
}

nnplug_status device_free(void* ctx, void* pointer) {
    auto& context = as_context(ctx);
    {
        std::lock_guard lock(context.memory_mutex);
        if (context.allocations.erase(pointer) == 0)
            return fail(NNPLUG_ERR_BAD_HANDLE, "pointer was not allocated by aclrtMalloc or is already freed");
    }
    std::free(pointer);
    return NNPLUG_OK;
}

nnplug_status device_memcpy(void*, void* dst, const void* src, size_t bytes, int32_t) {
    std::memmove(dst, src, bytes);  // every kind is host memory here
    return NNPLUG_OK;
}

nnplug_status device_memset(void*, void* pointer, int32_t value, size_t bytes) {
    std::memset(pointer, value, bytes);
    return NNPLUG_OK;
}

nnplug_status stream_create(void* ctx, void** stream) {
    auto& context = as_context(ctx);
    try {
        std::lock_guard lock(context.streams_mutex);
        auto handle = std::make_unique<char>();  // a distinct handle; work runs at enqueue time
        context.streams.insert(handle.get());
        *stream = handle.release();
        return NNPLUG_OK;
    } catch (const std::exception& exception) {
        return fail(NNPLUG_ERR_OUT_OF_MEMORY, std::string("cannot create a stream: ") + exception.what());
    }
}

nnplug_status stream_destroy(void* ctx, void* stream) {
    auto& context = as_context(ctx);
    std::lock_guard lock(context.streams_mutex);
    if (context.streams.erase(stream) == 0) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
    delete static_cast<char*>(stream);
    return NNPLUG_OK;
}

nnplug_status stream_synchronize(void*, void*) { return NNPLUG_OK; }

// Runs body(begin, end) over [0, count) in tasks of at least `grain` items; small
// counts run inline, so a tiny call costs no scheduling.
template <typename Body>
void parallel_ranges(CpuContext& context, int64_t count, int64_t grain, Body&& body) {
    if (context.threads == 1 || count <= grain) {
        body(int64_t{0}, count);
        return;
    }
    context.arena->execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<int64_t>(0, count, grain),
            [&](const tbb::blocked_range<int64_t>& range) { body(range.begin(), range.end()); },
            tbb::static_partitioner());
    });
}

nnplug_status bce_workspace(void*, const nnplug_op_desc* desc, uint64_t* bytes) {
    *bytes = bce_workspace_bytes(*desc);
    return NNPLUG_OK;
}

nnplug_status bce_backward_launch(void* ctx, const nnplug_op_desc* desc, void*, uint64_t, void*) {
    parallel_ranges(as_context(ctx), desc->numel, as_context(ctx).grain,
                    [&](int64_t begin, int64_t end) { bce_backward_range(*desc, begin, end); });
    return NNPLUG_OK;
}

nnplug_status bce_forward_launch(void* ctx, const nnplug_op_desc* desc, void* workspace, uint64_t, void*) {
    auto& context = as_context(ctx);
    if (desc->reduction == NNPLUG_REDUCTION_NONE) {
        parallel_ranges(context, desc->numel, context.grain,
                        [&](int64_t begin, int64_t end) { bce_forward_range(*desc, begin, end); });
        return NNPLUG_OK;
    }
    const int64_t chunks = (desc->numel + kReduceChunk - 1) / kReduceChunk;
    double single = 0;
    double* partials = chunks > 1 ? static_cast<double*>(workspace) : &single;
    const int64_t chunks_per_task = std::max<int64_t>(1, context.grain / kReduceChunk);
    parallel_ranges(context, chunks, chunks_per_task, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) partials[c] = bce_forward_chunk_sum(*desc, c);
    });
    bce_forward_finish(*desc, partials, chunks);
    return NNPLUG_OK;
}

// Catches what a kernel might throw (bad_alloc in TBB), so nothing crosses the C boundary.
template <nnplug_status (*Launch)(void*, const nnplug_op_desc*, void*, uint64_t, void*)>
nnplug_status guarded_launch(void* ctx, const nnplug_op_desc* desc, void* workspace, uint64_t bytes,
                             void* stream) {
    try {
        return Launch(ctx, desc, workspace, bytes, stream);
    } catch (const std::exception& exception) {
        return fail(NNPLUG_ERR_INTERNAL, std::string("kernel failed: ") + exception.what());
    }
}

const nnplug_op_i kOps[] = {
    {NNPLUG_OP_BCE_FORWARD, nullptr, bce_workspace, guarded_launch<bce_forward_launch>},
    {NNPLUG_OP_BCE_BACKWARD, nullptr, bce_workspace, guarded_launch<bce_backward_launch>},
};

const nnplug_plugin kPlugin = {
    NNPLUG_PLUGIN_ABI_VERSION,
    sizeof(nnplug_plugin),
    "cpu_tbb",
    "CPU backend: oneTBB threads over host memory",
    kOptions,
    sizeof kOptions / sizeof kOptions[0],
    create,
    destroy,
    soc_name,
    dtype_mask,
    last_error,
    {NNPLUG_MEMORY_HOST, device_malloc, device_free, device_memcpy, nullptr, device_memset, stream_create,
     stream_destroy, stream_synchronize},
    kOps,
    sizeof kOps / sizeof kOps[0],
};

}  // namespace
}  // namespace nnplug::cpu

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) { return &nnplug::cpu::kPlugin; }
