// Files the training reads and writes, safe against planted links and odd file types:
// outputs replace their target whole or not at all and never follow a symlink; inputs must
// be regular files of a bounded size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace train {

// Writes bytes to a fresh file in path's folder (created with O_CREAT | O_EXCL | O_NOFOLLOW
// under a random name, so a link planted there is never followed), fsyncs it, renames it
// over path (which replaces a link at path itself, never its target) and fsyncs the folder:
// a crash leaves the old file or the new one. Throws std::runtime_error naming the file.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

// The bytes of a regular file (following links, as the user named it). The file is opened
// without blocking and checked with fstat on that descriptor: a FIFO, a device, a socket or
// a folder is refused, as is a file larger than max_bytes, before anything is read. Throws
// std::runtime_error "<what> '<path>' ...".
std::string read_regular_file(const std::filesystem::path& path, int64_t max_bytes, const std::string& what);

}  // namespace train
