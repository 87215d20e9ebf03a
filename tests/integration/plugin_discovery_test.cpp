// Finding backends: by name on the search path, with clear errors for the rest; every
// member of a plugin table checked before use.
#include <acl/acl.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "acl_test_support.h"

namespace {

using nnplug::test::ScopedEnvironment;
using nnplug::test::TempFolder;

std::string message() { return aclGetRecentErrMsg(); }

aclError init_with(const TempFolder& folder, const std::string& text) {
    return aclInit(folder.write("config.yaml", text).c_str());
}

TEST(PluginDiscovery, DefaultBackendIsFoundInTheInstalledPluginFolder) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << message();
    EXPECT_STREQ(aclrtGetSocName(), "CPU");
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(PluginDiscovery, MissingBackendListsWhatIsAvailable) {
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: cpu_tbx\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend 'cpu_tbx' not found (did you mean 'cpu_tbb'?)"), std::string::npos) << message();
    EXPECT_NE(message().find("available: ["), std::string::npos) << message();
    EXPECT_NE(message().find("cpu_tbb", message().find("available: [")), std::string::npos) << message();
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE) << "nothing was initialized";
}

TEST(PluginDiscovery, FileThatIsNotALibraryIsRefused) {
    TempFolder folder;
    folder.write("libnnplug_text.so", "this is not an ELF file\n");
    ASSERT_EQ(init_with(folder, "backend: text\nplugin_paths: [.]\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("is not a loadable plugin"), std::string::npos) << message();
}

TEST(PluginDiscovery, LibraryWithoutEntrySymbolIsRefused) {
    ScopedEnvironment path("NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR);
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: noentry\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("does not export 'nnplug_plugin_entry'"), std::string::npos) << message();
}

TEST(PluginDiscovery, AVersionOnePluginIsRefusedInOneLineNamingTheFileAndBothVersions) {
    ScopedEnvironment path("NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR);
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: oldabi\n"), ACL_ERROR_FAILURE);
    const std::string file = std::string(NNPLUG_FAKE_PLUGIN_DIR) + "/libnnplug_oldabi.so";
    EXPECT_NE(message().find("'" + file + "' was built for plugin ABI version 1, this runtime speaks version 2"),
              std::string::npos)
        << message();
    EXPECT_EQ(message().find('\n'), std::string::npos) << message();
}

TEST(PluginDiscovery, APluginListingAnOpTwiceIsRefused) {
    ScopedEnvironment path("NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR);
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: twice\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("libnnplug_twice.so': its plugin table lists op 1 "
                             "(aclnnBinaryCrossEntropyBackward (again)) twice"),
              std::string::npos)
        << message();
}

TEST(PluginDiscovery, BackendEnvironmentVariableOverridesTheConfig) {
    ScopedEnvironment backend("NNPLUG_BACKEND", "nonexistent");
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: cpu_tbb\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend 'nonexistent' not found"), std::string::npos) << message();
}

TEST(PluginDiscovery, ConfigEnvironmentVariableIsReadForNull) {
    TempFolder folder;
    ScopedEnvironment config("NNPLUG_CONFIG", folder.write("c.yaml", "backend: elsewhere\n").c_str());
    ASSERT_EQ(aclInit(nullptr), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend 'elsewhere' not found"), std::string::npos) << message();
}

TEST(PluginDiscovery, UnknownBackendOptionSuggestsTheClosest) {
    TempFolder folder;
    const auto file = folder.write("config.yaml", "backends:\n  cpu_tbb:\n    threds: 2\n");
    ASSERT_EQ(aclInit(file.c_str()), ACL_ERROR_PARSE_FILE);
    EXPECT_NE(message().find(file.string() + ":3:5: unknown option 'threds' for backend 'cpu_tbb' (did you mean "
                                             "'threads'?)"),
              std::string::npos)
        << message();
}

TEST(PluginDiscovery, BadBackendOptionValueIsRefused) {
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backends:\n  cpu_tbb:\n    threads: many\n"), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("threads = 'many'"), std::string::npos) << message();
    ASSERT_EQ(init_with(folder, "backends:\n  cpu_tbb:\n    threads: 99999999999\n"), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("is not a whole number in [0, 4096]"), std::string::npos) << message();
}

TEST(PluginDiscovery, ConfigFileErrorsSurfaceThroughAclInit) {
    TempFolder folder;
    EXPECT_EQ(aclInit((folder.path() / "absent.yaml").c_str()), ACL_ERROR_INVALID_FILE);
    EXPECT_EQ(init_with(folder, "backend: [\n"), ACL_ERROR_PARSE_FILE);
    EXPECT_NE(message().find("malformed YAML"), std::string::npos) << message();
    EXPECT_EQ(init_with(folder, "log_levl: info\n"), ACL_ERROR_PARSE_FILE);
    EXPECT_NE(message().find("did you mean 'log_level'"), std::string::npos) << message();
}

TEST(PluginDiscovery, BadLogLevelInEnvironmentIsRefused) {
    ScopedEnvironment level("NNPLUG_LOG_LEVEL", "chatty");
    EXPECT_EQ(aclInit(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("log level 'chatty'"), std::string::npos) << message();
}

// A broken plugin table: the plugin built from bad_table_plugin.cpp for one defect, and
// the message that follows the file's quoted path.
struct BadTable {
    const char* defect;
    const char* reason;
};

void PrintTo(const BadTable& table, std::ostream* out) { *out << table.defect; }

class PluginTable : public ::testing::TestWithParam<BadTable> {};

// On the code before these checks each of these crashed aclInit or read past an array.
TEST_P(PluginTable, IsRefusedInOneLineAndTheNextInitWorks) {
    ScopedEnvironment path("NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR);
    TempFolder folder;
    const std::string defect = GetParam().defect;
    ASSERT_EQ(init_with(folder, "backend: " + defect + "\n"), ACL_ERROR_FAILURE);
    const std::string file = std::string(NNPLUG_FAKE_PLUGIN_DIR) + "/libnnplug_" + defect + ".so";
    EXPECT_NE(message().find("'" + file + "'" + GetParam().reason), std::string::npos) << message();
    EXPECT_EQ(message().find('\n'), std::string::npos) << message();
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE) << "nothing was initialized";
    // The refusal leaves nothing behind: the default backend still comes up.
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << message();
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
}

INSTANTIATE_TEST_SUITE_P(
    BadMembers, PluginTable,
    ::testing::Values(
        BadTable{"null_ops", ": its plugin table declares 1 ops but has a null 'ops'"},
        BadTable{"null_options", ": its plugin table declares 2 options but has a null 'options'"},
        BadTable{"huge_op_count", ": its plugin table declares 4000 ops, more than the 256 allowed"},
        BadTable{"huge_option_count",
                 ": its plugin table declares 18446744073709551615 options, more than the 256 allowed"},
        BadTable{"null_name", ": its plugin table has a null 'name'"},
        BadTable{"long_name",
                 ": its plugin table has a 'name' that is not a NUL-terminated string of at most 255 bytes"},
        BadTable{"unterminated_name",
                 ": its plugin table has a 'name' that runs into unreadable memory before its NUL"},
        BadTable{"wild_name", ": its plugin table has 'name' at 0x10, which is not readable memory"},
        BadTable{"wild_table", ": its entry symbol returned 0x10, which is not a readable table"},
        BadTable{"wild_ops", ": its plugin table has 'ops' at 0x10, which is not readable memory"},
        BadTable{"wild_device", ": its plugin table has 'device' at 0x10, which is not readable memory"},
        BadTable{"huge_struct_size",
                 " declares a plugin table of 4294967295 bytes, more than the 4096 a table may have"},
        BadTable{"null_option_key", ": its plugin table has an option without a key (options[0])"},
        BadTable{"null_op_name", ": its plugin table has a null 'ops[0].name'"},
        BadTable{"negative_op",
                 ": its plugin table has ops[0] (aclnnBinaryCrossEntropyBackward) of op kind -1, which is "
                 "negative"},
        BadTable{"bad_memory_kind",
                 ": its plugin table has a device table whose memory_kind 7 is neither 0 (host) nor 1 (device)"},
        BadTable{"control_in_description", ": its plugin table has a control character in 'description'"}),
    [](const ::testing::TestParamInfo<BadTable>& info) { return std::string(info.param.defect); });

TEST(PluginTableOptional, APluginWithoutADescriptionLoads) {
    ScopedEnvironment path("NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR);
    ScopedEnvironment level("NNPLUG_LOG_LEVEL", "info");  // the line that names the description
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: null_description\n"), ACL_SUCCESS) << message();
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
}

}  // namespace
