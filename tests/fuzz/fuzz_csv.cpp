// libFuzzer target: the training example's CSV reader (dataset.h's load_csv).
//
// The input: byte 0 picks the format (% 3: auto, sklearn, plain); the rest is the file, where
// a byte 0xfe followed by a byte c stands for 5000 c's (never UTF-8 itself), so that short
// inputs reach fields and lines longer than a message line may be.
//
// The contract checked: a file is either read (at least one row, finite features, labels 0
// or 1, as many labels as rows) or refused with a std::runtime_error whose message is one
// line of at most nnplug::kLineBytes bytes of printable ASCII: every value it quotes is
// escaped and shortened, whatever bytes, encoding or field lengths the file holds.
#include <nnplug/escaped_text.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "dataset.h"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void broken(const std::string& what) {
    std::fprintf(stderr, "fuzz_csv: contract broken: %s\n", what.c_str());
    std::abort();
}

const fs::path& scratch() {
    static const fs::path folder = [] {
        std::string pattern = (fs::temp_directory_path() / "nnplug-fuzz-csv.XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) broken("mkdtemp failed");
        return fs::path(pattern);
    }();
    return folder;
}

void remove_scratch() {
    std::error_code ignored;
    fs::remove_all(scratch(), ignored);
}

void check_message(const std::string& message) {
    if (message.size() > nnplug::kLineBytes)
        broken("a message of " + std::to_string(message.size()) + " bytes: " + nnplug::brief(message));
    for (size_t at = 0; at < message.size(); ++at) {
        const auto byte = static_cast<unsigned char>(message[at]);
        if (byte < 0x20 || byte >= 0x7f)
            broken("byte " + std::to_string(at) + " of a message is raw (" + std::to_string(byte) +
                   "): " + nnplug::escaped(message));
    }
}

void check_dataset(const train::Dataset& data) {
    if (data.rows() < 1 || data.labels.size() != data.rows()) broken("a data set without rows was read");
    if (!data.features.allFinite()) broken("a feature that is not finite was read");
    for (Eigen::Index i = 0; i < data.labels.size(); ++i)
        if (data.labels[i] != 0.0f && data.labels[i] != 1.0f) broken("a label that is not 0 or 1 was read");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    scratch();
    std::atexit(remove_scratch);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const char* const kFormats[] = {"auto", "sklearn", "plain"};
    const fs::path path = scratch() / "data.csv";
    std::string file;
    for (size_t at = 1; at < size; ++at) {
        if (data[at] == 0xfe && at + 1 < size)
            file.append(5000, static_cast<char>(data[++at]));
        else
            file += static_cast<char>(data[at]);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << file;
    try {
        check_dataset(train::load_csv(path, kFormats[data[0] % 3]));
    } catch (const std::runtime_error& error) {
        check_message(error.what());
    }
    return 0;
}
