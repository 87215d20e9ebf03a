// scalar_ref: a reference backend in plain scalar loops, the example of docs/writing-a-plugin.md.
//
// Device memory is host memory, streams are synchronous (a launch has finished when it
// returns), and every elementwise op walks the descriptor's iteration space one element at a
// time, reading and writing each operand through its strides, evaluating the canonical float32
// expressions of <nnplug/ops/*_math.h>. The ops with a class axis walk it one row at a time.
// Slow, short, and right: a backend to compare with.
//
// This file is the device and the plugin's tables; each op family is a file of its own,
// scalar_ref_<family>.cpp, which registers its ops (scalar_ref_walk.h). The
// SCALAR_REF_BUG_* definitions build deliberately wrong variants (see scalar_ref_walk.h).
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "scalar_ref_walk.h"

namespace sdk = nnplug::sdk;

#ifndef SCALAR_REF_NAME
#define SCALAR_REF_NAME "scalar_ref"
#endif

namespace {

// ---- The device: host memory and synchronous streams ----------------------------------

struct Context {
    std::mutex mutex;             // the runtime may call from several threads at once
    std::set<void*> allocations;  // to refuse freeing what this device did not allocate
#ifdef SCALAR_REF_BUG_RACE
    nnplug_op_desc launching;  // BUG: one descriptor copy shared by every launch
#endif
};

Context& of(void* ctx) {
    return *static_cast<Context*>(ctx);
}

nnplug_status device_malloc(void* ctx, size_t bytes, void** ptr) {
    return sdk::fenced("malloc", [&] {
        void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);  // CANN aligns blocks to 64 bytes at least
        if (p == nullptr)
            return sdk::fail(NNPLUG_ERR_OUT_OF_MEMORY, "no memory for " + std::to_string(bytes) + " bytes");
        std::lock_guard lock(of(ctx).mutex);
        of(ctx).allocations.insert(p);
        *ptr = p;
        return NNPLUG_OK;
    });
}

nnplug_status device_free(void* ctx, void* ptr) {
    std::lock_guard lock(of(ctx).mutex);
    if (of(ctx).allocations.erase(ptr) == 0)
        return sdk::fail(NNPLUG_ERR_BAD_HANDLE, "not allocated by scalar_ref");
    std::free(ptr);
    return NNPLUG_OK;
}

nnplug_status device_memcpy(void*, void* dst, const void* src, size_t bytes, int32_t) {
    std::memmove(dst, src, bytes);
    return NNPLUG_OK;
}

nnplug_status device_memset(void*, void* ptr, int32_t value, size_t bytes) {
    std::memset(ptr, value, bytes);
    return NNPLUG_OK;
}

nnplug_status stream_create(void*, void** stream) {
    return sdk::fenced("stream_create", [&] {
        *stream = new char;  // a token: work is done by the time a launch returns
        return NNPLUG_OK;
    });
}

nnplug_status stream_destroy(void*, void* stream) {
    delete static_cast<char*>(stream);
    return NNPLUG_OK;
}

nnplug_status stream_synchronize(void*, void*) {
    return NNPLUG_OK;
}

#ifdef SCALAR_REF_BUG_STALE_INPUTS
// BUG: the plan keeps the first phase's descriptor, and launches read the inputs where it
// says, though aclSetTensorAddr may have moved them since.
nnplug_status prepare(void*, const nnplug_op_desc* desc, void** plan, uint64_t* workspace_bytes) {
    *plan = new nnplug_op_desc(*desc);
    *workspace_bytes = 0;
    return NNPLUG_OK;
}

void release(void*, void* plan) {
    delete static_cast<nnplug_op_desc*>(plan);
}
#else
// Nothing to plan and no workspace.
nnplug_status prepare(void*, const nnplug_op_desc*, void** plan, uint64_t* workspace_bytes) {
    *plan = nullptr;
    *workspace_bytes = 0;
    return NNPLUG_OK;
}
#endif

nnplug_status launch(void* ctx, [[maybe_unused]] const void* plan, const nnplug_op_desc* desc, void*,
                     uint64_t, void*) {
    return sdk::fenced("launch", [&] {
#ifdef SCALAR_REF_BUG_RACE  // BUG: launches from several threads overwrite each other's descriptor
        of(ctx).launching = *desc;
        desc = &of(ctx).launching;
#else
        (void)ctx;
#endif
#ifdef SCALAR_REF_BUG_STALE_INPUTS
        nnplug_op_desc stale = *desc;
        for (int32_t k = 0; k < stale.operand_count; ++k)
            if (!(stale.operands[k].flags & NNPLUG_OPERAND_OUTPUT))
                stale.operands[k].data = static_cast<const nnplug_op_desc*>(plan)->operands[k].data;
        desc = &stale;
#endif
        for (const auto& [kind, run] : scalar_ref::registry())
            if (kind == desc->op) return run(*desc);
        return sdk::fail(NNPLUG_ERR_UNSUPPORTED, "scalar_ref has no op " + std::to_string(desc->op));
    });
}

// ---- The tables ---------------------------------------------------------------------------

nnplug_status create(const nnplug_option* options, size_t option_count, int32_t, void** ctx) {
    return sdk::fenced("create", [&] {
        if (option_count > 0)  // scalar_ref declares no options, so the runtime passes none
            return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT,
                             std::string("unknown option '") + options[0].key + "'");
        *ctx = new Context;
        return NNPLUG_OK;
    });
}

void destroy(void* ctx) {
    for (void* p : of(ctx).allocations) std::free(p);
    delete static_cast<Context*>(ctx);
}

const char* soc_name(void*) {
    return "CPU";
}

uint32_t dtype_mask(void*) {  // the integer types are the class-axis ops' targets
    return NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32) |
           NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_U8);
}

const nnplug_device_i kDevice = [] {
    auto device = sdk::table<nnplug_device_i>();
    device.memory_kind = NNPLUG_MEMORY_HOST;
    device.malloc = device_malloc;
    device.free = device_free;
    device.memcpy = device_memcpy;  // memcpy_async stays null: the runtime synchronizes, then copies
    device.memset = device_memset;
    device.stream_create = stream_create;
    device.stream_destroy = stream_destroy;
    device.stream_synchronize = stream_synchronize;
    return device;
}();

nnplug_op_i op_table(int32_t kind) {
    auto op = sdk::table<nnplug_op_i>();
    op.op = kind;
    op.name = nnplug_op_api_name(kind);
    op.prepare = prepare;
    op.launch = launch;
#ifdef SCALAR_REF_BUG_STALE_INPUTS
    op.release = release;
#endif
    return op;
}

// One table per registered op, in kind order, built on first use (after every op file's
// registration has run).
struct OpTables {
    std::vector<nnplug_op_i> ops;
    std::vector<const nnplug_op_i*> pointers;
    OpTables() {
        for (const auto& entry : scalar_ref::registry()) ops.push_back(op_table(entry.first));
        std::sort(ops.begin(), ops.end(),
                  [](const nnplug_op_i& a, const nnplug_op_i& b) { return a.op < b.op; });
        for (const nnplug_op_i& op : ops) pointers.push_back(&op);
    }
};

const nnplug_plugin& plugin_table() {
    static const OpTables tables;
    static const nnplug_plugin plugin = [] {
        auto plugin = sdk::table<nnplug_plugin>();
        plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
        plugin.name = SCALAR_REF_NAME;
        plugin.description = "scalar reference loops over host memory (the SDK's example plugin)";
        plugin.create = create;
        plugin.destroy = destroy;
        plugin.soc_name = soc_name;
        plugin.dtype_mask = dtype_mask;
        plugin.last_error = sdk::last_error;
        plugin.device = &kDevice;
        plugin.ops = tables.pointers.data();
        plugin.op_count = tables.pointers.size();
        return plugin;
    }();
    return plugin;
}

}  // namespace

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    return &plugin_table();
}
