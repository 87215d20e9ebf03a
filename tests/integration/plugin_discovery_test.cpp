// Finding backends: by name on the search path, with clear errors for the rest; every
// member of a plugin table checked before use; a plugin loaded only from a folder that
// only root or the current user can write to.
#include <acl/acl.h>
#include <gtest/gtest.h>
#include <nnplug/inventory.h>
#include <nnplug/plugin.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <thread>

#include "acl_test_support.h"

namespace {

namespace fs = std::filesystem;
using nnplug::test::ScopedEnvironment;
using nnplug::test::TempFolder;

std::string message() {
    return aclGetRecentErrMsg();
}

aclError init_with(const TempFolder& folder, const std::string& text) {
    return aclInit(folder.write("config.yaml", text).c_str());
}

TEST(PluginDiscovery, DefaultBackendIsFoundInTheInstalledPluginFolder) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << message();
    EXPECT_STREQ(aclrtGetSocName(), "CPU");
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

// The backends register their kernels by file (nnplug_op_sources): an op whose kernel file
// is missing would go unnoticed but for this check against the SDK's op list.
TEST(PluginDiscovery, EveryFirstPartyBackendRunsEveryOpTheSdkKnows) {
    const nnplug::Inventory inventory = nnplug::take_inventory(nullptr);
    for (const char* backend : {"cpu_tbb", "atlas_emu"}) {
        const auto plugin = std::find_if(inventory.plugins.begin(), inventory.plugins.end(),
                                         [&](const nnplug::PluginReport& p) { return p.name == backend; });
        ASSERT_NE(plugin, inventory.plugins.end()) << backend;
        EXPECT_EQ(plugin->ops.size(), static_cast<size_t>(NNPLUG_OP_KIND_COUNT)) << backend;
        for (int op = 0; op < NNPLUG_OP_KIND_COUNT; ++op)
            EXPECT_NE(std::find(plugin->ops.begin(), plugin->ops.end(), nnplug_op_api_name(op)),
                      plugin->ops.end())
                << backend << " lacks " << nnplug_op_api_name(op);
    }
}

TEST(PluginDiscovery, MissingBackendListsWhatIsAvailable) {
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: cpu_tbx\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend 'cpu_tbx' not found (did you mean 'cpu_tbb'?)"), std::string::npos)
        << message();
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
    EXPECT_NE(
        message().find("'" + file + "' was built for plugin ABI version 1, this runtime speaks version 2"),
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
    EXPECT_NE(
        message().find(file.string() + ":3:5: unknown option 'threds' for backend 'cpu_tbb' (did you mean "
                                       "'threads'?)"),
        std::string::npos)
        << message();
}

TEST(PluginDiscovery, BadBackendOptionValueIsRefused) {
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backends:\n  cpu_tbb:\n    threads: many\n"), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("threads = 'many'"), std::string::npos) << message();
    ASSERT_EQ(init_with(folder, "backends:\n  cpu_tbb:\n    threads: 99999999999\n"),
              ACL_ERROR_INVALID_PARAM);
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

void PrintTo(const BadTable& table, std::ostream* out) {
    *out << table.defect;
}

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
        BadTable{
            "bad_memory_kind",
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

// soc_name() returning null is replaced by "unknown", never passed on to a printf or a
// compare (aclrtGetSocName, the log line, the SoC rules of every first phase).
TEST(PluginDiscovery, ANullSocNameIsShownAsUnknown) {
    ScopedEnvironment path("NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR);
    ScopedEnvironment level("NNPLUG_LOG_LEVEL", "info");  // the line that names the SoC
    TempFolder folder;
    ASSERT_EQ(init_with(folder, "backend: null_soc_name\n"), ACL_SUCCESS) << message();
    ASSERT_NE(aclrtGetSocName(), nullptr);
    EXPECT_STREQ(aclrtGetSocName(), "unknown");
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
}

// docs/plugin-abi.md's limit for names, 255 bytes, is the one enforced, also where the
// name ends at the last byte of readable memory.
TEST(PluginDiscovery, ANameOf255BytesLoadsAndOf256IsRefused) {
    TempFolder folder;
    const std::string fakes = NNPLUG_FAKE_PLUGIN_DIR;
    ASSERT_EQ(init_with(folder, "backend: " + fakes + "/libnnplug_name_255.so\n"), ACL_SUCCESS) << message();
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
    ASSERT_EQ(init_with(folder, "backend: " + fakes + "/libnnplug_name_256.so\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("a 'name' that is not a NUL-terminated string of at most 255 bytes"),
              std::string::npos)
        << message();
}

void set_mode(const fs::path& path, mode_t mode) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
}

// The working marker plugin copied into a folder of a fresh temp folder, with the config
// that selects it: root/plugins/libnnplug_marker.so and root/config.yaml. The plugin's
// constructor writes root/constructor-ran, which shows whether it was ever opened.
class PluginTrust : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directory(plugins_);
        fs::copy_file(fs::path(NNPLUG_FAKE_PLUGIN_DIR) / "libnnplug_marker.so", plugin_);
        // Explicit modes, so the tests do not depend on the umask they run under.
        set_mode(root_.path(), 0755);
        set_mode(plugins_, 0755);
        set_mode(plugin_, 0755);
    }
    void TearDown() override {
        if (initialized_) {
            EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
        }
    }

    aclError init(const std::string& config = "backend: marker\nplugin_paths: [plugins]\n") {
        const aclError status = aclInit(root_.write("config.yaml", config).c_str());
        initialized_ = status == ACL_SUCCESS;
        return status;
    }
    bool constructor_ran() const { return fs::exists(marker_); }
    // The start of a refusal of the marker plugin, found at `found`.
    std::string refused(const fs::path& found) const { return "plugin '" + found.string() + "' refused: "; }
    std::string refused() const { return refused(plugin_); }

    TempFolder root_;
    const fs::path plugins_ = root_.path() / "plugins";
    const fs::path plugin_ = plugins_ / "libnnplug_marker.so";
    const fs::path marker_ = root_.path() / "constructor-ran";
    ScopedEnvironment marker_variable_{"NNPLUG_FAKE_MARKER", marker_.c_str()};
    ScopedEnvironment insecure_{"NNPLUG_ALLOW_INSECURE_PLUGINS", nullptr};
    bool initialized_ = false;
};

TEST_F(PluginTrust, APluginInAFolderOnlyItsOwnerWritesLoads) {
    ASSERT_EQ(init(), ACL_SUCCESS) << message();
    EXPECT_TRUE(constructor_ran());
}

TEST_F(PluginTrust, AFolderWritableByGroupIsRefusedBeforeTheConstructorRuns) {
    set_mode(plugins_, 0775);
    ScopedEnvironment level("NNPLUG_LOG_LEVEL", "warn");  // debug would add set_last_error's own line
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(message().find(refused() + "its folder '" + fs::canonical(plugins_).string() +
                             "' is writable by group or others (mode 0775)"),
              std::string::npos)
        << message();
    EXPECT_EQ(message().find('\n'), std::string::npos) << message();
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
    EXPECT_NE(log.find(refused()), std::string::npos) << log;
    EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginTrust, AFolderWritableByOthersIsRefused) {
    set_mode(plugins_, 0757);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "its folder '" + fs::canonical(plugins_).string() +
                             "' is writable by group or others (mode 0757)"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginTrust, AWorldWritablePluginFileIsRefused) {
    set_mode(plugin_, 0777);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "the plugin file is writable by group or others (mode 0777)"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginTrust, AFolderAboveWritableByOthersIsRefusedUnlessSticky) {
    set_mode(root_.path(), 0777);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "the folder '" + fs::canonical(root_.path()).string() +
                             "' above it is writable by group or others without the sticky bit (mode 0777)"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
    // With the sticky bit, as on /tmp, only an entry's owner can replace it.
    set_mode(root_.path(), 01777);
    ASSERT_EQ(init(), ACL_SUCCESS) << message();
    EXPECT_TRUE(constructor_ran());
}

// As ssh's StrictModes: a group that may write a folder above the plugin's could rename
// the plugin's folder away and put its own in place.
TEST_F(PluginTrust, AFolderAboveWritableByGroupIsRefusedUnlessSticky) {
    set_mode(root_.path(), 0775);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "the folder '" + fs::canonical(root_.path()).string() +
                             "' above it is writable by group or others without the sticky bit (mode 0775)"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
    set_mode(root_.path(), 01775);
    ASSERT_EQ(init(), ACL_SUCCESS) << message();
    EXPECT_TRUE(constructor_ran());
}

TEST_F(PluginTrust, AFolderAboveOwnedByAnotherUserIsRefused) {
    if (geteuid() != 0) GTEST_SKIP() << "changing a folder's owner needs root";
    ASSERT_EQ(chown(root_.path().c_str(), 65534, 65534), 0);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "the folder '" + fs::canonical(root_.path()).string() +
                             "' above it is owned by uid 65534, neither root nor the current user (uid 0)"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
    ASSERT_EQ(chown(root_.path().c_str(), 0, 0), 0);
}

TEST_F(PluginTrust, AFifoInPlaceOfThePluginIsRefusedWithoutHanging) {
    fs::remove(plugin_);
    ASSERT_EQ(mkfifo(plugin_.c_str(), 0644), 0);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "it is not a regular file"), std::string::npos) << message();
}

// The file is opened once and every check is made on that descriptor: a refused library
// renamed over the trusted one at any moment is either not loaded or loaded only if it
// was already in place when the file was opened, and then refused by its mode.
TEST_F(PluginTrust, ALibrarySwappedInAfterTheChecksNeverRuns) {
    const fs::path trusted = plugins_ / "trusted.so", refused_copy = plugins_ / "refused.so";
    std::atomic<bool> stop{false};
    std::thread swapper([&] {
        for (unsigned round = 0; !stop.load(); ++round) {
            const fs::path& from = round % 2 == 0 ? refused_copy : trusted;
            fs::copy_file(round % 2 == 0 ? fs::path(NNPLUG_FAKE_PLUGIN_DIR) / "libnnplug_marker_swapped.so"
                                         : fs::path(NNPLUG_FAKE_PLUGIN_DIR) / "libnnplug_marker.so",
                          from, fs::copy_options::overwrite_existing);
            chmod(from.c_str(), round % 2 == 0 ? 0666 : 0755);
            fs::rename(from, plugin_);
        }
    });
    // Counted, not timed: 2000 initialisations, each file in place for many of them (the
    // path-checked loader ran the refused library in 1 of 300 to 1 of 4), so a slow machine
    // races as long as it takes (at most 60 s) and a fast one stops early.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int loaded = 0, refusals = 0;
    while ((loaded + refusals < 2000 || loaded < 200 || refusals < 200) &&
           std::chrono::steady_clock::now() < limit) {
        if (init() == ACL_SUCCESS) {
            ++loaded;
            ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
            initialized_ = false;
        } else {
            ++refusals;
        }
    }
    stop = true;
    swapper.join();
    EXPECT_FALSE(fs::exists(marker_.string() + ".swapped"))
        << "a refused library ran; " << loaded << " loads, " << refusals << " refusals";
    // Both files were in place when initialisations started: the swap did race them.
    EXPECT_GT(loaded, 0);
    EXPECT_GT(refusals, 0);
}

TEST_F(PluginTrust, ASymlinkOutOfItsFolderIsRefused) {
    const fs::path elsewhere = root_.path() / "elsewhere";
    fs::create_directory(elsewhere);
    set_mode(elsewhere, 0755);
    fs::rename(plugin_, elsewhere / plugin_.filename());
    fs::create_symlink("../elsewhere/libnnplug_marker.so", plugin_);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "it is a symlink to '" +
                             fs::canonical(elsewhere / plugin_.filename()).string() +
                             "', which leaves its folder '" + fs::canonical(plugins_).string() + "'"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginTrust, ASymlinkWithinItsFolderLoads) {
    fs::rename(plugin_, plugins_ / "libnnplug_marker.so.1");
    fs::create_symlink("libnnplug_marker.so.1", plugin_);
    ASSERT_EQ(init(), ACL_SUCCESS) << message();
    EXPECT_TRUE(constructor_ran());
}

TEST_F(PluginTrust, ANameWithDotDotOrABackslashIsRefused) {
    for (const std::string name : {"..marker", "plugins\\marker"}) {
        ASSERT_EQ(init("backend: '" + name + "'\nplugin_paths: [plugins]\n"), ACL_ERROR_FAILURE) << name;
        EXPECT_NE(
            message().find("backend name '" + name + "' refused: a plugin name holds no '..', backslash"),
            std::string::npos)
            << message();
    }
    EXPECT_FALSE(constructor_ran());
}

// libnnplug_<name>.so must fit a file name: a longer name is refused as such, not left to
// the file system, whose "File name too long" came out as an internal error.
TEST_F(PluginTrust, ABackendNameTooLongForItsFileNameIsRefusedByName) {
    const std::string longest(242, 'n'), too_long(243, 'n');
    ASSERT_EQ(init("backend: " + longest + "\nplugin_paths: [plugins]\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend '" + longest + "' not found"), std::string::npos) << message();
    ASSERT_EQ(init("backend: " + too_long + "\nplugin_paths: [plugins]\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend name '" + too_long +
                             "' refused: it is 243 bytes; a backend name is at most 242, so that "
                             "libnnplug_<name>.so fits a file name (255 bytes)"),
              std::string::npos)
        << message();
    // A name of a megabyte: the message quotes 256 bytes of it and its length.
    const std::string huge(1000000, 'n');
    ASSERT_EQ(init("backend: " + huge + "\nplugin_paths: [plugins]\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find("backend name '" + std::string(256, 'n') +
                             "... (1000000 bytes)' refused: it is 1000000 bytes"),
              std::string::npos)
        << message().substr(0, 400);
    EXPECT_LE(message().size(), 4096u) << message().substr(0, 400);
    const std::string path = "plugins/" + std::string(300, 'p') + ".so";
    ASSERT_EQ(init("backend: " + path + "\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(path + "' cannot be looked at: File name too long"), std::string::npos)
        << message();
}

// A plugin on a file system mounted noexec is refused saying so; the loader's own error was
// "Bad file descriptor". In a child with a mount namespace of its own; skipped where the
// test may not mount.
TEST_F(PluginTrust, APluginOnANoexecFileSystemIsRefusedSayingSo) {
    const fs::path told = root_.path() / "message.txt";
    const pid_t child = fork();
    if (child == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, nullptr) != 0 ||
            mount("tmpfs", plugins_.c_str(), "tmpfs", MS_NOEXEC, "mode=0755") != 0)
            _exit(77);
        std::error_code failed;
        fs::copy_file(fs::path(NNPLUG_FAKE_PLUGIN_DIR) / "libnnplug_marker.so", plugin_, failed);
        if (failed || chmod(plugin_.c_str(), 0755) != 0) _exit(78);
        const aclError status =
            aclInit(root_.write("config.yaml", "backend: marker\nplugin_paths: [plugins]\n").c_str());
        std::ofstream(told) << aclGetRecentErrMsg();
        _exit(status == ACL_ERROR_FAILURE ? 0 : 1);
    }
    ASSERT_GT(child, 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no mount namespace with a noexec tmpfs here";
    std::ifstream file(told);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(WEXITSTATUS(status), 0) << text;
    EXPECT_NE(
        text.find("cannot be loaded: its file system is mounted noexec, which does not allow executing it"),
        std::string::npos)
        << text;
    EXPECT_FALSE(constructor_ran());
}

// A backend path holding a NUL (YAML's "\0") is refused whole: the file system would read
// it up to the NUL and load libnnplug_marker.so.
TEST_F(PluginTrust, ABackendPathHoldingANulIsRefusedNotCut) {
    ScopedEnvironment backend("NNPLUG_BACKEND", nullptr);
    ASSERT_EQ(init("backend: \"" + plugin_.string() + "\\0.txt\"\n"), ACL_ERROR_PARSE_FILE);
    EXPECT_NE(message().find("which holds a NUL byte at byte " + std::to_string(plugin_.string().size() + 1)),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginTrust, APluginOrFolderOwnedByAnotherUserIsRefused) {
    if (geteuid() != 0) GTEST_SKIP() << "changing a file's owner needs root";
    const uid_t nobody = 65534;
    ASSERT_EQ(chown(plugin_.c_str(), nobody, nobody), 0);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(
        message().find(refused() +
                       "the plugin file is owned by uid 65534, neither root nor the current user (uid 0)"),
        std::string::npos)
        << message();
    ASSERT_EQ(chown(plugin_.c_str(), 0, 0), 0);
    ASSERT_EQ(chown(plugins_.c_str(), nobody, nobody), 0);
    ASSERT_EQ(init(), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused() + "its folder '" + fs::canonical(plugins_).string() +
                             "' is owned by uid 65534, neither root nor the current user (uid 0)"),
              std::string::npos)
        << message();
    EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginTrust, AllowInsecurePluginsLoadsAnyway) {
    set_mode(plugins_, 0777);
    ASSERT_EQ(init("backend: marker\nplugin_paths: [plugins]\nallow_insecure_plugins: true\n"), ACL_SUCCESS)
        << message();
    EXPECT_TRUE(constructor_ran());
}

TEST_F(PluginTrust, TheEnvironmentVariableAllowsInsecurePluginsAndOverridesTheConfig) {
    set_mode(plugin_, 0666);
    {
        ScopedEnvironment insecure("NNPLUG_ALLOW_INSECURE_PLUGINS", "0");
        ASSERT_EQ(init("backend: marker\nplugin_paths: [plugins]\nallow_insecure_plugins: true\n"),
                  ACL_ERROR_FAILURE);
        EXPECT_NE(message().find(refused() + "the plugin file is writable by group or others (mode 0666)"),
                  std::string::npos)
            << message();
        EXPECT_FALSE(constructor_ran());
    }
    ScopedEnvironment insecure("NNPLUG_ALLOW_INSECURE_PLUGINS", "1");
    ASSERT_EQ(init(), ACL_SUCCESS) << message();
    EXPECT_TRUE(constructor_ran());
}

TEST_F(PluginTrust, BadAllowInsecureValuesAreRefused) {
    ASSERT_EQ(init("backend: marker\nallow_insecure_plugins: maybe\n"), ACL_ERROR_PARSE_FILE);
    EXPECT_NE(
        message().find("config.yaml:2:25: key 'allow_insecure_plugins' has value 'maybe'; expected true or "
                       "false"),
        std::string::npos)
        << message();
    ScopedEnvironment insecure("NNPLUG_ALLOW_INSECURE_PLUGINS", "yes");
    ASSERT_EQ(init(), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("NNPLUG_ALLOW_INSECURE_PLUGINS is 'yes'"), std::string::npos) << message();
    EXPECT_FALSE(constructor_ran());
}

// The working directory for the lifetime of the object.
class ScopedWorkingDirectory {
public:
    explicit ScopedWorkingDirectory(const fs::path& path) : old_(fs::current_path()) {
        fs::current_path(path);
    }
    ~ScopedWorkingDirectory() { fs::current_path(old_); }

private:
    fs::path old_;
};

TEST_F(PluginTrust, RelativePathsResolveAgainstTheConfigFolderNotTheWorkingDirectory) {
    TempFolder elsewhere;
    ScopedWorkingDirectory cwd(elsewhere.path());
    ASSERT_EQ(init("backend: ./plugins/libnnplug_marker.so\n"), ACL_SUCCESS) << message();
    EXPECT_TRUE(constructor_ran());
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS) << message();
    ASSERT_EQ(init(), ACL_SUCCESS) << message();  // plugin_paths: [plugins]
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS) << message();
    initialized_ = false;
    // A path-named plugin obeys the same rules, in the folder it names.
    set_mode(plugins_, 0775);
    ASSERT_EQ(init("backend: plugins/libnnplug_marker.so\n"), ACL_ERROR_FAILURE);
    EXPECT_NE(message().find(refused(root_.path() / "plugins/libnnplug_marker.so") + "its folder '" +
                             fs::canonical(plugins_).string() + "' is writable by group or others"),
              std::string::npos)
        << message();
}

}  // namespace
