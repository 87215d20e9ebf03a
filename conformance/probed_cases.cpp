// The probed cases (KitRules::probe_inputs): an op whose docs fix every operation but one
// transcendental value per element leaves a backend only its own exp and log. A probe call
// reads that value back from the plugin for every element; the call under check must then
// give the canonical float32 expression's exact bits with those values. Tolerances cannot
// see a formula evaluated in another order (posWeight's expression at p = 1 for an absent
// posWeight, say): where terms cancel it is thousands of ulps off, yet within the
// cancellation allowance. Float32 only (a 16-bit probe would round the value), no
// reduction; one call with every optional operand absent, one with every operand present.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kit_internal.h"

namespace nnplug::conformance {
namespace {

constexpr int64_t kRows = 12, kColumns = 85;
constexpr float kSentinel = 1234.5f;

GoldenTensor contiguous_f32(const std::vector<float>& values, const std::vector<int64_t>& shape) {
    GoldenTensor t;
    t.present = true;
    t.dtype = ACL_FLOAT;
    t.view = shape;
    t.strides = contiguous_strides(shape);
    t.storage_shape = {element_count(shape)};
    t.storage = encode(values, ACL_FLOAT);
    return t;
}

float role_value(const ElementInputs& e, const std::string& role) {
    if (role == "gradOutput") return e.g;
    if (role == "self") return e.x;
    if (role == "target") return e.y;
    if (role == "weight") return e.w;
    return e.p;  // posWeight
}

// A float32 call of op over [kRows, kColumns] whose element n has the inputs elements[n];
// the optional operands absent when `absent`.
GoldenCase make_call(const OpUnderTest& op, const std::vector<ElementInputs>& elements, bool absent,
                     const std::string& name) {
    GoldenCase call;
    call.name = name;
    call.op = op.name;
    call.attrs = call_attrs(op, 0);  // reduction none
    const std::vector<int64_t> shape = {kRows, kColumns};
    for (size_t slot = 0; slot < op.operands.size(); ++slot) {
        const std::string& role = op.operands[slot];
        std::vector<float> values(elements.size(), kSentinel);
        if (role != op.output)
            for (size_t n = 0; n < elements.size(); ++n) values[n] = role_value(elements[n], role);
        call.tensors[role] =
            absent && op.schema.optional[slot] ? GoldenTensor{} : contiguous_f32(values, shape);
    }
    return call;
}

std::string number(float value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
    return text;
}

}  // namespace

std::vector<ProbedCase> probed_cases(const OpUnderTest& op, uint64_t seed) {
    if (!op.schema.canonical_order) return {};
    std::mt19937_64 random(seed ^ std::hash<std::string>{}(op.name + "/probed"));
    std::vector<ProbedCase> cases;
    for (const bool absent : {true, false}) {
        ProbedCase c;
        for (int64_t n = 0; n < kRows * kColumns; ++n) {
            ElementInputs e{};
            e.g = random_value("gradOutput", op.kit, random);
            e.x = random_value("self", op.kit, random);
            e.y = random_value("target", op.kit, random);
            e.w = absent ? 1.0f : random_value("weight", op.kit, random);
            e.p = absent ? 1.0f : random_value("posWeight", op.kit, random);
            e.has_p = !absent;
            e.scale = 1.0f;
            e.scale64 = 1.0;
            c.elements.push_back(e);
        }
        const std::string name = absent ? "probed_optional_absent" : "probed_all_present";
        c.golden = make_call(op, c.elements, absent, name);
        // (Moving the case keeps its attributes' buffer, so the elements may point into it.)
        for (ElementInputs& e : c.elements) e.attrs = c.golden.attrs.data();
        std::vector<ElementInputs> probes;
        for (const ElementInputs& e : c.elements) probes.push_back(op.kit.probe_inputs(e));
        c.probe = make_call(op, probes, false, name + "_probe");
        cases.push_back(std::move(c));
    }
    return cases;
}

std::string check_probed_run(const OpUnderTest& op, const ProbedCase& c, const std::vector<uint8_t>& probed,
                             const std::vector<uint8_t>& output) {
    if (output.size() != c.elements.size() * 4 || probed.size() != output.size())
        return "the output's storage was not read back";
    size_t checked = 0;
    for (size_t n = 0; n < c.elements.size(); ++n) {
        const float value = value_of(bits_at(probed, ACL_FLOAT, n), ACL_FLOAT);
        if (!std::isfinite(value)) continue;  // nothing to build the expression from
        ++checked;
        const float want = op.kit.canonical_given(c.elements[n], value);
        const uint32_t got_bits = bits_at(output, ACL_FLOAT, n);
        const float got = value_of(got_bits, ACL_FLOAT);
        if (std::isnan(want) && std::isnan(got)) continue;
        uint32_t want_bits = 0;
        std::memcpy(&want_bits, &want, 4);
        if (got_bits != want_bits)
            return "view element " + std::to_string(n) + ": " + number(got) + " is not " + number(want) +
                   ", the canonical expression with the plugin's own " + number(value) +
                   " for its exp/log part (" +
                   (std::isfinite(got) && std::isfinite(want)
                        ? std::to_string(ulp_distance(got_bits, want_bits, ACL_FLOAT)) + " ulps)"
                        : std::string("not finite)"));
    }
    if (checked == 0) return "the probe call gave no finite value";
    return "";
}

}  // namespace nnplug::conformance
