// libFuzzer target: the training example's file writing and reading (safe_file.h) against
// what a careless or hostile user can leave at the output's name.
//
// The input:
//   byte 0   what is at the name before the write (% 7): nothing, an old file, a symlink to
//            a file outside the folder, a dangling symlink, a folder, a FIFO, a symlink to
//            the folder itself
//   byte 1   the name's length; the name's bytes follow ('/' and NUL read as '_' and '0':
//            the name stays in the scratch folder), so "", ".", ".." and names up to 255
//            bytes, the longest a file name may be, are all reached
//   the rest the bytes written
//
// The contract checked after every write: it succeeds exactly when the name can hold a
// file (not empty, ".", "..", or a folder already there); a success leaves a regular file
// (never a link) holding the bytes, which read_regular_file reads back whole and refuses
// one byte tighter; a failure leaves what was there as it was; either way the file a link
// pointed at is untouched, no temporary file is left in the folder and no descriptor leaks.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "safe_file.h"

namespace {

namespace fs = std::filesystem;

enum Planted { kNothing, kOldFile, kLinkOut, kDanglingLink, kFolder, kFifo, kLinkToFolder, kPlantedKinds };

const std::string kOld = "old contents\n", kVictim = "not to be overwritten\n";

[[noreturn]] void broken(const std::string& what) {
    std::fprintf(stderr, "fuzz_safe_file: contract broken: %s\n", what.c_str());
    std::abort();
}

std::string contents(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::ptrdiff_t open_descriptors() {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator());
}

// The scratch folders, made once: `base/outside` holds the file a planted link points at,
// `base/out` is emptied before each input.
struct Scratch {
    fs::path base, out, victim;
    Scratch() {
        std::string pattern = (fs::temp_directory_path() / "nnplug-fuzz-safe-file.XXXXXX").string();
        if (!mkdtemp(pattern.data())) broken("mkdtemp failed");
        base = pattern;
        out = base / "out";
        fs::create_directory(base / "outside");
        victim = base / "outside" / "victim";
        std::ofstream(victim, std::ios::binary) << kVictim;
    }
    ~Scratch() {
        std::error_code ignored;
        fs::remove_all(base, ignored);
    }
};

Scratch& scratch() {
    static Scratch instance;
    return instance;
}

void plant(Planted planted, const fs::path& at) {
    switch (planted) {
        case kOldFile:
            std::ofstream(at, std::ios::binary) << kOld;
            break;
        case kLinkOut:
            fs::create_symlink(scratch().victim, at);
            break;
        case kDanglingLink:
            fs::create_symlink(scratch().base / "nowhere", at);
            break;
        case kFolder:
            fs::create_directory(at);
            break;
        case kFifo:
            if (mkfifo(at.c_str(), 0644) != 0) broken("mkfifo failed");
            break;
        case kLinkToFolder:
            fs::create_symlink(".", at);
            break;
        default:
            break;
    }
}

bool unchanged(Planted planted, const fs::path& at) {
    const auto status = fs::symlink_status(at);
    switch (planted) {
        case kNothing:
            return status.type() == fs::file_type::not_found;
        case kOldFile:
            return status.type() == fs::file_type::regular && contents(at) == kOld;
        case kFolder:
            return status.type() == fs::file_type::directory && fs::is_empty(at);
        case kFifo:
            return status.type() == fs::file_type::fifo;
        default:
            return status.type() == fs::file_type::symlink;
    }
}

void check_written(const fs::path& path, const std::string& bytes) {
    if (fs::symlink_status(path).type() != fs::file_type::regular) broken("a success left no regular file");
    if (contents(path) != bytes) broken("the file does not hold the bytes written");
    if (train::read_regular_file(path, static_cast<int64_t>(bytes.size()), "output") != bytes)
        broken("read_regular_file read other bytes");
    if (bytes.empty()) return;
    try {
        train::read_regular_file(path, static_cast<int64_t>(bytes.size()) - 1, "output");
    } catch (const std::runtime_error&) {
        return;
    }
    broken("read_regular_file read a file over its limit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const auto planted = static_cast<Planted>(data[0] % kPlantedKinds);
    const size_t length = std::min<size_t>(data[1], size - 2);
    std::string name(reinterpret_cast<const char*>(data + 2), length);
    for (char& c : name) c = c == '/' ? '_' : c == '\0' ? '0' : c;
    const std::string bytes(reinterpret_cast<const char*>(data + 2 + length), size - 2 - length);

    Scratch& where = scratch();
    fs::remove_all(where.out);
    fs::create_directory(where.out);
    const fs::path path = where.out / name;
    const bool names_a_file = !name.empty() && name != "." && name != "..";
    if (names_a_file) plant(planted, path);
    const std::ptrdiff_t descriptors = open_descriptors();

    bool written = true;
    try {
        train::write_file_atomically(path, bytes);
    } catch (const std::runtime_error& error) {
        written = false;
        if (std::string(error.what()).empty()) broken("a failure without a message");
    }
    if (written != (names_a_file && planted != kFolder))
        broken(std::string(written ? "wrote" : "refused") + " a name of " + std::to_string(name.size()) +
               " bytes with planted kind " + std::to_string(planted));
    if (written) check_written(path, bytes);
    if (!written && names_a_file && !unchanged(planted, path))
        broken("a failed write changed what was there");
    if (contents(where.victim) != kVictim) broken("the file a link points at was written");
    for (const auto& entry : fs::directory_iterator(where.out))
        if (entry.path().filename() != name) broken("a temporary file was left in the folder");
    if (open_descriptors() != descriptors) broken("a descriptor leaked");
    return 0;
}
