// A subcommand of the `nnplug` program. Each lives in its own file, cli/<name>_command.cpp,
// as a function that adds its CLI11 subcommand and options to the app and returns what runs
// it; main.cpp registers it with one line.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace nnplug::cli {

struct Command {
    CLI::App* subcommand = nullptr;  // as added to the app
    std::function<int()> run;        // runs it after parsing; returns the exit code
};

}  // namespace nnplug::cli
