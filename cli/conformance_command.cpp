// `nnplug conformance`: runs the conformance kit (conformance/kit.h) on a backend plugin.
#include <iostream>
#include <memory>

#include "command.h"
#include "kit.h"

namespace nnplug::cli {

namespace {

// Seconds from min to max. CLI::Range lets NaN through (no comparison with it is true), and
// a NaN timeout never expires: a plugin that never returns would hang the kit.
CLI::Validator seconds_between(double min, double max) {
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value)) return "Value " + text + " is not a number";
            if (value >= min && value <= max) return {};
            return "Value " + text + " not in range " + std::to_string(min) + " to " + std::to_string(max);
        },
        "SECONDS in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

}  // namespace

Command conformance_command(CLI::App& app) {
    auto options = std::make_shared<conformance::KitOptions>();
    CLI::App* sub = app.add_subcommand("conformance", "Check a backend plugin through the public CANN API");
    sub->footer(
        "Checks every op the plugin serves: the golden cases and random cases against the canonical float32 "
        "expressions and float64, every first-phase error and its code, storage outside out's view, repeated "
        "and concurrent runs, refusals, the device memory rules. Prints a table per case group and a "
        "summary; "
        "exits 0 when every case passes, 1 on a failure (a crash, exit or hang of the plugin included), 2 "
        "when the kit cannot run "
        "(docs/writing-a-plugin.md).");
    sub->add_option(
           "-p,--plugin", options->plugin,
           "the plugin: a backend name (libnnplug_<name>.so on the plugin search path) or a path to its .so")
        ->required();
    sub->add_option(
           "--ops", options->ops,
           "the ops to check, by aclnn name (aclnnBinaryCrossEntropyBackward ...); default: every op the "
           "plugin serves")
        ->delimiter(',');
    sub->add_flag("--every-op", options->every_op,
                  "check every op this SDK defines: one the plugin does not serve fails (for a backend that "
                  "claims them all)");
    sub->add_option(
           "--groups", options->groups,
           "the case groups to run: golden, random (with untouched and repeat), errors, concurrency, "
           "refusals, memory; default: all")
        ->delimiter(',');
    sub->add_option("-o,--option", options->backend_options,
                    "a plugin option KEY=VALUE, as under backends.<name> in a config (e.g. soc=Ascend910)");
    sub->add_flag("--allow-insecure-plugins", options->allow_insecure_plugins,
                  "load a plugin whose file or folder fails the ownership and permission checks (development "
                  "builds in shared folders)");
    sub->add_flag("-q,--quick", options->quick, "fewer random cases and shorter concurrent runs");
    sub->add_option("--seed", options->seed, "seed of the random cases")->capture_default_str();
    sub->add_option("--threads", options->threads, "host threads and streams of the concurrency checks")
        ->capture_default_str()
        ->check(CLI::Range(2u, 64u));
    sub->add_option(
        "--data", options->data_dir,
        "the folder of the golden case files (default: share/nnplug/conformance beside the program)");
    sub->add_option(
           "--case-timeout", options->case_timeout,
           "seconds a case may run before it is stopped and counts as failed (each group runs in a child "
           "process, so a plugin that hangs, crashes or exits fails that case)")
        ->capture_default_str()
        ->check(seconds_between(conformance::kMinCaseTimeout, conformance::kMaxCaseTimeout));
    sub->add_flag("-v,--verbose", options->verbose, "list every failure and refusal");
    return {sub, [options] { return conformance::run_kit(*options, std::cout); }};
}

}  // namespace nnplug::cli
