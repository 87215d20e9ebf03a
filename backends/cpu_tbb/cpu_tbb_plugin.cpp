// cpu_tbb: the CPU backend. Device memory is host memory; streams run their work
// at once on the calling thread, spread over a oneTBB arena.
#include <nnplug/plugin.h>
#include <nnplug/plugin_support.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "class_ops.h"
#include "elementwise.h"

namespace nnplug::cpu {
namespace {

struct CpuContext {
    int threads = 1;
    int64_t grain = 16384;  // elements per task: 64 KiB of float32 per operand
    std::unique_ptr<tbb::task_arena> arena;

    std::mutex memory_mutex;
    std::map<uintptr_t, size_t> allocations;  // block address -> bytes, ordered to find a pointer's block
    std::mutex streams_mutex;
    std::unordered_set<void*> streams;
};

CpuContext& as_context(void* ctx) {
    return *static_cast<CpuContext*>(ctx);
}

constexpr int kMaxThreads = 4096;
constexpr long long kMinGrain = 1024;

nnplug_option_info option_info(const char* key, const char* default_value, const char* description) {
    nnplug_option_info option{};
    option.key = key;
    option.default_value = default_value;
    option.description = description;
    return option;
}

const nnplug_option_info kOptions[] = {
    option_info("threads", "0", "worker threads; 0 uses every core"),
    option_info("grain", "16384", "elements per parallel task (at least 1024)"),
};

nnplug_status create_context(const nnplug_option* options, size_t option_count, int32_t device, void** ctx) {
    if (device != 0)
        return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT,
                         "cpu_tbb drives one device, 0; there is no device " + std::to_string(device));
    auto context = std::make_unique<CpuContext>();
    long long threads = 0;
    for (size_t i = 0; i < option_count; ++i) {
        const std::string key = options[i].key;
        const char* text = options[i].value;
        long long value = 0;
        if (key == "threads") {
            if (!sdk::parse_integer(text, 0, kMaxThreads, value))
                return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, "option threads = '" + std::string(text) +
                                                                  "' is not a whole number in [0, " +
                                                                  std::to_string(kMaxThreads) + "]");
            threads = value;
        } else if (key == "grain") {
            if (!sdk::parse_integer(text, kMinGrain, LLONG_MAX, value))
                return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT,
                                 "option grain = '" + std::string(text) +
                                     "' is not a whole number >= " + std::to_string(kMinGrain));
            context->grain = value;
        } else {
            return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, "unknown option '" + key + "'");
        }
    }
    context->threads = threads > 0 ? static_cast<int>(threads)
                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    context->arena = std::make_unique<tbb::task_arena>(context->threads);
    *ctx = context.release();
    return NNPLUG_OK;
}

nnplug_status create(const nnplug_option* options, size_t option_count, int32_t device, void** ctx) {
    return sdk::fenced("cannot create the CPU context",
                       [&] { return create_context(options, option_count, device, ctx); });
}

void destroy(void* ctx) {
    auto* context = static_cast<CpuContext*>(ctx);
    for (auto& [address, bytes] : context->allocations) std::free(reinterpret_cast<void*>(address));
    for (void* stream : context->streams) delete static_cast<char*>(stream);
    delete context;
}

const char* soc_name(void*) {
    return "CPU";
}

uint32_t dtype_mask(void*) {
    return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_U8);
}

nnplug_status device_malloc(void* ctx, size_t bytes, void** pointer) {
    return sdk::fenced("cannot allocate device memory", [&] {
        constexpr size_t kAlignment = 64;
        // Checked before rounding up: near SIZE_MAX the rounding would wrap to a tiny block.
        void* allocated =
            bytes > SIZE_MAX - kAlignment
                ? nullptr
                : std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
        if (allocated == nullptr)
            return sdk::fail(NNPLUG_ERR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes");
        try {
            auto& context = as_context(ctx);
            std::lock_guard lock(context.memory_mutex);
            context.allocations.emplace(reinterpret_cast<uintptr_t>(allocated), bytes);
        } catch (...) {
            std::free(allocated);
            throw;
        }
        *pointer = allocated;
        return NNPLUG_OK;
    });
}

nnplug_status device_free(void* ctx, void* pointer) {
    return sdk::fenced("cannot free device memory", [&] {
        auto& context = as_context(ctx);
        {
            std::lock_guard lock(context.memory_mutex);
            if (context.allocations.erase(reinterpret_cast<uintptr_t>(pointer)) == 0)
                return sdk::fail(NNPLUG_ERR_BAD_HANDLE,
                                 "pointer was not allocated by aclrtMalloc or is already freed");
        }
        std::free(pointer);
        return NNPLUG_OK;
    });
}

std::string address_text(const void* pointer) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", pointer);
    return text;
}

// Whether [pointer, pointer + bytes) lies inside one live aclrtMalloc block; else the reason.
// Device memory is host memory here, so only this tells a copy past a block from a good one.
bool in_live_block(CpuContext& context, const char* side, const void* pointer, size_t bytes,
                   std::string& error) {
    const auto address = reinterpret_cast<uintptr_t>(pointer);
    std::lock_guard lock(context.memory_mutex);
    const auto after = context.allocations.upper_bound(address);
    if (after != context.allocations.begin()) {
        const auto& [start, size] = *std::prev(after);
        if (address - start < size && bytes <= size - (address - start)) return true;
        if (address - start < size) {
            error = std::string(side) + " " + address_text(pointer) + ": " + std::to_string(bytes) +
                    " bytes run past the end of its " + std::to_string(size) + "-byte aclrtMalloc block";
            return false;
        }
    }
    error = std::string(side) + " " + address_text(pointer) + " (" + std::to_string(bytes) +
            " bytes) is not inside one live aclrtMalloc block";
    return false;
}

nnplug_status device_memcpy(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind) {
    return sdk::fenced("cannot copy", [&] {
        auto& context = as_context(ctx);
        const bool src_device =
            kind == NNPLUG_MEMCPY_DEVICE_TO_HOST || kind == NNPLUG_MEMCPY_DEVICE_TO_DEVICE;
        const bool dst_device =
            kind == NNPLUG_MEMCPY_HOST_TO_DEVICE || kind == NNPLUG_MEMCPY_DEVICE_TO_DEVICE;
        std::string error;
        if ((dst_device && !in_live_block(context, "dst", dst, bytes, error)) ||
            (src_device && !in_live_block(context, "src", src, bytes, error)))
            return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, error);
        std::memmove(dst, src, bytes);  // every kind is host memory here
        return NNPLUG_OK;
    });
}

nnplug_status device_memset(void* ctx, void* pointer, int32_t value, size_t bytes) {
    return sdk::fenced("cannot set memory", [&] {
        std::string error;
        if (!in_live_block(as_context(ctx), "devPtr", pointer, bytes, error))
            return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, error);
        std::memset(pointer, value, bytes);
        return NNPLUG_OK;
    });
}

nnplug_status stream_create(void* ctx, void** stream) {
    return sdk::fenced("cannot create a stream", [&] {
        auto& context = as_context(ctx);
        std::lock_guard lock(context.streams_mutex);
        auto handle = std::make_unique<char>();  // a distinct handle; work runs at enqueue time
        context.streams.insert(handle.get());
        *stream = handle.release();
        return NNPLUG_OK;
    });
}

nnplug_status stream_destroy(void* ctx, void* stream) {
    return sdk::fenced("cannot destroy a stream", [&] {
        auto& context = as_context(ctx);
        std::lock_guard lock(context.streams_mutex);
        if (context.streams.erase(stream) == 0) return sdk::fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
        delete static_cast<char*>(stream);
        return NNPLUG_OK;
    });
}

nnplug_status stream_synchronize(void*, void*) {
    return NNPLUG_OK;
}

// The system's oneTBB is not built with ThreadSanitizer, which cannot see its hand-offs:
// a TSan build declares the two the results depend on (the caller's writes happen before
// every task starts, every task's writes happen before execute returns). Without them TSan
// takes every access of every task for a race. tests/concurrency/tsan_suppressions.txt
// covers TBB's own.
#if defined(__SANITIZE_THREAD__)
void happens_before(void* token) {
    __tsan_release(token);
}
void happens_after(void* token) {
    __tsan_acquire(token);
}
#else
void happens_before(void*) {}
void happens_after(void*) {}
#endif

// Runs body(begin, end) over [0, count) in tasks of at least `grain` items; small
// counts run inline, so a tiny call costs no scheduling.
template <typename Body>
void parallel_ranges(CpuContext& context, int64_t count, int64_t grain, Body&& body) {
    if (context.threads == 1 || count <= grain) {
        body(int64_t{0}, count);
        return;
    }
    char started = 0, finished = 0;  // their addresses are the tokens of the hand-offs
    happens_before(&started);
    context.arena->execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<int64_t>(0, count, grain),
            [&](const tbb::blocked_range<int64_t>& range) {
                happens_after(&started);
                body(range.begin(), range.end());
                happens_before(&finished);
            },
            tbb::static_partitioner());
    });
    happens_after(&finished);
}

nnplug_status launch_elementwise(CpuContext& context, const VectorKernels& kernels,
                                 const nnplug_op_desc& desc, void* workspace, uint64_t workspace_size) {
    const ElementwiseCall call(kernels, desc);
    if (!call.reduces()) {
        parallel_ranges(context, desc.numel, context.grain,
                        [&](int64_t begin, int64_t end) { call.compute_range(begin, end); });
        return NNPLUG_OK;
    }
    if (kernels.sum == nullptr) return sdk::fail(NNPLUG_ERR_UNSUPPORTED, "cpu_tbb cannot reduce this op");
    const int64_t chunks = call.reduce_chunks();
    const uint64_t needed = workspace_bytes(kernels, desc);
    if (needed > 0 && (workspace == nullptr || workspace_size < needed))
        return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, "the workspace holds " +
                                                          std::to_string(workspace_size) +
                                                          " bytes, the call needs " + std::to_string(needed));
    double single = 0;
    double* partials = chunks > 1 ? static_cast<double*>(workspace) : &single;
    const int64_t chunks_per_task = std::max<int64_t>(1, context.grain / kReduceChunk);
    parallel_ranges(context, chunks, chunks_per_task, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) partials[c] = call.sum_chunk(c);
    });
    call.finish_reduction(partials, chunks);
    return NNPLUG_OK;
}

// The ops whose kernels the <op>_simd.cpp files register, one entry per op kind.
const std::vector<OpKernels>& registered_ops() {
    static const std::vector<OpKernels> ops = [] {
        std::vector<OpKernels> all;
#define NNPLUG_OP_SOURCE(stem) register_##stem(all);
#include "cpu_tbb_op_sources.inc"
#undef NNPLUG_OP_SOURCE
        return all;
    }();
    return ops;
}

const VectorKernels& kernels_of(const nnplug_op_desc& desc) {
    for (const OpKernels& op : registered_ops())
        if (op.op == desc.op) return op.kernels();
    throw std::invalid_argument("cpu_tbb has no kernels for op " + std::to_string(desc.op));
}

nnplug_status op_prepare(void*, const nnplug_op_desc* desc, void** plan, uint64_t* workspace) {
    return sdk::fenced("cannot plan the call", [&] {
        *plan = nullptr;  // nothing to keep: a launch recomputes its few decisions
        *workspace = common::is_class_op(desc->op) ? 0 : workspace_bytes(kernels_of(*desc), *desc);
        return NNPLUG_OK;
    });
}

// An op with a class axis: its chunks of rows over the arena, at least `grain` elements a
// task. An NLLLoss forward reads one element of a row, so a task there is `grain` rows.
nnplug_status launch_class_op(CpuContext& context, const nnplug_op_desc& desc) {
    const bool row_work = desc.op == NNPLUG_OP_NLL_LOSS || desc.op == NNPLUG_OP_NLL_LOSS_2D;
    const int64_t classes =
        row_work ? 1 : std::max<int64_t>(1, desc.dims[std::max(0, nnplug_desc_class_axis(&desc))]);
    const int64_t chunks_per_task = std::max<int64_t>(1, context.grain / (common::kClassRowChunk * classes));
    const std::string refusal = common::run_class_op(
        desc, [&](int64_t count, auto&& body) { parallel_ranges(context, count, chunks_per_task, body); });
    return refusal.empty() ? NNPLUG_OK : sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, refusal);
}

nnplug_status op_launch(void* ctx, const void*, const nnplug_op_desc* desc, void* workspace,
                        uint64_t workspace_size, void*) {
    return sdk::fenced("kernel failed", [&] {
        if (common::is_class_op(desc->op)) return launch_class_op(as_context(ctx), *desc);
        return launch_elementwise(as_context(ctx), kernels_of(*desc), *desc, workspace, workspace_size);
    });
}

// The op tables, made once from the registered kernels.
struct OpTables {
    std::vector<nnplug_op_i> ops;
    std::vector<const nnplug_op_i*> pointers;
    OpTables() {
        std::vector<int32_t> kinds;
        for (const OpKernels& registered : registered_ops()) kinds.push_back(registered.op);
        for (int32_t kind = 0; kind < NNPLUG_OP_KIND_COUNT; ++kind)
            if (common::is_class_op(kind)) kinds.push_back(kind);
        for (const int32_t kind : kinds) {
            auto entry = sdk::table<nnplug_op_i>();
            entry.op = kind;
            entry.name = nnplug_op_api_name(kind);
            entry.prepare = op_prepare;
            entry.launch = op_launch;
            ops.push_back(entry);
        }
        for (const nnplug_op_i& op : ops) pointers.push_back(&op);
    }
};
const OpTables kOps;

const nnplug_device_i kDevice = [] {
    auto device = sdk::table<nnplug_device_i>();
    device.memory_kind = NNPLUG_MEMORY_HOST;
    device.malloc = device_malloc;
    device.free = device_free;
    device.memcpy = device_memcpy;
    device.memset = device_memset;
    device.stream_create = stream_create;
    device.stream_destroy = stream_destroy;
    device.stream_synchronize = stream_synchronize;
    return device;
}();

const nnplug_plugin kPlugin = [] {
    auto plugin = sdk::table<nnplug_plugin>();
    plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
    plugin.name = "cpu_tbb";
    plugin.description = "CPU backend: oneTBB threads over host memory";
    plugin.options = kOptions;
    plugin.option_count = std::size(kOptions);
    plugin.create = create;
    plugin.destroy = destroy;
    plugin.soc_name = soc_name;
    plugin.dtype_mask = dtype_mask;
    plugin.last_error = sdk::last_error;
    plugin.device = &kDevice;
    plugin.ops = kOps.pointers.data();
    plugin.op_count = kOps.pointers.size();
    return plugin;
}();

}  // namespace
}  // namespace nnplug::cpu

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &nnplug::cpu::kPlugin;
}
