// Rows of float features laid out for reads in a random order, as a shuffled epoch makes:
// each row starts on a cache line (its length padded to a multiple of 64 bytes), so a row
// costs no more line fills than its bytes need, and the table sits in transparent huge
// pages where Linux grants them, so that a scattered row seldom misses the TLB (with 4 KiB
// pages, nearly every row of a table of hundreds of MB needs a page walk of its own). A row
// that straddled an extra line, or waited on a walk, would hold its read in flight longer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace train {

class RowTable {
public:
    static constexpr int64_t kLineFloats = 64 / sizeof(float);

    RowTable() = default;
    // Rows of `columns` floats, zero.
    RowTable(int64_t rows, int64_t columns)
        : rows_(rows), columns_(columns), stride_((columns + kLineFloats - 1) / kLineFloats * kLineFloats) {
        bytes_ = static_cast<size_t>(rows_ * stride_) * sizeof(float);
        if (bytes_ == 0) return;
#if defined(__linux__)
        // Over-allocate by a huge page and keep an aligned span, so that every 2 MiB of the
        // table can be one huge page.
        const size_t span = (bytes_ + kHugePage - 1) / kHugePage * kHugePage;
        mapped_bytes_ = span + kHugePage;
        void* mapped =
            mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped == MAP_FAILED) throw std::bad_alloc();
        mapping_ = static_cast<char*>(mapped);
        const auto address = reinterpret_cast<uintptr_t>(mapping_);
        char* start = mapping_ + ((kHugePage - address % kHugePage) % kHugePage);
        // Advice only: where the kernel has no huge pages to give, the table works the same.
        madvise(start, span, MADV_HUGEPAGE);
        data_ = reinterpret_cast<float*>(start);  // mmap's pages are zero
#else
        data_ = static_cast<float*>(::operator new (bytes_, std::align_val_t{64}));
        std::memset(data_, 0, bytes_);
#endif
    }
    // A copy of `rows` row-major rows of `columns` floats each.
    RowTable(const float* source, int64_t rows, int64_t columns) : RowTable(rows, columns) {
        for (int64_t i = 0; i < rows_; ++i)
            std::memcpy(row(i), source + i * columns_, static_cast<size_t>(columns_) * sizeof(float));
    }
    RowTable(const RowTable&) = delete;
    RowTable& operator=(const RowTable&) = delete;
    RowTable(RowTable&& other) noexcept {
        swap(other);
    }
    RowTable& operator=(RowTable&& other) noexcept {
        RowTable moved(std::move(other));
        swap(moved);
        return *this;
    }
    ~RowTable() {
#if defined(__linux__)
        if (mapping_) munmap(mapping_, mapped_bytes_);
#else
        if (data_) ::operator delete (data_, std::align_val_t{64});
#endif
    }

    int64_t rows() const {
        return rows_;
    }
    int64_t columns() const {
        return columns_;
    }
    // Floats from one row's start to the next's: columns rounded up to whole cache lines.
    int64_t stride() const {
        return stride_;
    }
    const float* data() const {
        return data_;
    }
    float* row(int64_t i) {
        return data_ + i * stride_;
    }
    const float* row(int64_t i) const {
        return data_ + i * stride_;
    }

private:
    static constexpr size_t kHugePage = size_t{2} << 20;

    void swap(RowTable& other) noexcept {
        std::swap(rows_, other.rows_);
        std::swap(columns_, other.columns_);
        std::swap(stride_, other.stride_);
        std::swap(bytes_, other.bytes_);
        std::swap(data_, other.data_);
        std::swap(mapping_, other.mapping_);
        std::swap(mapped_bytes_, other.mapped_bytes_);
    }

    int64_t rows_ = 0, columns_ = 0, stride_ = 0;
    size_t bytes_ = 0;
    float* data_ = nullptr;
    char* mapping_ = nullptr;  // Linux: the whole mapping, aligned span inside
    size_t mapped_bytes_ = 0;
};

// The rows' 0/1 labels, one bit each: a step looks up a label per sample at a random row,
// and a table of bits stays in cache while the rows stream past it, where one of bytes
// (eight times the lines) would not.
class LabelBits {
public:
    explicit LabelBits(int64_t rows) : words_(static_cast<size_t>((rows + 63) / 64)) {}
    // Rows index as unsigned: a shift and a mask, not a signed division.
    void set(int64_t row) {
        const auto at = static_cast<uint64_t>(row);
        words_[at / 64] |= uint64_t{1} << (at % 64);
    }
    unsigned operator[](int64_t row) const {
        const auto at = static_cast<uint64_t>(row);
        return static_cast<unsigned>(words_[at / 64] >> (at % 64)) & 1u;
    }

private:
    std::vector<uint64_t> words_;
};

}  // namespace train
