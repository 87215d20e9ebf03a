// The YAML config reader: values, and errors naming file, line, column and key.
#include "runtime_config.h"

#include <acl/acl_base.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "spelling.h"

namespace {

std::filesystem::path write(const std::string& name, const std::string& text) {
    auto file = std::filesystem::temp_directory_path() / name;
    std::ofstream(file) << text;
    return file;
}

TEST(RuntimeConfig, ReadsEveryKey) {
    const auto file = write("nnplug-config-full.yaml",
                            "backend: atlas_emu\nlog_level: debug\nplugin_paths: [plugins, /opt/p]\n"
                            "backends:\n  cpu_tbb:\n    threads: 2\n  atlas_emu:\n    soc: Ascend910B\n"
                            "application:\n  anything: [1, 2]\n");
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    ASSERT_TRUE(nnplug::load_runtime_config(file, config, error)) << error.message;
    EXPECT_EQ(config.backend, "atlas_emu");
    EXPECT_EQ(config.log_level, "debug");
    ASSERT_EQ(config.plugin_paths.size(), 2u);
    EXPECT_EQ(config.plugin_paths[0], file.parent_path() / "plugins");
    EXPECT_EQ(config.plugin_paths[1], "/opt/p");
    ASSERT_EQ(config.backend_options["cpu_tbb"].size(), 1u);
    EXPECT_EQ(config.backend_options["cpu_tbb"][0].key, "threads");
    EXPECT_EQ(config.backend_options["cpu_tbb"][0].value, "2");
    EXPECT_EQ(config.backend_options["atlas_emu"][0].value, "Ascend910B");
}

TEST(RuntimeConfig, EmptyFileKeepsDefaults) {
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    ASSERT_TRUE(nnplug::load_runtime_config(write("nnplug-config-empty.yaml", ""), config, error));
    EXPECT_EQ(config.backend, "cpu_tbb");
}

TEST(RuntimeConfig, MissingFileIsInvalidFile) {
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(nnplug::load_runtime_config("/nonexistent/nnplug.yaml", config, error));
    EXPECT_EQ(error.code, ACL_ERROR_INVALID_FILE);
    EXPECT_NE(error.message.find("/nonexistent/nnplug.yaml"), std::string::npos) << error.message;
}

TEST(RuntimeConfig, MalformedYamlNamesFileLineAndColumn) {
    const auto file = write("nnplug-config-bad.yaml", "backend: cpu_tbb\nbackends: [unclosed\n");
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(nnplug::load_runtime_config(file, config, error));
    EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE);
    EXPECT_NE(error.message.find(file.string() + ":3:1"), std::string::npos) << error.message;
}

TEST(RuntimeConfig, UnknownKeySuggestsTheClosest) {
    const auto file = write("nnplug-config-typo.yaml", "backnd: cpu_tbb\n");
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(nnplug::load_runtime_config(file, config, error));
    EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE);
    EXPECT_NE(error.message.find(file.string() + ":1:1: unknown key 'backnd' (did you mean 'backend'?)"),
              std::string::npos)
        << error.message;
}

TEST(RuntimeConfig, BadValuesNameTheKey) {
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(
        nnplug::load_runtime_config(write("nnplug-config-level.yaml", "log_level: loud\n"), config, error));
    EXPECT_NE(error.message.find(":1:12: key 'log_level' has value 'loud'"), std::string::npos)
        << error.message;
    EXPECT_FALSE(nnplug::load_runtime_config(write("nnplug-config-paths.yaml", "plugin_paths: here\n"),
                                             config, error));
    EXPECT_NE(error.message.find("key 'plugin_paths' must be a list"), std::string::npos) << error.message;
    EXPECT_FALSE(nnplug::load_runtime_config(
        write("nnplug-config-opts.yaml", "backends:\n  cpu_tbb:\n    threads: [1]\n"), config, error));
    EXPECT_NE(error.message.find(":3:14: key 'backends.cpu_tbb.threads' must be a single value"),
              std::string::npos)
        << error.message;
}

// A value holding a NUL (YAML's "\0") is refused: the file system or a plugin would read
// it up to the NUL ("libnnplug_cpu_tbb.so\0.txt" loaded libnnplug_cpu_tbb.so).
TEST(RuntimeConfig, AValueHoldingANulIsRefusedByName) {
    const struct {
        const char* text;
        const char* expected;
    } cases[] = {
        {"backend: \"/opt/libnnplug_cpu_tbb.so\\0.txt\"\n",
         ":1:10: key 'backend' has value '/opt/libnnplug_cpu_tbb.so\\x00.txt', which holds a NUL byte at "
         "byte 26; "
         "no name, path or option may"},
        {"plugin_paths: [\"/opt\\0/x\"]\n", ":1:16: key 'plugin_paths' has value '/opt\\x00/x', which holds"},
        {"backends:\n  cpu_tbb: {threads: \"1\\0\"}\n", "key 'backends.cpu_tbb.threads' has value '1\\x00'"},
        {"ops: {aclnnMseLoss: \"cpu_tbb\\0\"}\n", "key 'ops.aclnnMseLoss' has value 'cpu_tbb\\x00'"},
    };
    for (const auto& each : cases) {
        nnplug::RuntimeConfig config;
        nnplug::ConfigError error;
        EXPECT_FALSE(nnplug::load_runtime_config(write("nnplug-config-nul.yaml", each.text), config, error))
            << each.text;
        EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE) << each.text;
        EXPECT_NE(error.message.find(each.expected), std::string::npos) << error.message;
    }
}

TEST(RuntimeConfig, AKeyTwiceOrAnEmptyBackendIsRefused) {
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(nnplug::load_runtime_config(
        write("nnplug-config-twice.yaml", "backend: cpu_tbb\nlog_level: warn\nbackend: atlas_emu\n"), config,
        error));
    EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE);
    EXPECT_NE(error.message.find(":3:1: key 'backend' appears twice (first at line 1)"), std::string::npos)
        << error.message;
    EXPECT_FALSE(nnplug::load_runtime_config(
        write("nnplug-config-option-twice.yaml", "backends:\n  cpu_tbb: {threads: 1, threads: 2}\n"), config,
        error));
    EXPECT_NE(error.message.find(":2:25: key 'backends.cpu_tbb.threads' appears twice (first at line 2)"),
              std::string::npos)
        << error.message;
    // A tag with no value is an empty scalar: no backend to load.
    EXPECT_FALSE(nnplug::load_runtime_config(write("nnplug-config-no-backend.yaml", "backend: !!str\n"),
                                             config, error));
    EXPECT_NE(error.message.find(":1:10: key 'backend' names no backend"), std::string::npos)
        << error.message;
}

// A FIFO would block the read forever, a device never end; both are refused after one open,
// by fstat on that descriptor.
TEST(RuntimeConfig, AFifoOrADeviceIsRefusedWithoutBlocking) {
    const auto fifo = std::filesystem::temp_directory_path() / "nnplug-config-fifo.yaml";
    std::filesystem::remove(fifo);
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    for (const std::filesystem::path& path : {fifo, std::filesystem::path("/dev/zero")}) {
        nnplug::RuntimeConfig config;
        nnplug::ConfigError error;
        EXPECT_FALSE(nnplug::load_runtime_config(path, config, error));
        EXPECT_EQ(error.code, ACL_ERROR_INVALID_FILE);
        EXPECT_NE(error.message.find("'" + path.string() + "' is not a regular file"), std::string::npos)
            << error.message;
    }
    std::filesystem::remove(fifo);
}

TEST(RuntimeConfig, AFileOverTheSizeLimitIsRefusedAndOneAtItIsRead) {
    const std::string line = "# a comment line of padding\n";
    std::string text = "backend: atlas_emu\n";
    while (text.size() + line.size() <= nnplug::kMaxConfigBytes) text += line;
    text.append(nnplug::kMaxConfigBytes - text.size(), '#');
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    ASSERT_TRUE(nnplug::load_runtime_config(write("nnplug-config-at-limit.yaml", text), config, error))
        << error.message;
    EXPECT_EQ(config.backend, "atlas_emu");
    EXPECT_FALSE(
        nnplug::load_runtime_config(write("nnplug-config-over-limit.yaml", text + "#"), config, error));
    EXPECT_EQ(error.code, ACL_ERROR_INVALID_FILE);
    EXPECT_NE(error.message.find("is 1048577 bytes; a config is at most 1048576"), std::string::npos)
        << error.message;
}

TEST(RuntimeConfig, ASecondDocumentIsRefusedNotIgnored) {
    const auto file = write("nnplug-config-two-docs.yaml", "backend: cpu_tbb\n---\nbackend: atlas_emu\n");
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(nnplug::load_runtime_config(file, config, error));
    EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE);
    EXPECT_NE(error.message.find(file.string() + ":2:1: a second YAML document"), std::string::npos)
        << error.message;
    // yaml-cpp's LoadAll never returns on these: an empty document that consumes nothing.
    for (const char* stuck : {",", "---\n,\n", "backend: cpu_tbb\n...\n,\n"}) {
        EXPECT_FALSE(nnplug::load_runtime_config(write("nnplug-config-stuck.yaml", stuck), config, error));
        EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE);
        EXPECT_NE(error.message.find("malformed YAML: no YAML document can start here"), std::string::npos)
            << error.message;
    }
    ASSERT_TRUE(nnplug::load_runtime_config(write("nnplug-config-one-doc.yaml", "---\nbackend: atlas_emu\n"),
                                            config, error))
        << error.message;
    EXPECT_EQ(config.backend, "atlas_emu");
}

TEST(RuntimeConfig, AMisspeltBackendSectionIsRefusedWithTheClosestName) {
    const auto file =
        write("nnplug-config-misspelt-section.yaml", "backends:\n  cpu_tbbb:\n    threads: 2\n");
    nnplug::RuntimeConfig config;
    nnplug::ConfigError error;
    EXPECT_FALSE(nnplug::load_runtime_config(file, config, error));
    EXPECT_EQ(error.code, ACL_ERROR_PARSE_FILE);
    EXPECT_NE(error.message.find(file.string() + ":2:3: key 'backends.cpu_tbbb' names no backend"),
              std::string::npos)
        << error.message;
    EXPECT_NE(error.message.find("(did you mean 'cpu_tbb'?)"), std::string::npos) << error.message;
    // A section for the backend the file selects by path is known by its file's name.
    EXPECT_TRUE(nnplug::load_runtime_config(
        write("nnplug-config-path-section.yaml",
              "backend: /opt/p/libnnplug_mine.so\nbackends:\n  mine:\n    x: 1\n  atlas_emu: {}\n"),
        config, error))
        << error.message;
}

TEST(Spelling, SuggestsOnlyCloseWords) {
    EXPECT_EQ(nnplug::closest_match("threds", {"threads", "grain"}), "threads");
    EXPECT_EQ(nnplug::closest_match("zzzzzz", {"threads", "grain"}), "");
    EXPECT_EQ(nnplug::did_you_mean("cpu_tbx", {"cpu_tbb", "atlas_emu"}), " (did you mean 'cpu_tbb'?)");
}

}  // namespace
