#include "golden_cases.h"

#include <fcntl.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/escaped_text.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "device_tensor.h"
#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclDataType parse_dtype(const std::string& name) {
    if (name == "f32") return ACL_FLOAT;
    if (name == "f16") return ACL_FLOAT16;
    if (name == "bf16") return ACL_BF16;
    throw std::runtime_error("unknown dtype " + name);
}

std::vector<int64_t> parse_dims(const std::string& text) {
    std::vector<int64_t> dims;
    if (text.size() < 2 || text.front() != '[' || text.back() != ']')
        throw std::runtime_error("bad dims " + text);
    std::stringstream items(text.substr(1, text.size() - 2));
    std::string item;
    while (std::getline(items, item, ',')) dims.push_back(std::stoll(item));
    return dims;
}

// Hex words of `digits` hex digits each, appended as little-endian bytes of that width.
std::vector<uint8_t> parse_words(std::istream& in, size_t bytes_per_word) {
    std::vector<uint8_t> bytes;
    std::string word;
    while (in >> word) {
        const uint64_t value = std::stoull(word, nullptr, 16);
        for (size_t b = 0; b < bytes_per_word; ++b) bytes.push_back(static_cast<uint8_t>(value >> (8 * b)));
    }
    return bytes;
}

std::vector<double> parse_doubles(std::istream& in) {
    const auto bytes = parse_words(in, 8);
    std::vector<double> values(bytes.size() / 8);
    if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());  // null data when empty
    return values;
}

// What a file that is not a regular file is, for the message refusing it.
const char* file_kind(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISDIR(mode)) return "a folder";
    return "not a file";
}

}  // namespace

std::vector<int64_t> GoldenTensor::view_indices() const {
    std::vector<int64_t> indices;
    int64_t count = 1;
    for (int64_t dim : view) count *= dim;
    std::vector<int64_t> index(view.size(), 0);
    for (int64_t n = 0; n < count; ++n) {
        int64_t at = offset;
        for (size_t k = 0; k < view.size(); ++k) at += index[k] * strides[k];
        indices.push_back(at);
        for (int64_t k = static_cast<int64_t>(view.size()) - 1; k >= 0; --k) {
            if (++index[k] < view[k]) break;
            index[k] = 0;
        }
    }
    return indices;
}

std::string read_case_file(const std::string& file) {
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
    const int fd = open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + escaped(file) + ": " + std::strerror(errno));
    struct stat info {};
    std::string text;
    const bool looked = fstat(fd, &info) == 0;
    const int error = errno;
    if (!looked || !S_ISREG(info.st_mode)) {
        close(fd);
        if (!looked)
            throw std::runtime_error("cannot look at " + escaped(file) + ": " + std::strerror(error));
        throw std::runtime_error("'" + escaped(file) + "' is not a regular file (" + file_kind(info.st_mode) +
                                 ")");
    }
    char buffer[65536];
    ssize_t got = 0;
    while ((got = read(fd, buffer, sizeof buffer)) != 0) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            const int error = errno;
            close(fd);
            throw std::runtime_error("cannot read " + escaped(file) + ": " + std::strerror(error));
        }
        text.append(buffer, static_cast<size_t>(got));
    }
    close(fd);
    return text;
}

std::vector<GoldenCase> load_golden_cases(const std::string& file) {
    std::istringstream in(read_case_file(file));
    std::vector<GoldenCase> cases;
    GoldenCase current;
    std::string line;
    int line_number = 0;
    while (std::getline(in, line)) {
        ++line_number;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string keyword;
        words >> keyword;
        try {
            if (keyword == "case") {
                current = GoldenCase{};
                words >> current.name >> current.op;
                // op_named throws for an op the catalog does not know; each attribute is
                // read as its schema types it.
                const std::vector<int32_t>& types = op_named(current.op).schema.attr_types;
                std::string value;
                while (words >> value)
                    current.attrs.push_back(AttrArg::parse(
                        current.attrs.size() < types.size() ? types[current.attrs.size()] : -1, value));
            } else if (keyword == "tensor") {
                std::string role, dtype;
                words >> role >> dtype;
                GoldenTensor& tensor = current.tensors[role];
                if (dtype == "none") continue;
                std::string view, strides, storage;
                tensor.present = true;
                tensor.dtype = parse_dtype(dtype);
                words >> view >> strides >> tensor.offset >> storage;
                tensor.view = parse_dims(view);
                tensor.strides = parse_dims(strides);
                tensor.storage_shape = parse_dims(storage);
                tensor.storage = parse_words(words, tensor.dtype == ACL_FLOAT ? 4 : 2);
            } else if (keyword == "expect_bits") {
                const std::string& output = op_named(current.op).output;
                current.expect_bits =
                    parse_words(words, current.tensors.at(output).dtype == ACL_FLOAT ? 4 : 2);
            } else if (keyword == "expect_ulps") {
                const std::string& output = op_named(current.op).output;
                if (!(words >> current.expect_ulps) || current.expect_ulps < 0)
                    throw std::runtime_error("expect_ulps needs a count of ulps");
                current.expect_near_bits =
                    parse_words(words, current.tensors.at(output).dtype == ACL_FLOAT ? 4 : 2);
            } else if (keyword == "reference_f64") {
                current.reference = parse_doubles(words);
            } else if (keyword == "scale_f64") {
                current.scale = parse_doubles(words);
            } else if (keyword == "end") {
                if (!current.scale.empty() && current.scale.size() != current.reference.size())
                    throw std::runtime_error("scale_f64 and reference_f64 differ in length");
                cases.push_back(std::move(current));
                current = GoldenCase{};  // a line after "end" must not meet a moved-from case
            } else {
                throw std::runtime_error("unknown keyword '" + keyword + "'");
            }
        } catch (const std::exception& error) {
            throw std::runtime_error(file + ":" + std::to_string(line_number) + ": " + error.what());
        }
    }
    return cases;
}

std::vector<GoldenCase> load_golden_folder(const std::string& folder) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        const std::string name = entry.path().filename().string();
        const std::string suffix = "_golden.txt";
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<GoldenCase> cases;
    for (const std::string& file : files) {
        auto more = load_golden_cases(file);
        cases.insert(cases.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return cases;
}

int64_t GoldenCase::attr(const std::string& attr_name, int64_t fallback) const {
    const auto& names = op_named(op).attrs;
    for (size_t i = 0; i < names.size() && i < attrs.size(); ++i)
        if (names[i] == attr_name) return attrs[i].i;
    return fallback;
}

UploadedOperands upload_operands(const GoldenCase& golden) {
    const OpUnderTest& op = op_named(golden.op);
    UploadedOperands uploaded;
    for (const std::string& role : op.operands) {
        const auto found = golden.tensors.find(role);
        if (found == golden.tensors.end() || !found->second.present) {
            uploaded.arguments.push_back(nullptr);
            continue;
        }
        const GoldenTensor& t = found->second;
        uploaded.tensors.push_back(
            std::make_unique<DeviceTensor>(t.storage, t.storage_shape, t.view, t.strides, t.offset, t.dtype));
        const DeviceTensor* tensor = uploaded.tensors.back().get();
        uploaded.arguments.push_back(tensor->get());
        if (role == op.output)
            uploaded.output = tensor;
        else
            uploaded.inputs.push_back(tensor);
    }
    return uploaded;
}

GoldenRun run_golden_case(const GoldenCase& golden) {
    const UploadedOperands uploaded = upload_operands(golden);
    GoldenRun run;
    run.status = run_op(op_named(golden.op), uploaded.arguments, golden.attrs);
    if (run.status != ACLNN_SUCCESS) run.message = aclGetRecentErrMsg();
    if (uploaded.output != nullptr) run.output = uploaded.output->storage_bytes();
    return run;
}

uint32_t bits_at(const std::vector<uint8_t>& bytes, aclDataType dtype, size_t index) {
    const size_t width = dtype == ACL_FLOAT ? 4 : 2;
    uint32_t value = 0;
    std::memcpy(&value, bytes.data() + index * width, width);
    return value;
}

float value_of(uint32_t bits, aclDataType dtype) {
    if (dtype == ACL_FLOAT) return bits_float(bits);
    return dtype == ACL_FLOAT16 ? f16_to_f32(static_cast<uint16_t>(bits))
                                : bf16_to_f32(static_cast<uint16_t>(bits));
}

double ulp_of(float value, aclDataType dtype) {
    const float magnitude = std::fabs(value);
    if (dtype == ACL_FLOAT) return static_cast<double>(std::nextafter(magnitude, INFINITY)) - magnitude;
    const uint16_t bits = dtype == ACL_FLOAT16 ? f32_to_f16(magnitude) : f32_to_bf16(magnitude);
    const float here = value_of(bits, dtype), next = value_of(static_cast<uint16_t>(bits + 1), dtype);
    return static_cast<double>(next) - here;
}

double scale_allowance(const GoldenCase& golden, size_t index) {
    if (index >= golden.scale.size()) return 0.0;
    return kScaleEpsilons * 0x1p-23 * golden.scale[index];
}

int64_t ulp_distance(uint32_t a, uint32_t b, aclDataType dtype) {
    const uint32_t sign = dtype == ACL_FLOAT ? 0x80000000u : 0x8000u;
    const auto ordered = [&](uint32_t bits) -> int64_t {
        return (bits & sign) ? -static_cast<int64_t>(bits & (sign - 1)) : static_cast<int64_t>(bits);
    };
    const int64_t distance = ordered(a) - ordered(b);
    return distance < 0 ? -distance : distance;
}

float rounded_to(float value, aclDataType dtype) {
    if (dtype == ACL_FLOAT) return value;
    return dtype == ACL_FLOAT16 ? f16_to_f32(f32_to_f16(value)) : bf16_to_f32(f32_to_bf16(value));
}

double relative_tolerance(aclDataType dtype) {
    return dtype == ACL_FLOAT ? 1e-5 : dtype == ACL_FLOAT16 ? 0x1p-10 : 0x1p-7;
}

namespace {

std::string number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", value);
    return text;
}

// A result against a float64 reference: same NaN-ness, same infinity, else within tolerance
// (rtol of the reference plus an absolute allowance). "" when it is.
std::string close_fault(float result, double reference, aclDataType dtype, double rtol, double allowance) {
    const float expected = rounded_to(static_cast<float>(reference), dtype);
    if (std::isnan(reference)) return std::isnan(result) ? "" : "expected NaN, got " + number(result);
    if (std::isinf(expected))
        return result == expected ? "" : "expected " + number(expected) + ", got " + number(result);
    const double tolerance =
        rtol * std::abs(reference) + (dtype == ACL_FLOAT16 ? 0x1p-24 : 1e-37) + allowance;
    if (std::abs(static_cast<double>(result) - reference) <= tolerance) return "";
    return number(result) + " is not within " + number(tolerance) + " of the float64 reference " +
           number(reference);
}

// A result against another float32 evaluation rounded to dtype: NaN where it is NaN, an
// infinity exactly, else within `ulps` of dtype at the expectation plus the scale allowance
// of both evaluations.
std::string near_fault(uint32_t got, uint32_t want, aclDataType dtype, int64_t ulps, double allowance) {
    const float got_value = value_of(got, dtype), want_value = value_of(want, dtype);
    if (std::isnan(want_value)) return std::isnan(got_value) ? "" : "expected NaN, got " + number(got_value);
    if (std::isinf(want_value))
        return got_value == want_value ? "" : "expected " + number(want_value) + ", got " + number(got_value);
    const double tolerance = static_cast<double>(ulps) * ulp_of(want_value, dtype) + 2 * allowance;
    if (std::abs(static_cast<double>(got_value) - want_value) <= tolerance) return "";
    return number(got_value) + " is " + std::to_string(ulp_distance(got, want, dtype)) + " ulps from " +
           number(want_value) + " (allowed " + std::to_string(ulps) + " plus " + number(2 * allowance) + ")";
}

}  // namespace

std::string check_golden_run(const GoldenCase& golden, const GoldenRun& run) {
    if (run.status != ACLNN_SUCCESS) return "status " + std::to_string(run.status) + ": " + run.message;
    const GoldenTensor& out_spec = golden.tensors.at(op_named(golden.op).output);
    const auto& after = run.output;
    const aclDataType dtype = out_spec.dtype;
    const auto view = out_spec.view_indices();
    const int64_t reduction = golden.attr("reduction");
    if (after.size() != out_spec.storage.size()) return "the output's storage was not read back";
    std::vector<bool> in_view(after.size() / element_size(dtype), false);
    for (int64_t index : view) in_view[index] = true;
    for (size_t i = 0; i < in_view.size(); ++i) {
        if (!in_view[i] && bits_at(after, dtype, i) != bits_at(out_spec.storage, dtype, i))
            return "storage element " + std::to_string(i) + " outside the output's view was written";
    }
    const auto allowance = [&](size_t n) { return scale_allowance(golden, n); };
    const auto at = [](size_t n) { return "view element " + std::to_string(n) + ": "; };
    if (!golden.expect_bits.empty() || golden.expect_ulps >= 0) {
        if (golden.reference.size() != view.size()) return "the case's reference has the wrong length";
        for (size_t n = 0; n < view.size(); ++n) {
            const uint32_t got = bits_at(after, dtype, view[n]);
            const float got_value = value_of(got, dtype);
            std::string fault;
            if (golden.expect_ulps >= 0) {
                fault = near_fault(got, bits_at(golden.expect_near_bits, dtype, view[n]), dtype,
                                   golden.expect_ulps, allowance(n));
            } else {
                const uint32_t want = bits_at(golden.expect_bits, dtype, view[n]);
                const float want_value = value_of(want, dtype);
                if (std::isnan(want_value)) {
                    if (!std::isnan(got_value)) fault = "canonical is NaN, got " + number(got_value);
                } else if (reduction == 1 && !std::isnan(got_value)) {
                    if (ulp_distance(got, want, dtype) > 1)
                        fault = number(got_value) + " is " + std::to_string(ulp_distance(got, want, dtype)) +
                                " ulps from the canonical " + number(want_value) + " (1 allowed for a mean)";
                } else if (got != want) {
                    fault = number(got_value) + " is not the canonical expression's " + number(want_value) +
                            " (" + std::to_string(ulp_distance(got, want, dtype)) + " ulps)";
                }
            }
            if (fault.empty())
                fault = close_fault(got_value, golden.reference[n], dtype, relative_tolerance(dtype),
                                    allowance(n));
            if (!fault.empty()) return at(n) + fault;
        }
        return "";
    }
    if (reduction != 0 && op_named(golden.op).schema.reducing) {
        if (view.size() != 1 || golden.reference.size() != 1)
            return "a reduced case needs one output element";
        const float got = value_of(bits_at(after, dtype, view[0]), dtype);
        const double rtol = dtype == ACL_FLOAT ? 1e-6 : relative_tolerance(dtype) / 2;
        const std::string fault = close_fault(got, golden.reference[0], dtype, rtol, allowance(0));
        return fault.empty() ? "" : std::string(reduction == 1 ? "mean: " : "sum: ") + fault;
    }
    if (golden.reference.size() != view.size()) return "the case's reference has the wrong length";
    for (size_t n = 0; n < view.size(); ++n) {
        const uint32_t got = bits_at(after, dtype, view[n]);
        if (dtype == ACL_FLOAT) {
            const std::string fault =
                close_fault(value_of(got, dtype), golden.reference[n], dtype, 1e-5, allowance(n));
            if (!fault.empty()) return at(n) + fault;
            continue;
        }
        const float expected = rounded_to(static_cast<float>(golden.reference[n]), dtype);
        if (std::isnan(expected)) {
            if (!std::isnan(value_of(got, dtype)))
                return at(n) + "expected NaN, got " + number(value_of(got, dtype));
            continue;
        }
        const uint32_t want = dtype == ACL_FLOAT16 ? f32_to_f16(expected) : f32_to_bf16(expected);
        if (ulp_distance(got, want, dtype) > 1)
            return at(n) + number(value_of(got, dtype)) + " is " +
                   std::to_string(ulp_distance(got, want, dtype)) + " ulps from the float64 reference " +
                   number(golden.reference[n]) + " rounded to " +
                   (dtype == ACL_FLOAT16 ? "float16" : "bfloat16");
    }
    return "";
}

}  // namespace nnplug::conformance
