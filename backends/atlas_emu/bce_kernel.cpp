#include "bce_kernel.h"

#include <nnplug/ops/bce_math.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "bce_forward_tile.h"
#include "pairwise_sum.h"
#include "unified_buffer.h"

namespace nnplug::emu {
namespace {

int64_t size_of(int32_t dtype) { return static_cast<int64_t>(nnplug_dtype_size(dtype)); }

// Calls run(element_offset, inner_stride, length) for each innermost run of t over
// the linear range [begin, end) of the iteration space.
template <typename Run>
void for_each_run(const nnplug_op_desc& desc, const nnplug_tensor& t, int64_t begin, int64_t end, Run&& run) {
    const int ndim = desc.ndim;
    if (ndim == 0) {
        if (begin < end) run(t.offset, int64_t{0}, int64_t{1});
        return;
    }
    std::array<int64_t, NNPLUG_MAX_DIMS> index{};
    int64_t remainder = begin;
    int64_t offset = t.offset;
    for (int k = ndim - 1; k >= 0; --k) {
        index[k] = remainder % desc.dims[k];
        remainder /= desc.dims[k];
        offset += index[k] * t.strides[k];
    }
    const int64_t inner = desc.dims[ndim - 1];
    int64_t position = begin;
    while (position < end) {
        const int64_t length = std::min(inner - index[ndim - 1], end - position);
        run(offset, t.strides[ndim - 1], length);
        position += length;
        offset += length * t.strides[ndim - 1];
        index[ndim - 1] += length;
        for (int k = ndim - 1; k > 0 && index[k] == desc.dims[k]; --k) {
            index[k] = 0;
            ++index[k - 1];
            offset += t.strides[k - 1] - desc.dims[k] * t.strides[k];
        }
    }
}

// Moves raw elements between the strided view and a contiguous buffer (no conversion).
template <typename Raw>
void copy_view(const nnplug_op_desc& desc, const nnplug_tensor& t, int64_t begin, int64_t end, Raw* contiguous,
               bool into_view) {
    Raw* view = static_cast<Raw*>(t.data);
    int64_t linear = begin;
    for_each_run(desc, t, begin, end, [&](int64_t offset, int64_t stride, int64_t length) {
        Raw* run = view + offset;
        Raw* packed = contiguous + linear;
        if (into_view) {
            for (int64_t i = 0; i < length; ++i) run[i * stride] = packed[i];
        } else if (stride == 0) {
            std::fill(packed, packed + length, run[0]);
        } else {
            for (int64_t i = 0; i < length; ++i) packed[i] = run[i * stride];
        }
        linear += length;
    });
}

void copy_view_range(const nnplug_op_desc& desc, const nnplug_tensor& t, int64_t begin, int64_t end, void* contiguous,
                     bool into_view) {
    if (size_of(t.dtype) == 4)
        copy_view(desc, t, begin, end, static_cast<uint32_t*>(contiguous), into_view);
    else
        copy_view(desc, t, begin, end, static_cast<uint16_t*>(contiguous), into_view);
}

// Each host thread keeps one Unified Buffer's storage for the cores it runs.
std::byte* core_storage(int64_t bytes) {
    struct Storage {
        std::byte* data = nullptr;
        int64_t size = 0;
        ~Storage() { std::free(data); }
    };
    thread_local Storage storage;
    if (storage.size < bytes) {
        std::free(storage.data);
        storage.data = static_cast<std::byte*>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
        storage.size = storage.data ? bytes : 0;
        if (!storage.data) throw std::bad_alloc();
    }
    return storage.data;
}

void widen(const uint16_t* raw, int32_t dtype, int64_t n, float* into) {
    if (dtype == NNPLUG_DTYPE_F16)
        for (int64_t i = 0; i < n; ++i) into[i] = f16_to_f32(raw[i]);
    else
        for (int64_t i = 0; i < n; ++i) into[i] = bf16_to_f32(raw[i]);
}

void narrow(const float* values, int32_t dtype, int64_t n, uint16_t* into) {
    if (dtype == NNPLUG_DTYPE_F16)
        for (int64_t i = 0; i < n; ++i) into[i] = f32_to_f16(values[i]);
    else
        for (int64_t i = 0; i < n; ++i) into[i] = f32_to_bf16(values[i]);
}

// The backward is bce_math.h's float32 expression exactly; the forward is the vector
// kernel the CPU backend uses (within 2 float32 ulp of bce_forward). An absent weight is 1.
void compute_tile(const nnplug_op_desc& desc, int64_t n, const std::array<const float*, kOperands>& in, float scale,
                  float* result) {
    const float* g = in[kGrad];
    const float* s = in[kSelf];
    const float* t = in[kTarget];
    const float* w = in[kWeight];
    if (desc.op == NNPLUG_OP_BCE_BACKWARD) {
        if (w != nullptr)
            for (int64_t i = 0; i < n; ++i) result[i] = bce_backward(g[i], w[i], s[i], t[i], scale);
        else
            for (int64_t i = 0; i < n; ++i) result[i] = bce_backward(g[i], 1.0f, s[i], t[i], scale);
    } else {
        simd::forward_tile(s, t, w, result, n);
    }
}

struct CoreResults {
    explicit CoreResults(int block_dim) : faults(static_cast<size_t>(block_dim)), spans(static_cast<size_t>(block_dim)) {}
    std::vector<std::string> faults;
    std::vector<CoreSpan> spans;
    std::atomic<int64_t> bytes_moved{0};

    // The fault of the lowest core: the same message whatever the host threads did.
    std::string first_fault() const {
        for (size_t core = 0; core < faults.size(); ++core)
            if (!faults[core].empty()) return faults[core] + " (core " + std::to_string(core) + ")";
        return {};
    }
};

// Splits [0, numel) over the cores for the contiguous copies (GM to GM, no UB).
void run_view_copies(const nnplug_op_desc& desc, const BceTiling& tiling, std::byte* workspace, bool into_view,
                     CorePool& cores, LaunchStats& stats) {
    const char* kernel = into_view ? "ViewCopy" : "Contiguous";
    std::vector<int> operands;
    for (int o = 0; o < kOperands; ++o)
        if (tiling.staged[o] && (o == kOut) == into_view) operands.push_back(o);
    if (operands.empty()) return;
    CoreResults results(tiling.block_dim);
    cores.run(tiling.block_dim, [&](int core) {
        const double begin_us = host_microseconds();
        const int64_t begin = core * tiling.elements_per_core;
        const int64_t end = std::min(desc.numel, begin + tiling.elements_per_core);
        for (int o : operands) {
            const nnplug_tensor& t = operand(desc, o);
            copy_view_range(desc, t, begin, end, workspace + tiling.staged_offset[o], into_view);
            results.bytes_moved += 2 * (end - begin) * size_of(t.dtype);
        }
        results.spans[static_cast<size_t>(core)] = {core, kernel, begin_us, host_microseconds(), 0};
    });
    stats.bytes_moved += results.bytes_moved;
    stats.spans.insert(stats.spans.end(), results.spans.begin(), results.spans.end());
}

}  // namespace

double host_microseconds() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

std::string run_bce(const nnplug_op_desc& desc, const BceTiling& tiling, void* workspace_pointer,
                    const KernelOptions& options, CorePool& cores, LaunchStats& stats) {
    auto* workspace = static_cast<std::byte*>(workspace_pointer);
    run_view_copies(desc, tiling, workspace, false, cores, stats);

    // Where each operand's element 0 lives, contiguous, in global memory.
    std::array<std::byte*, kOperands> global{};
    for (int o = 0; o < kOperands; ++o) {
        if (!tiling.used[o]) continue;
        const nnplug_tensor& t = operand(desc, o);
        global[o] = tiling.staged[o] ? workspace + tiling.staged_offset[o]
                                     : static_cast<std::byte*>(t.data) + t.offset * size_of(t.dtype);
    }
    auto* partials = reinterpret_cast<double*>(workspace + tiling.partials_offset);
    const float scale = desc.op == NNPLUG_OP_BCE_BACKWARD && desc.reduction == NNPLUG_REDUCTION_MEAN
                            ? bce_mean_scale(desc.reduce_count)
                            : 1.0f;
    const char* kernel = desc.op == NNPLUG_OP_BCE_BACKWARD ? "BinaryCrossEntropyGrad" : "BinaryCrossEntropy";

    CoreResults results(tiling.block_dim);
    cores.run(tiling.block_dim, [&](int core) {
        const double begin_us = host_microseconds();
        UnifiedBuffer ub(core_storage(options.ub_bytes), options.ub_bytes, options.soc_name);
        const int64_t begin = core * tiling.elements_per_core;
        const int64_t end = std::min(desc.numel, begin + tiling.elements_per_core);
        double lanes[4] = {0, 0, 0, 0};
        int64_t tiles = 0;
        bool ok = ub.reserve(tiling.ub_bytes);
        for (int64_t start = begin; ok && start < end; start += tiling.tile_elements, ++tiles) {
            const int64_t n = std::min(tiling.tile_elements, end - start);
            const int slot = static_cast<int>(tiles & 1);  // ping-pong between the two slots
            std::array<const float*, kOperands> in{};
            for (int o = 0; ok && o < kOut; ++o) {
                if (!tiling.used[o]) continue;
                const int32_t dtype = operand(desc, o).dtype;
                const int64_t size = size_of(dtype);
                const int64_t at = tiling.slot_offset[o][slot];
                ok = ub.copy_in(at, global[o] + start * size, n * size);
                if (!ok) break;
                if (tiling.cast_offset[o] >= 0) {
                    widen(ub.at<uint16_t>(at), dtype, n, ub.at<float>(tiling.cast_offset[o]));
                    in[o] = ub.at<float>(tiling.cast_offset[o]);
                } else {
                    in[o] = ub.at<float>(at);
                }
            }
            if (!ok) break;
            if (options.check_inputs) {
                const float* s = in[kSelf];
                for (int64_t i = 0; i < n; ++i) {
                    if (!(s[i] >= 0.0f && s[i] <= 1.0f)) {
                        ok = ub.fault("self element " + std::to_string(start + i) + " is " + std::to_string(s[i]) +
                                      ", outside [0, 1] (option check_inputs)");
                        break;
                    }
                }
                if (!ok) break;
            }
            float* result = tiling.result_offset >= 0 ? ub.at<float>(tiling.result_offset)
                                                      : ub.at<float>(tiling.slot_offset[kOut][slot]);
            compute_tile(desc, n, in, scale, result);
            if (tiling.reduces()) {
                // Four double lanes in a fixed order, as the CPU backend sums its chunks.
                int64_t i = 0;
                for (; i + 4 <= n; i += 4)
                    for (int lane = 0; lane < 4; ++lane) lanes[lane] += result[i + lane];
                for (; i < n; ++i) lanes[i % 4] += result[i];
                continue;
            }
            const int64_t out_size = size_of(desc.out.dtype);
            const int64_t out_at = tiling.slot_offset[kOut][slot];
            if (tiling.result_offset >= 0) narrow(result, desc.out.dtype, n, ub.at<uint16_t>(out_at));
            ok = ub.copy_out(global[kOut] + start * out_size, out_at, n * out_size);
        }
        if (ok && tiling.reduces()) partials[core] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        results.faults[static_cast<size_t>(core)] = ub.fault_message();
        results.bytes_moved += ub.bytes_moved();
        results.spans[static_cast<size_t>(core)] = {core, kernel, begin_us, host_microseconds(), tiles};
    });
    stats.bytes_moved += results.bytes_moved;
    stats.spans.insert(stats.spans.end(), results.spans.begin(), results.spans.end());
    if (std::string fault = results.first_fault(); !fault.empty()) return fault;

    if (tiling.reduces()) {
        double total = pairwise_sum(partials, tiling.block_dim);
        if (desc.reduction == NNPLUG_REDUCTION_MEAN) total /= static_cast<double>(desc.reduce_count);
        store_from_f32(static_cast<std::byte*>(desc.out.data) + desc.out.offset * size_of(desc.out.dtype),
                       desc.out.dtype, 0, static_cast<float>(total));
        stats.bytes_moved += static_cast<int64_t>(tiling.block_dim * sizeof(double)) + size_of(desc.out.dtype);
    }
    run_view_copies(desc, tiling, workspace, true, cores, stats);
    return {};
}

}  // namespace nnplug::emu
