#include "elementwise_kernel.h"

#include <nnplug/plugin_support.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "chrome_trace.h"
#include "dtype_convert_simd.h"
#include "reduction.h"
#include "strided_runs.h"
#include "unified_buffer.h"

namespace nnplug::emu {

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
        storage.data =
            static_cast<std::byte*>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
        storage.size = storage.data ? bytes : 0;
        if (!storage.data) throw std::bad_alloc();
    }
    return storage.data;
}

namespace {

// Moves raw elements between the strided view and a contiguous buffer (no conversion).
template <typename Raw>
void copy_view(const nnplug_op_desc& desc, const nnplug_tensor& t, int64_t begin, int64_t end,
               Raw* contiguous, bool into_view) {
    Raw* view = static_cast<Raw*>(t.data);
    int64_t linear = begin;
    common::for_each_run(desc, t, begin, end, [&](int64_t offset, int64_t stride, int64_t length) {
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

void copy_view_range(const nnplug_op_desc& desc, const nnplug_tensor& t, int64_t begin, int64_t end,
                     void* contiguous, bool into_view) {
    if (size_of(t.dtype) == 4)
        copy_view(desc, t, begin, end, static_cast<uint32_t*>(contiguous), into_view);
    else
        copy_view(desc, t, begin, end, static_cast<uint16_t*>(contiguous), into_view);
}

struct CoreResults {
    explicit CoreResults(int block_dim)
        : faults(static_cast<size_t>(block_dim)), spans(static_cast<size_t>(block_dim)) {}
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

// Splits [0, numel) over the cores for the contiguous copies (GM to GM, no UB): the
// staged inputs before the vector kernel, the staged output after it.
void run_view_copies(const nnplug_op_desc& desc, const ElementwiseTiling& tiling, std::byte* workspace,
                     bool into_view, CorePool& cores, LaunchStats& stats) {
    const char* kernel = into_view ? "ViewCopy" : "Contiguous";
    std::vector<int> slots;
    for (int o = 0; o < desc.operand_count; ++o)
        if (tiling.staged[o] && (o == tiling.output) == into_view) slots.push_back(o);
    if (slots.empty()) return;
    CoreResults results(tiling.block_dim);
    cores.run(tiling.block_dim, [&](int core) {
        const double begin_us = host_microseconds();
        const int64_t begin = core * tiling.elements_per_core;
        const int64_t end = std::min(desc.numel, begin + tiling.elements_per_core);
        for (int o : slots) {
            const nnplug_tensor& t = desc.operands[o];
            copy_view_range(desc, t, begin, end, workspace + tiling.staged_offset[o], into_view);
            results.bytes_moved += 2 * (end - begin) * size_of(t.dtype);
        }
        results.spans[static_cast<size_t>(core)] = {core, kernel, begin_us, host_microseconds(), 0};
    });
    stats.bytes_moved += results.bytes_moved;
    stats.spans.insert(stats.spans.end(), results.spans.begin(), results.spans.end());
}

// What every core of one launch shares: the arguments, where each moved operand's element 0
// lives (contiguous, in global memory), the dtype each input's widened tile is rounded to
// (float32: left as it is), and where the cores leave their results.
struct CoreLaunch {
    const nnplug_op_desc& desc;
    const ElementwiseOp& op;
    const ElementwiseTiling& tiling;
    const KernelOptions& options;
    std::array<std::byte*, NNPLUG_MAX_OPERANDS> global{};
    std::array<int32_t, NNPLUG_MAX_OPERANDS> round_to{};
    double* partials = nullptr;
    CoreResults results;

    CoreLaunch(const nnplug_op_desc& desc_, const ElementwiseOp& op_, const ElementwiseTiling& tiling_,
               const KernelOptions& options_, std::byte* workspace)
        : desc(desc_), op(op_), tiling(tiling_), options(options_), results(tiling_.block_dim) {
        for (int o = 0; o < desc.operand_count; ++o) {
            if (!tiling.used[o]) continue;
            const nnplug_tensor& t = desc.operands[o];
            global[o] = tiling.staged[o] ? workspace + tiling.staged_offset[o]
                                         : static_cast<std::byte*>(t.data) + t.offset * size_of(t.dtype);
        }
        partials = reinterpret_cast<double*>(workspace + tiling.partials_offset);
        round_to.fill(NNPLUG_DTYPE_F32);
        const int64_t promoted = nnplug_attr_i64(&desc, NNPLUG_ATTR_PROMOTED_DTYPE, NNPLUG_DTYPE_F32);
        for (int o = 0; o < desc.operand_count; ++o)
            if (tiling.is_input(o) && (op.rounded_to_promoted >> o & 1u) != 0 &&
                desc.operands[o].dtype != promoted)
                round_to[o] = static_cast<int32_t>(promoted);
    }

    // Copies the tile's inputs into its slot of the UB, widened (and rounded) to float32;
    // false on a UB fault.
    bool load_tile(UnifiedBuffer& ub, int slot, int64_t start, int64_t n, TileInputs& in) const {
        for (int o = 0; o < desc.operand_count; ++o) {
            if (!tiling.is_input(o)) continue;
            const int32_t dtype = desc.operands[o].dtype;
            const int64_t size = size_of(dtype);
            const int64_t at = tiling.slot_offset[o][slot];
            if (!ub.copy_in(at, global[o] + start * size, n * size)) return false;
            float* widened = ub.at<float>(at);
            if (tiling.cast_offset[o] >= 0) {
                widened = ub.at<float>(tiling.cast_offset[o]);
                simd::convert_to_f32(dtype, ub.at<uint16_t>(at), widened, n);
            }
            if (round_to[o] != NNPLUG_DTYPE_F32) simd::round_to_dtype(round_to[o], widened, n);
            in[o] = widened;
        }
        return true;
    }

    // One tile through the op: its result stored to global memory, or (a reduction) added
    // to the core's four lanes in a fixed order, as the CPU backend sums its chunks.
    bool run_tile(UnifiedBuffer& ub, int slot, int64_t start, int64_t n, double (&lanes)[4]) const {
        TileInputs in{};
        if (!load_tile(ub, slot, start, n, in)) return false;
        if (options.check_inputs && op.check_inputs != nullptr) {
            std::string outside = op.check_inputs(in, n, start);
            if (!outside.empty()) return ub.fault(std::move(outside));
        }
        const int output = tiling.output;
        float* result = tiling.result_offset >= 0 ? ub.at<float>(tiling.result_offset)
                                                  : ub.at<float>(tiling.slot_offset[output][slot]);
        op.compute(desc, in, n, result);
        if (tiling.reduces) {
            int64_t i = 0;
            for (; i + 4 <= n; i += 4)
                for (int lane = 0; lane < 4; ++lane) lanes[lane] += result[i + lane];
            for (; i < n; ++i) lanes[i % 4] += result[i];
            return true;
        }
        const int32_t output_dtype = desc.operands[output].dtype;
        const int64_t out_size = size_of(output_dtype);
        const int64_t out_at = tiling.slot_offset[output][slot];
        if (tiling.result_offset >= 0)
            simd::convert_from_f32(output_dtype, result, ub.at<uint16_t>(out_at), n);
        return ub.copy_out(global[output] + start * out_size, out_at, n * out_size);
    }

    // One core's share of the elements, tile by tile, ping-ponging between two UB slots.
    void run_core(int core) {
        const double begin_us = host_microseconds();
        UnifiedBuffer ub(core_storage(options.ub_bytes), options.ub_bytes, options.soc_name);
        const int64_t begin = core * tiling.elements_per_core;
        const int64_t end = std::min(desc.numel, begin + tiling.elements_per_core);
        double lanes[4] = {0, 0, 0, 0};
        int64_t tiles = 0;
        bool ok = ub.reserve(tiling.ub_bytes);
        for (int64_t start = begin; ok && start < end; start += tiling.tile_elements, ++tiles)
            ok = run_tile(ub, static_cast<int>(tiles & 1), start, std::min(tiling.tile_elements, end - start),
                          lanes);
        if (ok && tiling.reduces) partials[core] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        results.faults[static_cast<size_t>(core)] = ub.fault_message();
        results.bytes_moved += ub.bytes_moved();
        results.spans[static_cast<size_t>(core)] = {core, op.kernel_name, begin_us, host_microseconds(),
                                                    tiles};
    }
};

}  // namespace

std::string run_elementwise(const nnplug_op_desc& desc, const ElementwiseOp& op,
                            const ElementwiseTiling& tiling, void* workspace_pointer,
                            const KernelOptions& options, CorePool& cores, LaunchStats& stats) {
    auto* workspace = static_cast<std::byte*>(workspace_pointer);
    run_view_copies(desc, tiling, workspace, false, cores, stats);

    CoreLaunch launch(desc, op, tiling, options, workspace);
    cores.run(tiling.block_dim, [&](int core) { launch.run_core(core); });
    stats.bytes_moved += launch.results.bytes_moved;
    stats.spans.insert(stats.spans.end(), launch.results.spans.begin(), launch.results.spans.end());
    if (std::string fault = launch.results.first_fault(); !fault.empty()) return fault;

    if (tiling.reduces) {
        const nnplug_tensor& output = desc.operands[tiling.output];
        common::finish_reduction(desc, output, launch.partials, tiling.block_dim);
        stats.bytes_moved += static_cast<int64_t>(tiling.block_dim * sizeof(double)) + size_of(output.dtype);
    }
    run_view_copies(desc, tiling, workspace, true, cores, stats);
    return {};
}

}  // namespace nnplug::emu
