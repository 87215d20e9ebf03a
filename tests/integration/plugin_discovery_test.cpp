// Finding backends: by name on the search path, with clear errors for the rest.
#include <acl/acl.h>
#include <gtest/gtest.h>

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

}  // namespace
