// Ranks agree before they train: every process of a data-parallel run must train with the
// same settings on the same data, or the combined steps mean nothing (or the job hangs).
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "train_settings.h"

namespace train {

class Communicator;

using SettingLines = std::vector<std::pair<std::string, std::string>>;

// What a process trains with, as sorted key/value lines: every setting that shapes the run
// (the config after the command line's overrides), the backend, the number of processes,
// the data file's size and FNV-1a hash (not its path, which may differ from host to host),
// and the checkpoint it resumes from, by the same digest, or none. Left out: train.threads
// (any count gives the same bytes) and output.dir (only rank 0 writes).
SettingLines effective_settings(const TrainSettings& settings, const std::string& backend, int processes,
                                const std::optional<std::filesystem::path>& resume_from = std::nullopt);

// Where the runtime sends each op and what the backends are told, from the config after
// overrides: `ops` (per-op backends) and `fallback`, "(none)" when absent, and each
// `backends.<name>.<option>`, as YAML text. A rank whose ops run elsewhere, or on an emulated
// SoC with other cores, computes other bytes. Left out: the options that change no result
// (threads, grain, host_threads, log_level, trace, bandwidth_gbps): each rank takes its
// share of the cores.
SettingLines runtime_settings(const ConfigDocument& document);

// "" when every process's lines are the same, else one line naming each key that differs
// and its value on each rank, e.g. "train.epochs (rank 0: 5, rank 1: 3)".
std::string settings_disagreement(const std::vector<SettingLines>& per_rank);

// Thrown by every process alike, so that they can all stop without an abort.
class SettingsMismatch : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Every process hashes its lines and the hashes are compared collectively; on a mismatch
// the lines are exchanged and every process throws SettingsMismatch naming the keys that
// differ. Alone, nothing to compare.
void agree_on_settings(Communicator& communicator, const SettingLines& lines);

}  // namespace train
