#include "dataset.h"

#include <fmt/format.h>
#include <nnplug/escaped_text.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "random_stream.h"

namespace train {
namespace {

std::string trim(const std::string& text) {
    const size_t begin = text.find_first_not_of(" \t\r");
    if (begin == std::string::npos) return "";
    const size_t end = text.find_last_not_of(" \t\r");
    return text.substr(begin, end - begin + 1);
}

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields;
    size_t start = 0;
    while (true) {
        const size_t comma = line.find(',', start);
        fields.push_back(trim(line.substr(start, comma - start)));
        if (comma == std::string::npos) return fields;
        start = comma + 1;
    }
}

std::optional<float> parse_float(const std::string& text) {
    float value = 0;
    const char* end = text.data() + text.size();
    const auto result = std::from_chars(text.data(), end, value);
    if (text.empty() || result.ec != std::errc() || result.ptr != end || !std::isfinite(value))
        return std::nullopt;
    return value;
}

std::optional<int64_t> parse_count(const std::string& text) {
    int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto result = std::from_chars(text.data(), end, value);
    if (text.empty() || result.ec != std::errc() || result.ptr != end || value < 1) return std::nullopt;
    return value;
}

// Where text stops being UTF-8 (a NUL counts as not text), or npos when it all is.
size_t first_byte_not_utf8(const std::string& text) {
    for (size_t at = 0; at < text.size();) {
        const auto lead = static_cast<unsigned char>(text[at]);
        if (lead == 0) return at;
        // The length of the sequence, and its least second byte's range (no overlong forms,
        // no surrogates, nothing past U+10FFFF).
        size_t length = 1;
        unsigned char low = 0x80, high = 0xbf;
        if (lead < 0x80) {
            ++at;
            continue;
        }
        if (lead >= 0xc2 && lead <= 0xdf) {
            length = 2;
        } else if (lead >= 0xe0 && lead <= 0xef) {
            length = 3;
            low = lead == 0xe0 ? 0xa0 : 0x80;
            high = lead == 0xed ? 0x9f : 0xbf;
        } else if (lead >= 0xf0 && lead <= 0xf4) {
            length = 4;
            low = lead == 0xf0 ? 0x90 : 0x80;
            high = lead == 0xf4 ? 0x8f : 0xbf;
        } else {
            return at;
        }
        if (at + length > text.size()) return at;
        for (size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[at + k]);
            if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xbf)) return at;
        }
        at += length;
    }
    return std::string::npos;
}

// The encoding a file starting with this line is in when it is not UTF-8: a byte order mark
// of UTF-16 or UTF-32, or NUL bytes between the characters (UTF-16, as spreadsheets export
// "Unicode text"). Empty when none of them.
std::string foreign_encoding(const std::string& first_line) {
    if (first_line.rfind(std::string("\xff\xfe\0\0", 4), 0) == 0 ||
        first_line.rfind(std::string("\0\0\xfe\xff", 4), 0) == 0)
        return "UTF-32 (it starts with a byte order mark)";
    if (first_line.rfind("\xff\xfe", 0) == 0 || first_line.rfind("\xfe\xff", 0) == 0)
        return "UTF-16 (it starts with a byte order mark)";
    size_t nuls = 0;
    for (const char c : first_line) nuls += c == '\0';
    if (first_line.size() >= 2 && nuls * 3 >= first_line.size())
        return "UTF-16 (NUL bytes between the characters of its first line)";
    return {};
}

// Refuses a line with a NUL or a byte that is not UTF-8, naming the byte and its column.
void check_text(const std::string& file, int64_t number, const std::string& line) {
    const size_t at = first_byte_not_utf8(line);
    if (at == std::string::npos) return;
    throw std::runtime_error(fmt::format("{}:{}: byte {} ({}) is {}; a data file is UTF-8 (or ASCII) text",
                                         file, number, at + 1, nnplug::escaped(line.substr(at, 1)),
                                         line[at] == '\0' ? "a NUL" : "not UTF-8"));
}

// "rows,features,name0,name1": two names for a binary set, two or more for C classes.
bool looks_like_sklearn_header(const std::vector<std::string>& fields, Task task = Task::kBinary) {
    const bool names_fit = task == Task::kBinary ? fields.size() == 4
                                                 : task == Task::kMulticlass && fields.size() >= 4 &&
                                                       fields.size() - 2 <= static_cast<size_t>(kMostClasses);
    if (!names_fit || !parse_count(fields[0]) || !parse_count(fields[1])) return false;
    for (size_t i = 2; i < fields.size(); ++i)
        if (parse_float(fields[i])) return false;
    return true;
}

// A row's label for the task, or a message saying why it is not one.
std::optional<float> parse_label(const std::string& text, Task task, int64_t classes, std::string& why) {
    const auto value = parse_float(text);
    if (task == Task::kBinary) {
        why = "is not 0 or 1";
        return value && (*value == 0.0f || *value == 1.0f) ? value : std::nullopt;
    }
    if (task == Task::kRegression) {
        why = "is not a finite number";
        return value;
    }
    why = fmt::format("is not a class index (a whole number from 0 to {})", classes - 1);
    if (!value || *value < 0 || *value >= static_cast<float>(classes) || *value != std::floor(*value))
        return std::nullopt;
    return value;
}

// The classes of a multi-class set: the header's names, else the indices up to the largest
// label; at least two.
void name_classes(const std::string& file, const std::vector<std::string>& names, Dataset& data) {
    data.class_names = names;
    if (names.empty()) {
        const int64_t largest = data.labels.size() ? static_cast<int64_t>(data.labels.maxCoeff()) : 0;
        for (int64_t c = 0; c <= largest; ++c) data.class_names.push_back(std::to_string(c));
    }
    if (data.class_names.size() < 2)
        throw std::runtime_error(
            fmt::format("{}: every label is 0; a multiclass task needs at least two classes", file));
}

}  // namespace

int64_t Dataset::classes() const {
    if (task == Task::kRegression) return 0;
    return task == Task::kBinary ? 2 : static_cast<int64_t>(class_names.size());
}

int64_t Dataset::positives() const {
    int64_t count = 0;
    for (Eigen::Index i = 0; i < labels.size(); ++i) count += labels[i] == 1.0f;
    return count;
}

Dataset load_csv(const std::filesystem::path& path, const std::string& format) {
    return load_csv(path, format, Task::kBinary);
}

namespace {

// The file's non-empty lines, with their numbers; refuses what is not UTF-8 text.
std::vector<std::pair<int64_t, std::string>> read_lines(const std::filesystem::path& path,
                                                        const std::string& file) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot open the data file", file));
    std::vector<std::pair<int64_t, std::string>> lines;
    std::string text;
    for (int64_t number = 1; std::getline(in, text); ++number) {
        if (number == 1) {
            if (const std::string encoding = foreign_encoding(text); !encoding.empty())
                throw std::runtime_error(
                    fmt::format("{}: the file is {}; a data file is UTF-8 (or ASCII) text", file, encoding));
            if (text.rfind("\xef\xbb\xbf", 0) == 0) text.erase(0, 3);  // UTF-8's byte order mark
        }
        check_text(file, number, text);
        if (!trim(text).empty()) lines.emplace_back(number, text);
    }
    if (lines.empty()) throw std::runtime_error(fmt::format("{}: the file holds no rows", file));
    return lines;
}

// What the first line says: whether it is a header, the rows it announces (-1: none), the
// features and the class names it gives.
struct CsvHeader {
    size_t first_row = 0;
    int64_t expected_rows = -1;
    int64_t features = -1;
    std::vector<std::string> names;
};

CsvHeader read_header(const std::string& file, const std::pair<int64_t, std::string>& line,
                      const std::string& format, Task task) {
    CsvHeader header;
    const auto fields = split_fields(line.second);
    const bool sklearn = format == "sklearn" || (format == "auto" && looks_like_sklearn_header(fields, task));
    if (sklearn) {
        if (!looks_like_sklearn_header(fields, task))
            throw std::runtime_error(fmt::format(
                "{}:{}: expected a header 'rows,features,name0,name1{}', found '{}'", file, line.first,
                task == Task::kMulticlass ? ",..." : "", nnplug::brief(trim(line.second))));
        header.expected_rows = *parse_count(fields[0]);
        header.features = *parse_count(fields[1]);
        header.names.assign(fields.begin() + 2, fields.end());
        header.first_row = 1;
        return header;
    }
    // A first line with a field that is not a number is a header of column names.
    bool all_numbers = true;
    for (const auto& field : fields) all_numbers = all_numbers && parse_float(field).has_value();
    if (!all_numbers) header.first_row = 1;
    header.features = static_cast<int64_t>(fields.size()) - 1;
    if (header.features < 1)
        throw std::runtime_error(
            fmt::format("{}:{}: a row needs at least one feature and a label", file, line.first));
    return header;
}

}  // namespace

Dataset load_csv(const std::filesystem::path& path, const std::string& format, Task task) {
    const std::string file = nnplug::escaped(path.string());
    const auto lines = read_lines(path, file);
    const CsvHeader header = read_header(file, lines[0], format, task);
    const int64_t feature_count = header.features;
    Dataset data;
    data.task = task;
    if (task == Task::kBinary && header.names.size() == 2)
        data.label_names = {header.names[0], header.names[1]};
    // Classes named by the header, else up to the largest label (checked row by row below).
    const int64_t classes = !header.names.empty() ? static_cast<int64_t>(header.names.size()) : kMostClasses;

    const int64_t rows = static_cast<int64_t>(lines.size() - header.first_row);
    if (rows == 0) throw std::runtime_error(fmt::format("{}: the file holds a header but no rows", file));
    if (header.expected_rows >= 0 && rows != header.expected_rows)
        throw std::runtime_error(fmt::format("{}: the header announces {} rows, the file holds {}", file,
                                             header.expected_rows, rows));
    // A row's fields, which must be the features and a label.
    const auto fields_of = [&](int64_t row) {
        const auto& [number, line] = lines[header.first_row + static_cast<size_t>(row)];
        auto fields = split_fields(line);
        if (static_cast<int64_t>(fields.size()) != feature_count + 1)
            throw std::runtime_error(
                fmt::format("{}:{}: expected {} values ({} features and a label), found {}", file, number,
                            feature_count + 1, feature_count, fields.size()));
        return fields;
    };
    fields_of(0);  // before the matrix is sized: a header's feature count is only a claim
    data.features.resize(rows, feature_count);
    data.labels.resize(rows);
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t number = lines[header.first_row + static_cast<size_t>(row)].first;
        const auto fields = fields_of(row);
        for (int64_t column = 0; column < feature_count; ++column) {
            const auto value = parse_float(fields[column]);
            if (!value)
                throw std::runtime_error(fmt::format("{}:{}: column {}: '{}' is not a finite number", file,
                                                     number, column + 1, nnplug::brief(fields[column])));
            data.features(row, column) = *value;
        }
        std::string why;
        const auto label = parse_label(fields.back(), task, classes, why);
        if (!label)
            throw std::runtime_error(
                fmt::format("{}:{}: label '{}' {}", file, number, nnplug::brief(fields.back()), why));
        data.labels[row] = *label;
    }
    if (task == Task::kMulticlass) name_classes(file, header.names, data);
    data.description =
        fmt::format("{} ({} rows, {} features)", path.filename().string(), rows, feature_count);
    return data;
}

Dataset make_synthetic(const SyntheticShape& shape, double noise, uint64_t seed) {
    RandomStream random(seed ^ 0x5eed5eed5eed5eedULL);
    std::vector<double> direction(shape.features);
    double norm = 0;
    for (auto& w : direction) {
        w = random.normal();
        norm += w * w;
    }
    norm = std::sqrt(norm);
    Dataset data;
    data.features.resize(shape.rows, shape.features);
    data.labels.resize(shape.rows);
    for (int64_t row = 0; row < shape.rows; ++row) {
        double margin = 0;
        for (int64_t column = 0; column < shape.features; ++column) {
            const double x = random.normal();
            data.features(row, column) = static_cast<float>(x);
            margin += x * direction[column];
        }
        margin = margin / norm + noise * random.normal();
        data.labels[row] = margin > 0 ? 1.0f : 0.0f;
    }
    data.description =
        fmt::format("synthetic ({} rows, {} features, noise {})", shape.rows, shape.features, noise);
    return data;
}

TrainTestSplit split_stratified(const Dataset& data, double test_fraction, uint64_t seed) {
    RandomStream random(seed ^ 0x0123456789abcdefULL);
    std::vector<int64_t> train_rows, test_rows;
    // Each class is a stratum (0 and 1 for a binary set); a regression set is one.
    const int64_t strata = data.task == Task::kRegression ? 1 : data.classes();
    for (int64_t stratum = 0; stratum < strata; ++stratum) {
        std::vector<int64_t> rows;
        for (int64_t row = 0; row < data.rows(); ++row)
            if (strata == 1 || data.labels[row] == static_cast<float>(stratum)) rows.push_back(row);
        random.shuffle(rows.data(), rows.size());
        const auto test_count =
            static_cast<size_t>(std::llround(test_fraction * static_cast<double>(rows.size())));
        test_rows.insert(test_rows.end(), rows.begin(), rows.begin() + test_count);
        train_rows.insert(train_rows.end(), rows.begin() + test_count, rows.end());
    }
    // Interleave the classes so that the order of rows carries no label information.
    random.shuffle(train_rows.data(), train_rows.size());
    random.shuffle(test_rows.data(), test_rows.size());
    if (train_rows.empty() || test_rows.empty())
        throw std::runtime_error(fmt::format("data set of {} rows is too small for a test fraction of {}",
                                             data.rows(), test_fraction));

    const auto take = [&](const std::vector<int64_t>& rows) {
        Dataset part;
        part.label_names = data.label_names;
        part.task = data.task;
        part.class_names = data.class_names;
        part.description = data.description;
        part.features.resize(static_cast<Eigen::Index>(rows.size()), data.features.cols());
        part.labels.resize(static_cast<Eigen::Index>(rows.size()));
        for (size_t i = 0; i < rows.size(); ++i) {
            part.features.row(static_cast<Eigen::Index>(i)) = data.features.row(rows[i]);
            part.labels[static_cast<Eigen::Index>(i)] = data.labels[rows[i]];
        }
        return part;
    };
    return {take(train_rows), take(test_rows)};
}

Standardizer Standardizer::fit(const FeatureMatrix& features) {
    // Accumulate in double: the sums of a million rows lose digits in float.
    const Eigen::RowVectorXd mean = features.cast<double>().colwise().mean();
    Eigen::RowVectorXd variance = Eigen::RowVectorXd::Zero(features.cols());
    for (Eigen::Index row = 0; row < features.rows(); ++row)
        variance += (features.row(row).cast<double>() - mean).array().square().matrix();
    variance /= static_cast<double>(features.rows());
    Standardizer standardizer;
    standardizer.mean = mean.cast<float>();
    standardizer.scale = variance.array().sqrt().cast<float>();
    for (Eigen::Index column = 0; column < standardizer.scale.size(); ++column)
        if (!(standardizer.scale[column] > 0)) standardizer.scale[column] = 1.0f;
    return standardizer;
}

void Standardizer::apply(FeatureMatrix& features) const {
    for (Eigen::Index row = 0; row < features.rows(); ++row)
        features.row(row) = (features.row(row) - mean).cwiseQuotient(scale);
}

uint64_t data_fingerprint(const Dataset& data) {
    // FNV-1a over 32-bit words (every value is a float): fast enough for a million rows.
    uint64_t hash = 1469598103934665603ULL;
    const auto mix_words = [&](const void* bytes, size_t words) {
        const auto* p = static_cast<const unsigned char*>(bytes);
        for (size_t i = 0; i < words; ++i) {
            uint32_t word;
            std::memcpy(&word, p + 4 * i, sizeof(word));
            hash = (hash ^ word) * 1099511628211ULL;
        }
    };
    const int64_t shape[2] = {data.features.rows(), data.features.cols()};
    mix_words(shape, 4);
    mix_words(data.features.data(), static_cast<size_t>(data.features.size()));
    mix_words(data.labels.data(), static_cast<size_t>(data.labels.size()));
    return hash;
}

}  // namespace train
