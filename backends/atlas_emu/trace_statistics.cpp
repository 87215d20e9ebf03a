#include "trace_statistics.h"

#include <cinttypes>
#include <cstdio>

#include "chrome_trace.h"

namespace nnplug::emu {

std::string statistics_json(const ElementwiseTiling& tiling, int64_t bytes_moved, double device_us) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "{\"blockDim\":%d,\"tilesPerCore\":%" PRId64 ",\"tileElements\":%" PRId64
                  ",\"ubBytes\":%" PRId64 ",\"workspaceBytes\":%" PRIu64 ",\"bytesMoved\":%" PRId64
                  ",\"estimatedDeviceUs\":",
                  tiling.block_dim, tiling.tiles_per_core, tiling.tile_elements, tiling.ub_bytes,
                  tiling.workspace_bytes, bytes_moved);
    return text + json_number(device_us) + "}";
}

std::string class_statistics_json(const ClassTiling& tiling, int64_t bytes_moved) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "{\"blockDim\":%d,\"rowsPerCore\":%" PRId64 ",\"tileElements\":%" PRId64
                  ",\"tilesPerRow\":%" PRId64 ",\"ubBytes\":%" PRId64 ",\"bytesMoved\":%" PRId64 "}",
                  tiling.block_dim, tiling.rows_per_core, tiling.tile_elements, tiling.tiles_per_row,
                  tiling.ub_bytes, bytes_moved);
    return text;
}

std::string nll_statistics_json(const NllTiling& tiling, int64_t bytes_moved) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "{\"blockDim\":%d,\"rowsPerCore\":%" PRId64 ",\"rowsPerTile\":%" PRId64
                  ",\"tileElements\":%" PRId64 ",\"tilesPerRow\":%" PRId64
                  ",\"layout\":\"%s\",\"ubBytes\":%" PRId64 ",\"bytesMoved\":%" PRId64 "}",
                  tiling.block_dim, tiling.rows_per_core, tiling.rows_per_tile, tiling.tile_elements,
                  tiling.tiles_per_row, tiling.planes ? "planes" : "rows", tiling.ub_bytes, bytes_moved);
    return text;
}

}  // namespace nnplug::emu
