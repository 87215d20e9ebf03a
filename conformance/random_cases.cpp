// The kit's random cases: operands of random shapes, broadcasts, strided views, dtypes and
// reductions, with values that reach the ops' clamps and edges, and their expected results
// computed here on the host by each op's rules (OpUnderTest::kit, from its folder): the
// canonical float32 expressions rounded into out's dtype, and the float64 reference.
#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "kit_internal.h"

namespace nnplug::conformance {

float random_value(const std::string& role, const KitRules& kit, std::mt19937_64& random) {
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const bool edge = unit(random) < 0.15f;
    const SelfValues self_values = kit.self_values;
    if (role == "target" && kit.target_values == TargetValues::kSign)  // a label: -1 or 1
        return random() % 2 ? 1.0f : -1.0f;
    if (role == "target" && kit.target_values == TargetValues::kPositive) {  // a probability, never 0
        static const float edges[] = {1.0f, 1e-7f, 1e-30f, 0.5f, 0.99999994f};
        return edge ? edges[random() % std::size(edges)] : std::max(unit(random), 1e-6f);
    }
    if ((role == "self" || role == "target") && self_values == SelfValues::kReal)  // -1, 0, 1 now and then
        return edge ? static_cast<float>(random() % 3) - 1.0f
                    : std::uniform_real_distribution<float>(-4.0f, 4.0f)(random);
    if (role == "self" &&
        self_values ==
            SelfValues::kProbability) {  // a probability: near 0 and 1 the backward's clamp decides
        static const float edges[] = {0.0f, 1.0f, 1e-7f, 3e-8f, 0.99999994f, 0.9999999f, 5e-7f, 1e-4f, 0.5f};
        return edge ? edges[random() % std::size(edges)] : unit(random);
    }
    if (role == "self") {  // a logit
        static const float edges[] = {0.0f,   1e-3f, -1e-3f, 20.0f,  -20.0f, 30.0f,
                                      -30.0f, 90.0f, -90.0f, 100.0f, -100.0f};
        return edge ? edges[random() % std::size(edges)]
                    : std::uniform_real_distribution<float>(-8.0f, 8.0f)(random);
    }
    if (role == "target") return edge ? static_cast<float>(random() % 2) : unit(random);
    if (role == "weight") return 2.0f * unit(random);
    if (role == "posWeight") return 0.1f + 2.9f * unit(random);
    return std::uniform_real_distribution<float>(-2.0f, 2.0f)(random);  // gradOutput
}

namespace {

constexpr float kSentinel = 1234.5f;

// A reduced output's divisor: the count for a mean, self's first dimension for batchmean.
int64_t reduction_divisor(int64_t reduction, int64_t count, const std::vector<int64_t>& self_view) {
    if (reduction == 1) return count;
    if (reduction == 3) return self_view.empty() ? 1 : self_view[0];  // batchmean: self's first dim
    return 1;
}

aclDataType pick_dtype(std::mt19937_64& random) {
    const double u = std::uniform_real_distribution<double>(0, 1)(random);
    return u < 0.6 ? ACL_FLOAT : u < 0.8 ? ACL_FLOAT16 : ACL_BF16;
}

// A shape that broadcasts to `shape`: some leading dimensions dropped, some set to 1.
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& shape, std::mt19937_64& random) {
    std::vector<int64_t> result(shape.begin() + static_cast<std::ptrdiff_t>(random() % (shape.size() + 1)),
                                shape.end());
    for (auto& dim : result)
        if (random() % 3 == 0) dim = 1;
    return result;
}

// Lays a tensor of `shape` out in storage: contiguous, padded (rows longer than the view,
// a leading offset) or transposed (the last two dimensions swapped in memory); the storage
// holds values from fill for every element, in the view or not.
template <typename Fill>
GoldenTensor layout(const std::vector<int64_t>& shape, aclDataType dtype, int kind, Fill&& fill) {
    GoldenTensor t;
    t.present = true;
    t.dtype = dtype;
    t.view = shape;
    const size_t rank = shape.size();
    int64_t storage_elements = element_count(shape);
    if (kind == 1 && rank >= 1) {  // padded
        std::vector<int64_t> padded = shape;
        padded.back() += 3;
        t.strides = contiguous_strides(padded);
        t.offset = 2;
        storage_elements = element_count(padded) + 2;
    } else if (kind == 2 && rank >= 2) {  // transposed
        std::vector<int64_t> swapped = shape;
        std::swap(swapped[rank - 1], swapped[rank - 2]);
        const auto strides = contiguous_strides(swapped);
        t.strides = strides;
        std::swap(t.strides[rank - 1], t.strides[rank - 2]);
    } else {
        t.strides = contiguous_strides(shape);
    }
    t.storage_shape = {storage_elements};
    std::vector<float> values(static_cast<size_t>(storage_elements));
    for (auto& value : values) value = fill();
    t.storage = encode(values, dtype);
    return t;
}

aclDataType promoted(aclDataType a, aclDataType b) {
    return a == b ? a : ACL_FLOAT;
}

// The value of element `n` (row-major over out's view shape `shape`) of tensor t, which
// broadcasts to shape.
float value_at(const GoldenTensor& t, const std::vector<int64_t>& shape, int64_t n) {
    int64_t element = t.offset;
    const size_t lead = shape.size() - t.view.size();
    for (size_t k = shape.size(); k-- > 0;) {
        const int64_t index = n % shape[k];
        n /= shape[k];
        if (k >= lead && t.view[k - lead] != 1) element += index * t.strides[k - lead];
    }
    return value_of(bits_at(t.storage, t.dtype, static_cast<size_t>(element)), t.dtype);
}

void store_value(std::vector<uint8_t>& storage, aclDataType dtype, int64_t element, float value) {
    store_from_f32(storage.data(),
                   dtype == ACL_FLOAT     ? NNPLUG_DTYPE_F32
                   : dtype == ACL_FLOAT16 ? NNPLUG_DTYPE_F16
                                          : NNPLUG_DTYPE_BF16,
                   element, value);
}

// Fills in the expectations of a case whose operands are set.
void expect(const OpUnderTest& op, RandomCase& c) {
    const GoldenCase& golden = c.golden;
    const auto role = [&](const std::string& name) -> const GoldenTensor* {
        const auto found = golden.tensors.find(name);
        return found != golden.tensors.end() && found->second.present ? &found->second : nullptr;
    };
    const GoldenTensor& self = *role("self");
    const GoldenTensor& out = *role(op.output);
    const std::vector<int64_t>& shape = c.shape;
    const int64_t count = element_count(shape);
    const int64_t reduction = golden.attrs.at(0).i;
    const bool reduced_out = op.schema.reducing && reduction != 0;
    const int64_t mean_count = op.schema.mean_over_self ? element_count(self.view) : count;
    const double scale64 =
        !op.schema.reducing && (reduction == 1 || reduction == 3)
            ? 1.0 / static_cast<double>(reduction_divisor(reduction, mean_count, self.view))
            : 1.0;
    const float scale = static_cast<float>(scale64);
    const GoldenTensor* target = role("target");
    const aclDataType promotion = target ? promoted(self.dtype, target->dtype) : self.dtype;
    // An operand the schema rounds to the promoted dtype is rounded before use.
    const auto cast = [&](const std::string& name, float v) {
        const size_t slot = static_cast<size_t>(std::find(op.operands.begin(), op.operands.end(), name) -
                                                op.operands.begin());
        return op.schema.rounded_to_promoted.at(slot) ? rounded_to(v, promotion) : v;
    };
    const GoldenTensor *grad = role("gradOutput"), *weight = role("weight"), *pos = role("posWeight");
    c.canonical = out.storage;
    double canonical_sum = 0, reference_sum = 0, magnitude_sum = 0;
    const auto out_view = out.view_indices();
    for (int64_t n = 0; n < count; ++n) {
        const float g = grad ? value_at(*grad, shape, n) : 1.0f;
        const float x = value_at(self, shape, n);
        const float y = target ? value_at(*target, shape, n) : 0.0f;
        const float w = weight ? cast("weight", value_at(*weight, shape, n)) : 1.0f;
        const float p = pos ? cast("posWeight", value_at(*pos, shape, n)) : 1.0f;
        const ElementExpectation e =
            op.kit.evaluate({g, x, y, w, p, pos != nullptr, scale, scale64, golden.attrs.data()});
        if (reduced_out) {
            canonical_sum += e.canonical;
            reference_sum += e.reference;
            magnitude_sum += e.magnitude;
        } else {
            store_value(c.canonical, out.dtype, out_view[static_cast<size_t>(n)], e.canonical);
            c.reference.push_back(e.reference);
            c.magnitude.push_back(e.magnitude);
        }
    }
    if (reduced_out) {
        const auto divisor = static_cast<double>(reduction_divisor(reduction, count, self.view));
        store_value(c.canonical, out.dtype, out_view[0], static_cast<float>(canonical_sum / divisor));
        c.reference.push_back(reference_sum / divisor);
        c.magnitude.push_back(magnitude_sum / divisor);
    }
}

std::string number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", value);
    return text;
}

const char* dtype_word(aclDataType dtype) {
    return dtype == ACL_FLOAT ? "f32" : dtype == ACL_FLOAT16 ? "f16" : "bf16";
}

// A case of op over the iteration `shape` (self's, or for inputs that broadcast to each other
// the shape they broadcast to); layouts and dtypes drawn from random unless plain.
// `sixteen_bit` (float16 or bfloat16) forces the promoting inputs to that dtype and the
// weights, present, to float32 (values a 16-bit type cannot hold).
RandomCase make_case(const OpUnderTest& op, std::mt19937_64& random, const std::vector<int64_t>& shape,
                     int64_t reduction, bool plain, const std::string& name,
                     aclDataType sixteen_bit = ACL_DT_UNDEFINED, size_t attr_set = 0) {
    const bool weights_case = sixteen_bit != ACL_DT_UNDEFINED;
    const SchemaRules& kind = op.schema;
    RandomCase c;
    c.shape = shape;
    // Inputs that broadcast to each other: one of self and target keeps the whole shape (so
    // that it stays the iteration space), the other and gradOutput may drop or shrink dims.
    const std::string whole = random() % 2 ? "self" : "target";
    GoldenCase& golden = c.golden;
    golden.op = op.name;
    golden.attrs = call_attrs(op, reduction, attr_set);
    const aclDataType target_dtype = weights_case ? sixteen_bit : plain ? ACL_FLOAT : pick_dtype(random);
    std::string dtypes;
    for (size_t slot = 0; slot < op.operands.size(); ++slot) {
        const std::string& role = op.operands[slot];
        const bool optional = kind.optional[slot];
        if (optional && !plain && !weights_case && random() % 4 == 0) {
            golden.tensors[role] = GoldenTensor{};
            dtypes += "none-";
            continue;
        }
        const bool output = role == op.output;
        aclDataType dtype = plain ? ACL_FLOAT : pick_dtype(random);
        if (role == "target" || (output && kind.out_dtype_is_target)) dtype = target_dtype;
        if (weights_case) dtype = optional ? ACL_FLOAT : output ? dtype : sixteen_bit;
        if (kind.inputs_share_dtype && !output) dtype = target_dtype;
        // A mutually broadcasting input never takes posWeight's one-dimensional view: the
        // draw for that view is made only when the input does not broadcast mutually.
        const bool mutual = kind.broadcasts_mutually && !output && role != whole;
        std::vector<int64_t> view = shape;
        if (output && kind.reducing && reduction != 0)
            view =
                random() % 2 || kind.reduced_zero_d_only ? std::vector<int64_t>{} : std::vector<int64_t>{1};
        else if (!mutual && role == "posWeight" && !shape.empty() && random() % 2)
            view = {shape.back()};
        else if (mutual || role == "gradOutput" || role == "weight" || role == "posWeight")
            view = plain ? shape : broadcast_shape(shape, random);
        const int layout_kind = plain || weights_case ? (output ? 1 : 0) : static_cast<int>(random() % 3);
        golden.tensors[role] =
            output ? layout(view, dtype, layout_kind, [] { return kSentinel; })
                   : layout(view, dtype, layout_kind, [&] { return random_value(role, op.kit, random); });
        dtypes += dtype_word(dtype);
        dtypes += "-";
    }
    std::string dims;
    for (int64_t dim : shape) dims += (dims.empty() ? "" : "x") + std::to_string(dim);
    golden.name = name + "_" + (dims.empty() ? "0d" : dims) + "_" + dtypes + "r" + std::to_string(reduction);
    if (!op.kit.attr_sets.empty()) golden.name += "_a" + std::to_string(attr_set % op.kit.attr_sets.size());
    expect(op, c);
    return c;
}

}  // namespace

std::vector<RandomCase> random_cases(const OpUnderTest& op, uint64_t seed, bool quick) {
    std::mt19937_64 random(seed ^ std::hash<std::string>{}(op.name));
    std::vector<RandomCase> cases;
    const int count = quick ? 40 : 240;
    for (int i = 0; i < count; ++i) {
        std::vector<int64_t> shape(static_cast<size_t>(random() % 5));
        for (auto& dim : shape) dim = 1 + static_cast<int64_t>(random() % 7);
        if (i % 12 == 11)
            shape = {1 + static_cast<int64_t>(random() % 64), 257 + static_cast<int64_t>(random() % 700)};
        const auto reduction =
            static_cast<int64_t>(random() % static_cast<uint64_t>(op.schema.max_reduction + 1));
        char name[16];
        std::snprintf(name, sizeof name, "r%03d", i);
        cases.push_back(
            make_case(op, random, shape, reduction, false, name, ACL_DT_UNDEFINED, static_cast<size_t>(i)));
    }
    // An op that rounds its weights to the promoted dtype: 16-bit inputs with float32 weights a
    // 16-bit type cannot hold, so that skipping the rounding changes many outputs by an ulp
    // (check_random_run counts them).
    if (op.schema.rounds_to_promoted())
        for (const aclDataType sixteen_bit : {ACL_FLOAT16, ACL_BF16})
            for (int i = 0; i < 2; ++i)
                cases.push_back(
                    make_case(op, random, {16, 64}, 0, false, "weights16_" + std::to_string(i), sixteen_bit));
    return cases;
}

RandomCase concurrency_case(const OpUnderTest& op, uint64_t seed, const std::vector<int64_t>& shape) {
    std::mt19937_64 random(seed);
    return make_case(op, random, shape, 0, true, "concurrent");
}

namespace {

// One view element of a run's output beside its expectations: the bits read back and those of
// the canonical float32 expression, the float64 reference, and the allowance for cancellation.
struct ElementUnderCheck {
    aclDataType dtype;
    bool reduced;  // the one value of a mean or sum
    uint32_t got_bits, want_bits;
    float got, want;
    double reference, allowance;
};

// Against the canonical float32 expression: the BCE backward exactly (every operation is
// exactly rounded), the others within a few ulps (exp and log are the backend's own).
std::string canonical_fault(const ElementUnderCheck& e, bool bit_exact) {
    const aclDataType dtype = e.dtype;
    if (e.reduced) {
        const double tolerance =
            (dtype == ACL_FLOAT ? 1e-6 * std::fabs(e.want) : ulp_of(e.want, dtype)) + e.allowance + 1e-37;
        if (std::fabs(static_cast<double>(e.got) - e.want) > tolerance)
            return number(e.got) + " is not within " + number(tolerance) + " of the canonical " +
                   number(e.want);
    } else if (bit_exact) {
        if (e.got_bits != e.want_bits)
            return number(e.got) + " is not the canonical expression's " + number(e.want) + " (" +
                   std::to_string(ulp_distance(e.got_bits, e.want_bits, dtype)) + " ulps)";
    } else {
        const double tolerance = (dtype == ACL_FLOAT ? 4 : 1) * ulp_of(e.want, dtype) + 2 * e.allowance;
        if (std::fabs(static_cast<double>(e.got) - e.want) > tolerance)
            return number(e.got) + " is " + std::to_string(ulp_distance(e.got_bits, e.want_bits, dtype)) +
                   " ulps from the canonical " + number(e.want) + " (allowed " +
                   (dtype == ACL_FLOAT ? "4" : "1") + " plus " + number(2 * e.allowance) + ")";
    }
    return "";
}

// Against float64: a relative tolerance for float32, one ulp of the rounded reference for
// the 16-bit types.
std::string reference_fault(const ElementUnderCheck& e) {
    const aclDataType dtype = e.dtype;
    if (dtype == ACL_FLOAT) {
        const double rtol = e.reduced ? 1e-6 : 1e-5;
        const double tolerance = rtol * std::fabs(e.reference) + 1e-37 + e.allowance;
        if (std::fabs(static_cast<double>(e.got) - e.reference) > tolerance)
            return number(e.got) + " is not within " + number(tolerance) + " of the float64 reference " +
                   number(e.reference);
        return "";
    }
    const float rounded = rounded_to(static_cast<float>(e.reference), dtype);
    const double tolerance = ulp_of(rounded, dtype) + e.allowance + (dtype == ACL_FLOAT16 ? 0x1p-24 : 1e-37);
    if (!std::isinf(rounded) && std::fabs(static_cast<double>(e.got) - rounded) > tolerance)
        return number(e.got) + " is more than one ulp from the float64 reference " + number(e.reference);
    return "";
}

// Why one element is wrong, or "": NaN and infinity must match exactly; a finite value must
// pass both the canonical and the float64 check.
std::string element_fault(const ElementUnderCheck& e, bool bit_exact) {
    if (std::isnan(e.want) || std::isnan(e.reference))
        return std::isnan(e.got) ? "" : "expected NaN, got " + number(e.got);
    if (std::isinf(e.want))
        return e.got == e.want ? "" : "expected " + number(e.want) + ", got " + number(e.got);
    std::string fault = canonical_fault(e, bit_exact);
    if (fault.empty()) fault = reference_fault(e);
    return fault;
}

// A 16-bit output rounds the float32 result once; a backend's own exp or log moves it by an
// ulp only where the result lies within a few float32 ulps of a rounding boundary, which is
// rare. Many elements an ulp off mean a different computation within the ulp each allows:
// a weight left unrounded to the promoted dtype, say.
std::string rounding_share_fault(const std::vector<uint8_t>& output, const std::vector<uint8_t>& canonical,
                                 aclDataType dtype, const std::vector<int64_t>& view) {
    size_t off = 0;
    for (const int64_t index : view)
        off += bits_at(output, dtype, static_cast<size_t>(index)) !=
               bits_at(canonical, dtype, static_cast<size_t>(index));
    if (off * 20 > view.size())
        return std::to_string(off) + " of " + std::to_string(view.size()) +
               " elements differ from the canonical expression (more than 5%): the computation is not "
               "the canonical one (inputs or weights rounded differently?)";
    return "";
}

// The storage around the output's view must keep its initial bytes.
std::string outside_view_fault(const std::vector<uint8_t>& output, const GoldenTensor& out,
                               const std::vector<int64_t>& view) {
    std::vector<bool> in_view(output.size() / element_size(out.dtype), false);
    for (int64_t index : view) in_view[static_cast<size_t>(index)] = true;
    for (size_t i = 0; i < in_view.size(); ++i)
        if (!in_view[i] && bits_at(output, out.dtype, i) != bits_at(out.storage, out.dtype, i))
            return "storage element " + std::to_string(i) + " outside the output's view was written";
    return "";
}

}  // namespace

std::string check_random_run(const OpUnderTest& op, const RandomCase& expected,
                             const std::vector<uint8_t>& output) {
    const GoldenCase& golden = expected.golden;
    const GoldenTensor& out = golden.tensors.at(op.output);
    const aclDataType dtype = out.dtype;
    if (output.size() != out.storage.size()) return "the output's storage was not read back";
    const auto view = out.view_indices();
    const bool reduced =
        view.size() == 1 && expected.reference.size() == 1 && op.schema.reducing && golden.attrs.at(0).i != 0;
    for (size_t n = 0; n < view.size(); ++n) {
        const size_t at = static_cast<size_t>(view[n]);
        ElementUnderCheck e{
            dtype, reduced, bits_at(output, dtype, at), bits_at(expected.canonical, dtype, at),
            0.0f,  0.0f,    expected.reference[n],      4 * 0x1p-23 * expected.magnitude[n]};
        e.got = value_of(e.got_bits, dtype);
        e.want = value_of(e.want_bits, dtype);
        if (const std::string fault = element_fault(e, op.schema.bit_exact); !fault.empty())
            return (reduced ? (golden.attrs[0].i == 1   ? "mean: "
                               : golden.attrs[0].i == 3 ? "batchmean: "
                                                        : "sum: ")
                            : "view element " + std::to_string(n) + ": ") +
                   fault;
    }
    if (dtype != ACL_FLOAT && !reduced && view.size() >= 256)
        if (std::string fault = rounding_share_fault(output, expected.canonical, dtype, view); !fault.empty())
            return fault;
    return outside_view_fault(output, out, view);
}

}  // namespace nnplug::conformance
