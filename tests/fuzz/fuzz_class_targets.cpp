// libFuzzer target: the six ops with a class axis (aclnnNLLLoss, aclnnNLLLoss2d, their
// backwards, aclnnCrossEntropyLoss and its gradient) called with well-formed shapes and
// hostile class indices in their targets, on cpu_tbb and atlas_emu Ascend910B.
//
// The input is read front to back (past its end every byte reads 0):
//   backend  byte % 2: cpu_tbb, atlas_emu Ascend910B; NNPLUG_BACKEND, when set, picks it
//   op       byte % 6: NLLLoss, NLLLoss2d, NLLLossBackward, NLLLoss2dBackward,
//            CrossEntropyLoss, CrossEntropyLossGrad
//   flags    byte: 1 own stream, 2 weight absent, 4 reduced outputs 0-d (else [1]), 8 a
//            target dtype outside the op's set, 16 self (C) with a 0-d target (NLL), 32
//            float32 out for a 16-bit self (NLL forward), 64 tame targets (every value a
//            class or ignoreIndex)
//   pattern  byte: seeds the data bytes read past the input's end
//   sizes    N, C (a byte each: small, or from 200 on a special size: C 0, 1000, 4097,
//            65537 ...), then H and W for the 2d forms (0 to 3)
//   dtypes   self (float32, float16, bfloat16), target (the op's set, or another)
//   attrs    reduction (NLL: 0 to 2, -1, 3, INT64_MIN; CE: "none", "mean", "sum", null,
//            "avg", ""), ignoreIndex (-100, -1, a class, C, INT64_MIN/MAX, any int32, 255),
//            labelSmoothing (CE: 0, 0.1, 0.5, 1, NaN, -0.25, 1.5, inf)
//   layouts  per tensor a byte: contiguous, every stride doubled, column-major or class
//            axis innermost; and an offset of 0 to 7 elements
//   values   per target element a byte (below 192 a class, then ignoreIndex, -1, C, -100,
//            INT64_MIN, INT64_MAX, 2^31, 2^32 + a class, 255, 256 ...); per float element a
//            byte: (b - 128) / 16, exact in every float dtype, 255 NaN (weights b / 32);
//            past the input's end, the bytes of a sequence the pattern byte seeds
//
// After each call it checks the contract of docs/ops/nll_loss.md and cross_entropy_loss.md:
// a refused call leaves a one-line message naming the op and hands out no executor; a call
// with a target outside [0, C) that is not ignoreIndex fails, at the second phase on cpu_tbb
// (161002) or at aclrtSynchronizeStream on atlas_emu, with a message naming the first such
// element and its value, and writes nothing; any other well-formed call succeeds, and every
// output element matches a float64 recomputation (NaN exactly where it is NaN). No byte
// outside the outputs' view elements changes, including 64 guard bytes after each storage.
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss2d.h>
#include <aclnnop/aclnn_nll_loss2d_backward.h>
#include <aclnnop/aclnn_nll_loss_backward.h>
#include <nnplug/dtype_convert.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_acl_support.h"

namespace {

using namespace nnplug::fuzz;

constexpr int64_t kMaxSelfElements = 1 << 18;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

enum Op { kNll, kNll2d, kNllBackward, kNll2dBackward, kCe, kCeGrad, kOpCount };
const char* const kApi[kOpCount] = {"aclnnNLLLoss",          "aclnnNLLLoss2d",
                                    "aclnnNLLLossBackward",  "aclnnNLLLoss2dBackward",
                                    "aclnnCrossEntropyLoss", "aclnnCrossEntropyLossGrad"};

enum Flag : uint8_t {
    kOwnStream = 1,
    kNoWeight = 2,
    kReducedZeroD = 4,
    kOtherTargetDtype = 8,
    kOneD = 16,
    kFloatOut = 32,
    kTameTargets = 64
};

// The tensors of the six ops by role; each op passes its own in signature order.
enum Role {
    kSelf,
    kTarget,
    kWeight,
    kGrad,
    kTotalWeight,
    kOut,
    kTotalWeightOut,
    kLogProbOut,
    kZloss,
    kLse,
    kRoles
};

// What the input asks for.
struct Call {
    Op op = kNll;
    Backend backend = kCpuTbb;
    uint8_t flags = 0;
    int64_t n = 0, c = 1, h = 1, w = 1;
    aclDataType self_dtype = ACL_FLOAT, target_dtype = ACL_INT64;
    int64_t reduction = 0;       // NLL's int; CE's word as 0 none, 1 mean, 2 sum, 3 invalid
    const char* word = nullptr;  // CE's reduction word (null: mean)
    int64_t ignore = -100;
    double smoothing = 0;
    // The data bytes past the input's end: a sequence seeded by the input's pattern byte, so
    // that short inputs hold hostile targets too (libFuzzer grows its inputs slowly).
    mutable uint32_t pattern = 0;
    uint8_t data_byte(Input& in) const {
        if (in.remaining() > 0) return in.byte();
        pattern = pattern * 1103515245u + 12345u;
        return static_cast<uint8_t>(pattern >> 24);
    }
    bool nll() const { return op <= kNll2dBackward; }
    bool two_d() const { return op == kNll2d || op == kNll2dBackward; }
    bool gradient() const { return op == kNllBackward || op == kNll2dBackward || op == kCeGrad; }
    bool one_d() const { return (flags & kOneD) && (op == kNll || op == kNllBackward); }
    bool has(Flag flag) const { return (flags & flag) != 0; }
    int64_t inner() const { return two_d() ? h * w : 1; }
    int64_t rows() const { return one_d() ? 1 : n * inner(); }
    bool reduces() const { return reduction == 1 || reduction == 2; }
    // Whether target t is ignored: CE ignores nothing for a negative ignoreIndex.
    bool ignored(int64_t t) const { return t == ignore && (nll() || ignore >= 0); }
};

int64_t pick_n(uint8_t code) {
    static const int64_t kSpecial[] = {0, 7, 8, 9, 31, 32, 33, 255, 256, 257, 300, 513, 1000, 1025};
    return code < 200 ? code % 5 : kSpecial[(code - 200) % 14];
}

int64_t pick_c(uint8_t code) {
    static const int64_t kSpecial[] = {0,   1,   2,    16,   31,   32,   33,   255,
                                       256, 257, 1000, 1023, 1024, 1025, 4097, 65537};
    return code < 200 ? 1 + code % 8 : kSpecial[(code - 200) % 16];
}

aclDataType pick_target_dtype(const Call& call, uint8_t code) {
    static const aclDataType kOthers[] = {ACL_INT16, ACL_INT8, ACL_FLOAT, ACL_BOOL, ACL_UINT64, ACL_UINT32};
    if (call.has(kOtherTargetDtype)) return kOthers[code % 6];
    if (call.nll()) return code % 3 == 0 ? ACL_INT64 : code % 3 == 1 ? ACL_INT32 : ACL_UINT8;
    return code % 2 == 0 ? ACL_INT64 : ACL_INT32;
}

void read_attrs(Input& in, Call& call) {
    static const int64_t kReductions[] = {0, 1, 2, -1, 3, kI64Min};
    static const char* const kWords[] = {"none", "mean", "sum", nullptr, "avg", ""};
    const uint8_t reduction = in.byte() % 6;
    if (call.nll()) {
        call.reduction = kReductions[reduction];
    } else {
        call.word = kWords[reduction];
        call.reduction = reduction == 3 ? 1 : reduction > 3 ? 3 : reduction;
    }
    const uint8_t ignore = in.byte() % 8;
    const int64_t kIgnores[] = {
        -100, -1, in.byte() % std::max<int64_t>(call.c, 1), call.c, kI64Min, kI64Max, in.i32(), 255};
    call.ignore = kIgnores[ignore];
    static const double kSmoothings[] = {0, 0, 0.1, 0.5, 1, kNan, -0.25, 1.5, HUGE_VAL};
    if (!call.nll()) call.smoothing = kSmoothings[in.byte() % 9];
}

Call read_call(Input& in) {
    Call call;
    bool changed = false;
    call.backend = use_backend(in.byte() % 2, changed);
    call.op = static_cast<Op>(in.byte() % kOpCount);
    call.flags = in.byte();
    call.pattern = in.byte();
    call.n = pick_n(in.byte());
    call.c = pick_c(in.byte());
    if (call.two_d()) {
        call.h = in.byte() % 4;
        call.w = in.byte() % 4;
    }
    // Large C with few rows: the rows shrink to keep self within kMaxSelfElements.
    while (call.n > 0 && call.n * call.c * call.inner() > kMaxSelfElements) call.n /= 2;
    static const aclDataType kFloats[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    call.self_dtype = kFloats[in.byte() % 3];
    call.target_dtype = pick_target_dtype(call, in.byte());
    read_attrs(in, call);
    return call;
}

// The first-phase refusal the docs promise for this call, or null when it must succeed.
const char* documented_refusal(const Call& call) {
    if (call.has(kNoWeight) && call.nll()) return "a null weight";
    if (call.has(kOtherTargetDtype)) return "a target dtype outside the op's set";
    if (call.c == 0) return "C = 0";
    if (call.nll() && (call.reduction < 0 || call.reduction > 2)) return "a reduction outside 0..2";
    if (!call.nll() && call.reduction == 3) return "an unknown reduction word";
    if (!call.nll() && !(call.smoothing >= 0 && call.smoothing <= 1)) return "labelSmoothing outside [0, 1]";
    // Ascend910B's CrossEntropyLoss kernels take int64 targets only (a call without rows
    // reaches no kernel).
    if (!call.nll() && call.backend != kCpuTbb && call.target_dtype == ACL_INT32 && call.rows() > 0)
        return "an int32 target on Ascend910B";
    return nullptr;
}

// A tensor of the call: its view over a buffer of its own, and the values its view holds
// (inputs: as stored; outputs: as read back after the run).
struct Tensor {
    aclTensor* handle = nullptr;
    aclDataType dtype = ACL_FLOAT;
    std::vector<int64_t> view, strides;
    int64_t offset = 0;
    int buffer = -1;
    std::vector<double> values;    // floats
    std::vector<int64_t> classes;  // a target's indices, as the kernel reads them
    bool present() const { return handle != nullptr; }
    int64_t count() const {
        int64_t count = 1;
        for (int64_t dim : view) count *= dim;
        return count;
    }
};

// Calls fn(i, element) for the view's elements in row-major order.
template <typename Fn>
void for_each_element(const Tensor& t, Fn&& fn) {
    std::vector<int64_t> index(t.view.size(), 0);
    for (int64_t i = 0; i < t.count(); ++i) {
        int64_t element = t.offset;
        for (size_t k = 0; k < index.size(); ++k) element += index[k] * t.strides[k];
        fn(i, element);
        for (size_t k = index.size(); k-- > 0;) {
            if (++index[k] < t.view[k]) break;
            index[k] = 0;
        }
    }
}

// Strides of a layout code: contiguous, every stride doubled, column-major, or dim 1 (the
// class axis of self) innermost.
std::vector<int64_t> layout_strides(const std::vector<int64_t>& view, uint8_t code) {
    const size_t rank = view.size();
    std::vector<size_t> order(rank);  // dims from innermost out
    for (size_t k = 0; k < rank; ++k) order[k] = rank - 1 - k;
    if (code % 4 == 2) std::reverse(order.begin(), order.end());
    if (code % 4 == 3 && rank > 2) {
        order.erase(std::find(order.begin(), order.end(), size_t{1}));
        order.insert(order.begin(), 1);
    }
    std::vector<int64_t> strides(rank, 1);
    int64_t step = code % 4 == 1 ? 2 : 1;
    for (size_t k : order) {
        strides[k] = step;
        step *= std::max<int64_t>(view[k], 1);
    }
    return strides;
}

// Makes a tensor of `view` in a fresh buffer whose bytes outside the view hold 0xa5.
Tensor make_tensor(Input& in, std::vector<int64_t> view, aclDataType dtype, std::vector<Buffer>& buffers) {
    Tensor t;
    t.dtype = dtype;
    const uint8_t layout = in.byte();
    t.strides = layout_strides(view, layout);
    t.offset = (layout >> 2) % 8;
    t.view = std::move(view);
    int64_t elements = t.offset + 1;
    for (size_t k = 0; k < t.view.size(); ++k) elements += (t.view[k] - 1) * t.strides[k];
    if (t.count() == 0) elements = t.offset;
    const size_t element_size = std::max<size_t>(aclDataTypeSize(dtype), 1);
    buffers.push_back(make_buffer(true, static_cast<size_t>(elements) * element_size));
    std::memset(buffers.back().before.data(), 0xa5, buffers.back().before.size());
    t.buffer = static_cast<int>(buffers.size()) - 1;
    const int64_t storage = elements;
    t.handle = aclCreateTensor(t.view.data(), t.view.size(), dtype, t.strides.data(), t.offset, ACL_FORMAT_ND,
                               &storage, 1, buffers.back().data);
    if (t.handle == nullptr)
        broken(std::string("aclCreateTensor refused a valid view: ") + aclGetRecentErrMsg());
    return t;
}

// The float values of the fuzzed data, exact in float32, float16 and bfloat16.
double float_value(Input& in, const Call& call, bool weight) {
    const uint8_t b = call.data_byte(in);
    if (weight) return b / 32.0;
    return b == 255 ? kNan : (b - 128) / 16.0;
}

int64_t target_value(Input& in, const Call& call) {
    const int64_t c = std::max<int64_t>(call.c, 1);
    const uint8_t b = call.data_byte(in);
    if (b < 192 || (call.has(kTameTargets) && b >= 208)) return b % c;
    if (b < 208) return call.ignore;
    const int64_t kHostile[] = {-1,
                                c,
                                c + 1,
                                -100,
                                kI64Min,
                                kI64Max,
                                INT32_MIN,
                                INT32_MAX,
                                int64_t{1} << 31,
                                (int64_t{1} << 32) + b % c,
                                255,
                                256,
                                -c,
                                2 * c,
                                int64_t{1} << 40,
                                -(int64_t{1} << 40)};
    return kHostile[b % 16];
}

// Writes a float into element `element` of `bytes` as `dtype`; returns what is stored.
double store_float(std::vector<uint8_t>& bytes, aclDataType dtype, int64_t element, double value) {
    uint8_t* at = bytes.data() + element * static_cast<int64_t>(aclDataTypeSize(dtype));
    if (dtype == ACL_FLOAT) {
        const float f = static_cast<float>(value);
        std::memcpy(at, &f, 4);
        return f;
    }
    const bool half = dtype == ACL_FLOAT16;
    const uint16_t bits =
        half ? nnplug::f32_to_f16(static_cast<float>(value)) : nnplug::f32_to_bf16(static_cast<float>(value));
    std::memcpy(at, &bits, 2);
    return half ? nnplug::f16_to_f32(bits) : nnplug::bf16_to_f32(bits);
}

// Writes a class index as `dtype` (its low bytes, for a dtype outside the set); returns
// the index a reader of that dtype gets back.
int64_t store_class(std::vector<uint8_t>& bytes, aclDataType dtype, int64_t element, int64_t value) {
    const size_t size = aclDataTypeSize(dtype);
    std::memcpy(bytes.data() + element * static_cast<int64_t>(size), &value, std::min<size_t>(size, 8));
    if (dtype == ACL_INT32) return static_cast<int32_t>(static_cast<uint32_t>(value));
    if (dtype == ACL_UINT8) return static_cast<uint8_t>(value);
    return value;
}

// What an input tensor holds: floats, weights (b / 32) or class indices.
enum class Values { kFloats, kWeights, kClasses };

// Fills an input tensor's view with values from the input.
void fill(Input& in, const Call& call, Tensor& t, std::vector<Buffer>& buffers, Values kind) {
    if (!t.present()) return;
    std::vector<uint8_t>& bytes = buffers[static_cast<size_t>(t.buffer)].before;
    const bool target = kind == Values::kClasses;
    if (target)
        t.classes.resize(static_cast<size_t>(t.count()));
    else
        t.values.resize(static_cast<size_t>(t.count()));
    for_each_element(t, [&](int64_t i, int64_t element) {
        if (target)
            t.classes[static_cast<size_t>(i)] = store_class(bytes, t.dtype, element, target_value(in, call));
        else
            t.values[static_cast<size_t>(i)] =
                store_float(bytes, t.dtype, element, float_value(in, call, kind == Values::kWeights));
    });
}

using Tensors = std::vector<Tensor>;  // by Role

// The tensors of the call's op, made from the input; the roles it does not take stay absent.
Tensors make_tensors(Input& in, const Call& call, std::vector<Buffer>& buffers) {
    Tensors t(kRoles);
    const int64_t n = call.n, c = call.c;
    const std::vector<int64_t> self = call.one_d()   ? std::vector<int64_t>{c}
                                      : call.two_d() ? std::vector<int64_t>{n, c, call.h, call.w}
                                                     : std::vector<int64_t>{n, c};
    const std::vector<int64_t> rows = call.one_d()   ? std::vector<int64_t>{}
                                      : call.two_d() ? std::vector<int64_t>{n, call.h, call.w}
                                                     : std::vector<int64_t>{n};
    const std::vector<int64_t> one =
        call.has(kReducedZeroD) ? std::vector<int64_t>{} : std::vector<int64_t>{1};
    const std::vector<int64_t> per_row = call.reduces() ? one : rows;
    const aclDataType x = call.self_dtype;
    t[kSelf] = make_tensor(in, self, x, buffers);
    t[kTarget] = make_tensor(in, rows, call.target_dtype, buffers);
    if (!call.has(kNoWeight)) t[kWeight] = make_tensor(in, {c}, call.nll() ? x : ACL_FLOAT, buffers);
    if (call.gradient()) t[kGrad] = make_tensor(in, per_row, x, buffers);
    if (call.op == kNllBackward || call.op == kNll2dBackward)
        t[kTotalWeight] = make_tensor(in, one, x, buffers);
    if (call.gradient()) {
        t[kOut] = make_tensor(in, self, x, buffers);
    } else {
        const bool float_out = call.nll() && call.has(kFloatOut);
        t[kOut] = make_tensor(in, per_row, float_out ? ACL_FLOAT : x, buffers);
    }
    if (call.nll() && !call.gradient()) t[kTotalWeightOut] = make_tensor(in, one, x, buffers);
    if (call.op == kCe) {
        t[kLogProbOut] = make_tensor(in, self, x, buffers);
        t[kZloss] = make_tensor(in, per_row, x, buffers);
        t[kLse] = make_tensor(in, per_row, x, buffers);
    }
    return t;
}

int64_t target_of(const Tensors& t, int64_t row) {
    return t[kTarget].classes[static_cast<size_t>(row)];
}

double weight_of(const Tensors& t, int64_t c) {
    return t[kWeight].present() ? t[kWeight].values[static_cast<size_t>(c)] : 1.0;
}

// Element (row, class) of a (N, C), (C) or (N, C, H, W) tensor in row-major order.
size_t at(const Call& call, int64_t row, int64_t c) {
    const int64_t inner = call.inner(), o = row / inner, i = row % inner;
    return static_cast<size_t>((o * call.c + c) * inner + i);
}

// The first row whose target is neither a class nor ignored, or -1.
int64_t first_bad_row(const Call& call, const Tensors& t) {
    for (int64_t row = 0; row < call.rows(); ++row) {
        const int64_t target = target_of(t, row);
        if ((target < 0 || target >= call.c) && !call.ignored(target)) return row;
    }
    return -1;
}

// The weight the counted rows select (the mean's divisor), over the valid targets only.
double counted_weight(const Call& call, const Tensors& t) {
    double total = 0;
    for (int64_t row = 0; row < call.rows(); ++row) {
        const int64_t target = target_of(t, row);
        if (!call.ignored(target) && target >= 0 && target < call.c) total += weight_of(t, target);
    }
    return total;
}

// Fills every input from the input; totalWeight is the forward's or another value.
void fill_inputs(Input& in, const Call& call, Tensors& t, std::vector<Buffer>& buffers) {
    fill(in, call, t[kTarget], buffers, Values::kClasses);
    fill(in, call, t[kWeight], buffers, Values::kWeights);
    fill(in, call, t[kSelf], buffers, Values::kFloats);
    fill(in, call, t[kGrad], buffers, Values::kFloats);
    if (t[kTotalWeight].present()) {
        const double kGiven[] = {counted_weight(call, t), 1, 0.5, 0, kNan, 2, 7.5, 0.25};
        std::vector<uint8_t>& bytes = buffers[static_cast<size_t>(t[kTotalWeight].buffer)].before;
        t[kTotalWeight].values = {
            store_float(bytes, t[kTotalWeight].dtype, t[kTotalWeight].offset, kGiven[in.byte() % 8])};
    }
}

// What an output must hold, element by element in row-major order: the float64 value and
// the magnitude of the terms its computation rounds (its error allowance).
struct Expected {
    std::vector<double> value, magnitude;
    void add(double v, double m) {
        value.push_back(v);
        magnitude.push_back(m);
    }
};
using Expectations = std::vector<Expected>;  // by Role; empty: not checked

void expect_reduced(const Call& call, Expected& out, const Expected& rows, double total) {
    double sum = 0, magnitude = 0;
    for (size_t r = 0; r < rows.value.size(); ++r) {
        sum += rows.value[r];
        magnitude += rows.magnitude[r];
    }
    if (call.reduction == 1)
        out.add(sum / total, magnitude / std::abs(total));
    else
        out.add(sum, magnitude);
}

Expectations expect_nll(const Call& call, const Tensors& t) {
    Expectations e(kRoles);
    Expected rows;
    double total = 0;
    for (int64_t row = 0; row < call.rows(); ++row) {
        const int64_t target = target_of(t, row);
        if (call.ignored(target)) {
            rows.add(0, 0);
            continue;
        }
        const double w = weight_of(t, target), l = -w * t[kSelf].values[at(call, row, target)];
        rows.add(l, std::abs(l));
        total += w;
    }
    if (!call.reduces()) {
        e[kOut] = rows;
        return e;
    }
    expect_reduced(call, e[kOut], rows, total);
    e[kTotalWeightOut].add(total, total);
    return e;
}

Expectations expect_nll_backward(const Call& call, const Tensors& t) {
    Expectations e(kRoles);
    e[kOut].value.assign(static_cast<size_t>(t[kSelf].count()), 0.0);
    e[kOut].magnitude.assign(e[kOut].value.size(), 0.0);
    for (int64_t row = 0; row < call.rows(); ++row) {
        const int64_t target = target_of(t, row);
        if (call.ignored(target)) continue;
        double g = t[kGrad].values[call.reduces() ? 0 : static_cast<size_t>(row)];
        if (call.reduction == 1) g /= t[kTotalWeight].values[0];
        const double v = -weight_of(t, target) * g;
        e[kOut].value[at(call, row, target)] = v;
        e[kOut].magnitude[at(call, row, target)] = std::abs(v);
    }
    return e;
}

// The log-sum-exp of row `row` of self (NaN when the row holds one).
double row_lse(const Call& call, const Tensors& t, int64_t row) {
    double max = -HUGE_VAL, sum = 0;
    for (int64_t c = 0; c < call.c; ++c) {
        const double x = t[kSelf].values[at(call, row, c)];
        if (std::isnan(x)) return kNan;
        max = std::max(max, x);
    }
    for (int64_t c = 0; c < call.c; ++c) sum += std::exp(t[kSelf].values[at(call, row, c)] - max);
    return max + std::log(sum);
}

Expectations expect_ce(const Call& call, const Tensors& t) {
    Expectations e(kRoles);
    Expected rows;
    double total = 0;
    const double eps = call.smoothing;
    for (int64_t row = 0; row < call.rows(); ++row) {
        const double lse = row_lse(call, t, row);
        double smooth = 0, smooth_magnitude = 0;
        for (int64_t c = 0; c < call.c; ++c) {
            const double x = t[kSelf].values[at(call, row, c)];
            e[kLogProbOut].add(x - lse, std::abs(x) + std::abs(lse));
            smooth -= weight_of(t, c) * (x - lse);
            smooth_magnitude += weight_of(t, c) * (std::abs(x) + std::abs(lse));
        }
        const int64_t target = target_of(t, row);
        if (call.ignored(target)) {
            rows.add(0, 0);
            continue;
        }
        const double w = weight_of(t, target), x = t[kSelf].values[at(call, row, target)];
        double l = (1 - eps) * -w * (x - lse), magnitude = (1 - eps) * w * (std::abs(x) + std::abs(lse));
        if (eps > 0) {
            l += eps / static_cast<double>(call.c) * smooth;
            magnitude += eps / static_cast<double>(call.c) * smooth_magnitude;
        }
        rows.add(l, magnitude);
        total += w;
    }
    if (call.reduces())
        expect_reduced(call, e[kOut], rows, total);
    else
        e[kOut] = rows;
    return e;
}

Expectations expect_ce_grad(const Call& call, const Tensors& t) {
    Expectations e(kRoles);
    const double eps = call.smoothing, total = counted_weight(call, t);
    double all = 0;
    for (int64_t c = 0; c < call.c; ++c) all += weight_of(t, c);
    for (int64_t row = 0; row < call.rows(); ++row) {
        const int64_t target = target_of(t, row);
        const bool counted = !call.ignored(target);
        double g = t[kGrad].values[call.reduces() ? 0 : static_cast<size_t>(row)];
        if (call.reduction == 1) g /= total;
        for (int64_t c = 0; c < call.c && !counted; ++c) e[kOut].add(0, 0);
        // g * (1 - eps) * w[t] first, as the docs say: an infinite g over a row weighing 0 is NaN.
        const double nll = counted ? g * (1 - eps) * weight_of(t, target) : 0.0,
                     smooth = g * eps / static_cast<double>(call.c);
        for (int64_t c = 0; c < call.c && counted; ++c) {
            const double p = std::exp(t[kSelf].values[at(call, row, c)]), wc = weight_of(t, c);
            const double v = nll * (p - (c == target ? 1 : 0)) + (eps > 0 ? smooth * (p * all - wc) : 0.0);
            e[kOut].add(v, std::abs(nll) * (p + 1) + std::abs(smooth) * (p * all + wc));
        }
    }
    return e;
}

Expectations expect_outputs(const Call& call, const Tensors& t) {
    switch (call.op) {
        case kNll:
        case kNll2d:
            return expect_nll(call, t);
        case kNllBackward:
        case kNll2dBackward:
            return expect_nll_backward(call, t);
        case kCe:
            return expect_ce(call, t);
        default:
            return expect_ce_grad(call, t);
    }
}

// With NNPLUG_FUZZ_STATS set, how the calls of each op ended, printed at exit.
struct Stats {
    long refused[kOpCount] = {}, bad_target[kOpCount] = {}, checked[kOpCount] = {};
} g_stats;

aclTensor* arg(const Tensors& t, Role role) {
    return t[role].handle;
}

aclnnStatus first_phase(const Call& call, const Tensors& t, uint64_t* size, aclOpExecutor** executor) {
    const int64_t r = call.reduction, ignore = call.ignore;
    char* word = const_cast<char*>(call.word);  // CANN declares it char*
    switch (call.op) {
        case kNll:
            return aclnnNLLLossGetWorkspaceSize(arg(t, kSelf), arg(t, kTarget), arg(t, kWeight), r, ignore,
                                                arg(t, kOut), arg(t, kTotalWeightOut), size, executor);
        case kNll2d:
            return aclnnNLLLoss2dGetWorkspaceSize(arg(t, kSelf), arg(t, kTarget), arg(t, kWeight), r, ignore,
                                                  arg(t, kOut), arg(t, kTotalWeightOut), size, executor);
        case kNllBackward:
            return aclnnNLLLossBackwardGetWorkspaceSize(arg(t, kGrad), arg(t, kSelf), arg(t, kTarget),
                                                        arg(t, kWeight), r, ignore, arg(t, kTotalWeight),
                                                        arg(t, kOut), size, executor);
        case kNll2dBackward:
            return aclnnNLLLoss2dBackwardGetWorkspaceSize(arg(t, kGrad), arg(t, kSelf), arg(t, kTarget),
                                                          arg(t, kWeight), r, ignore, arg(t, kTotalWeight),
                                                          arg(t, kOut), size, executor);
        case kCe:
            return aclnnCrossEntropyLossGetWorkspaceSize(
                arg(t, kSelf), arg(t, kTarget), arg(t, kWeight), word, ignore, call.smoothing, 0.0, false,
                arg(t, kOut), arg(t, kLogProbOut), arg(t, kZloss), arg(t, kLse), size, executor);
        default:
            return aclnnCrossEntropyLossGradGetWorkspaceSize(
                arg(t, kGrad), arg(t, kSelf), arg(t, kTarget), arg(t, kWeight), nullptr, nullptr, word,
                ignore, call.smoothing, 0.0, arg(t, kOut), size, executor);
    }
}

aclnnStatus second_phase(Op op, void* workspace, uint64_t size, aclOpExecutor* executor, aclrtStream stream) {
    static aclnnStatus (*const kRun[kOpCount])(void*, uint64_t, aclOpExecutor*, aclrtStream) = {
        aclnnNLLLoss,           aclnnNLLLoss2d,        aclnnNLLLossBackward,
        aclnnNLLLoss2dBackward, aclnnCrossEntropyLoss, aclnnCrossEntropyLossGrad};
    return kRun[op](workspace, size, executor, stream);
}

// A failed call's message: one line that names the op (and holds `must_hold`, if given).
void expect_failure_message(const Call& call, const char* failed, const std::string& must_hold = "") {
    const char* message = aclGetRecentErrMsg();
    const std::string text = message != nullptr ? message : "";
    const std::string api = kApi[call.op];
    if (text.empty()) broken(std::string(failed) + " failed without a message");
    if (text.find('\n') != std::string::npos)
        broken(std::string(failed) + "'s message is not one line: " + text);
    if (text.find(api + ":") == std::string::npos)
        broken(std::string(failed) + "'s message does not name " + api + ": " + text);
    if (text.find(must_hold) == std::string::npos)
        broken(std::string(failed) + "'s message lacks \"" + must_hold + "\": " + text);
}

// The refusal of target row `row`: "target element 2 is 7, not a class index in [0, 5)".
std::string bad_target_text(const Call& call, const Tensors& t, int64_t row) {
    return std::string(kApi[call.op]) + ": target element " + std::to_string(row) + " is " +
           std::to_string(target_of(t, row)) + ", not a class index in [0, " + std::to_string(call.c) + ")";
}

// Both phases and the synchronize; returns whether the call succeeded, having checked that
// it failed exactly when it had to.
bool run(const Call& call, const Tensors& t) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus planned = first_phase(call, t, &size, &executor);
    const char* refusal = documented_refusal(call);
    const std::string api = kApi[call.op];
    if (planned != ACLNN_SUCCESS) {
        expect_failure_message(call, kApi[call.op]);
        if (executor != nullptr) broken(api + " refused the call but handed out an executor");
        if (refusal == nullptr) broken(api + " refused a well-formed call: " + aclGetRecentErrMsg());
        ++g_stats.refused[call.op];
        return false;
    }
    if (refusal != nullptr) broken(api + " accepted " + refusal);
    if (executor == nullptr) broken(api + " succeeded without an executor");
    void* workspace = nullptr;
    if (size > 0 && aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        broken("aclrtMalloc of the workspace failed");
    aclrtStream stream = nullptr;
    if (call.has(kOwnStream) && aclrtCreateStream(&stream) != ACL_SUCCESS) broken("aclrtCreateStream failed");
    const aclnnStatus ran = second_phase(call.op, workspace, size, executor, stream);
    const std::string ran_message = ran != ACLNN_SUCCESS ? aclGetRecentErrMsg() : "";
    const aclError synced = aclrtSynchronizeStream(stream);
    const int64_t bad = first_bad_row(call, t);
    if (bad >= 0) {
        const bool asynchronous = call.backend != kCpuTbb;
        if (asynchronous ? ran != ACLNN_SUCCESS || synced == ACL_SUCCESS : ran != ACLNN_ERR_PARAM_INVALID)
            broken(api + " with " + bad_target_text(call, t, bad) + ": second phase " + std::to_string(ran) +
                   ", synchronize " + std::to_string(synced) + " " + ran_message);
        expect_failure_message(call, asynchronous ? "aclrtSynchronizeStream" : kApi[call.op],
                               bad_target_text(call, t, bad));
    } else if (ran != ACLNN_SUCCESS || synced != ACL_SUCCESS) {
        broken(api + " failed a well-formed call: " + ran_message + " " + aclGetRecentErrMsg());
    }
    aclDestroyAclOpExecutor(executor);
    if (stream != nullptr) aclrtDestroyStream(stream);
    if (workspace != nullptr) aclrtFree(workspace);
    ++(bad < 0 ? g_stats.checked : g_stats.bad_target)[call.op];
    return bad < 0;
}

// Whether `got`, read from an output of `dtype`, is the float64 `want` (magnitude: the
// terms rounded on the way): NaN exactly where it is NaN, within the dtype's tolerance.
bool matches(double got, double want, double magnitude, aclDataType dtype) {
    if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
    if (std::isinf(want)) return got == want;
    const double largest = dtype == ACL_FLOAT16 ? 65504.0 : 3.0e38;
    if (std::abs(want) > 0.5 * largest) return true;  // near the dtype's overflow: any number
    const double rounding = dtype == ACL_FLOAT ? 1e-5 : dtype == ACL_FLOAT16 ? 0x1p-10 : 0x1p-8;
    const double floor = dtype == ACL_FLOAT16 ? 1e-7 : 1e-30;
    return std::abs(got - want) <=
           rounding * std::abs(want) + (dtype == ACL_FLOAT ? 2e-5 : 1e-4) * magnitude + floor;
}

// Compares each checked output with its expectation; marks its view writable.
void check_outputs(const Call& call, const Tensors& t, const Expectations& e, std::vector<Buffer>& buffers) {
    for (int role = 0; role < kRoles; ++role) {
        if (e[role].value.empty() || !t[role].present()) continue;
        Buffer& buffer = buffers[static_cast<size_t>(t[role].buffer)];
        const std::vector<uint8_t> bytes = download(buffer);
        const aclDataType dtype = t[role].dtype;
        if (static_cast<int64_t>(e[role].value.size()) != t[role].count())
            broken("fuzz_class_targets expects the wrong number of elements");
        for_each_element(t[role], [&](int64_t i, int64_t element) {
            const size_t k = static_cast<size_t>(i);
            const double got =
                dtype == ACL_FLOAT     ? nnplug::load_as_f32(bytes.data(), NNPLUG_DTYPE_F32, element)
                : dtype == ACL_FLOAT16 ? nnplug::load_as_f32(bytes.data(), NNPLUG_DTYPE_F16, element)
                                       : nnplug::load_as_f32(bytes.data(), NNPLUG_DTYPE_BF16, element);
            if (!matches(got, e[role].value[k], e[role].magnitude[k], dtype))
                broken(std::string(kApi[call.op]) + " output " + std::to_string(role) + " element " +
                       std::to_string(i) + " is " + std::to_string(got) + ", the float64 reference " +
                       std::to_string(e[role].value[k]) + " (C " + std::to_string(call.c) + ", rows " +
                       std::to_string(call.rows()) + ", reduction " + std::to_string(call.reduction) + ")");
        });
        allow_writes(buffer, aclDataTypeSize(dtype), t[role].view, t[role].strides, t[role].offset);
    }
}

void finish() {
    if (std::getenv("NNPLUG_FUZZ_STATS") != nullptr)
        for (int op = 0; op < kOpCount; ++op)
            std::fprintf(stderr, "fuzz_class_targets: %s refused %ld, bad target %ld, checked %ld\n",
                         kApi[op], g_stats.refused[op], g_stats.bad_target[op], g_stats.checked[op]);
    finalize_backend();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    set_target_name("fuzz_class_targets");
    keep_plugins_loaded();
    std::atexit(finish);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Input in(data, size);
    const Call call = read_call(in);
    std::vector<Buffer> buffers;
    Tensors t = make_tensors(in, call, buffers);
    fill_inputs(in, call, t, buffers);
    for (const Buffer& buffer : buffers) upload(buffer);
    if (run(call, t)) check_outputs(call, t, expect_outputs(call, t), buffers);
    expect_untouched(buffers, kApi[call.op]);
    for (Tensor& tensor : t)
        if (tensor.present()) aclDestroyTensor(tensor.handle);
    for (Buffer& buffer : buffers) free_buffer(buffer);
    return 0;
}
