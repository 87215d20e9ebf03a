// nnplug: the command-line tool installed with the runtime (bin/nnplug). Subcommands:
//   nnplug conformance --plugin NAME|PATH [--ops ...]   check a backend plugin
//   nnplug info [--config FILE]                         the config, the plugins, where each op runs
#include <acl/acl.h>
#include <nnplug/plugin.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command.h"

// Every subcommand, one line each: X(name) is nnplug::cli::name_command() of
// cli/name_command.cpp (listed in cli/CMakeLists.txt), which returns its Command.
#define NNPLUG_SUBCOMMANDS(X) \
    X(conformance)            \
    X(info)

namespace nnplug::cli {
#define NNPLUG_DECLARE_SUBCOMMAND(name) Command name##_command(CLI::App& app);
NNPLUG_SUBCOMMANDS(NNPLUG_DECLARE_SUBCOMMAND)
#undef NNPLUG_DECLARE_SUBCOMMAND
}  // namespace nnplug::cli

namespace {

int run_command_line(int argc, char** argv) {
    CLI::App app{"nnplug: the CANN operator API runtime with pluggable backends"};
    app.set_version_flag("--version", std::string("nnplug ") + NNPLUG_VERSION + " (plugin ABI version " +
                                          std::to_string(NNPLUG_PLUGIN_ABI_VERSION) + ")");
    app.require_subcommand(1);
    app.footer("Run 'nnplug <command> --help' for the options of a command.");
    std::vector<nnplug::cli::Command> commands;
#define NNPLUG_ADD_SUBCOMMAND(name) commands.push_back(nnplug::cli::name##_command(app));
    NNPLUG_SUBCOMMANDS(NNPLUG_ADD_SUBCOMMAND)
#undef NNPLUG_ADD_SUBCOMMAND
    CLI11_PARSE(app, argc, argv);
    for (const auto& command : commands)
        if (command.subcommand->parsed()) return command.run();
    return 2;
}

}  // namespace

// No exception leaves main: whatever a command throws (a plugin's message, an allocation that
// fails) ends the program with its text and exit code 2.
int main(int argc, char** argv) {
    try {
        return run_command_line(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "nnplug: an unknown exception\n");
    }
    return 2;
}
