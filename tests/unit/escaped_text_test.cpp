// nnplug::escaped, the one escaper of everything the project prints from users, files and
// plugins: the runtime's messages and log, nnplug info, the conformance kit, nnplug_train.
#include <gtest/gtest.h>
#include <nnplug/escaped_text.h>

#include <random>
#include <string>

namespace {

using nnplug::escaped;

TEST(EscapedText, PrintableAsciiIsKept) {
    EXPECT_EQ(escaped("plain text: a/b 'c' \"d\" ~"), "plain text: a/b 'c' \"d\" ~");
    EXPECT_EQ(escaped(""), "");
}

TEST(EscapedText, ControlBytesAndDeleteBecomeHexCodes) {
    EXPECT_EQ(escaped("a\nb\x1b[31mc\x7f"), "a\\x0ab\\x1b[31mc\\x7f");
    EXPECT_EQ(escaped("tab\there\rcr"), "tab\\x09here\\x0dcr");
    EXPECT_EQ(escaped(std::string("nul\0x", 5)), "nul\\x00x");
}

// Outside ASCII every byte is escaped: U+009B (CSI) in its UTF-8 form moves the cursor on
// terminals that take 8-bit controls, and invalid UTF-8 must not reach the terminal either.
TEST(EscapedText, BytesAboveAsciiBecomeHexCodes) {
    EXPECT_EQ(escaped("\xc2\x9b"
                      "2J"),
              "\\xc2\\x9b2J");
    EXPECT_EQ(escaped("caf\xc3\xa9"), "caf\\xc3\\xa9");
    EXPECT_EQ(escaped("\xff\x80"), "\\xff\\x80");
}

// Messages are escaped where they are built and again where they are printed; a second
// pass must not change them (a backslash is therefore kept, not doubled).
TEST(EscapedText, EscapingTwiceChangesNothingMore) {
    EXPECT_EQ(escaped("C:\\path\\x0a"), "C:\\path\\x0a");
    std::mt19937 random(7);
    for (int round = 0; round < 500; ++round) {
        std::string text(random() % 40, '\0');
        for (char& c : text) c = static_cast<char>(random() % 256);
        const std::string once = escaped(text);
        EXPECT_EQ(escaped(once), once);
        for (const char c : once) {
            const auto byte = static_cast<unsigned char>(c);
            ASSERT_TRUE(byte >= 0x20 && byte < 0x7f) << "byte " << int(byte) << " in " << once;
        }
    }
}

// A value quoted in a message is cut at its first 256 bytes with its length stated; a whole
// line at about 4 KiB, keeping its start and its end. A 1,000,000-byte backend name made a
// 1 MB message before.
TEST(EscapedText, BriefValuesAndBoundedLinesStateWhatWasLeftOut) {
    EXPECT_EQ(nnplug::brief("short\n"), "short\\x0a");
    EXPECT_EQ(nnplug::brief(std::string(256, 'a')), std::string(256, 'a'));
    EXPECT_EQ(nnplug::brief(std::string(1000000, 'a')), std::string(256, 'a') + "... (1000000 bytes)");
    EXPECT_EQ(nnplug::brief(std::string(10, '\x1b'), 2), "\\x1b\\x1b... (10 bytes)");
    EXPECT_EQ(nnplug::bounded_line(std::string(4096, 'b')), std::string(4096, 'b'));
    const std::string line = "start " + std::string(1000000, 'm') + " end";
    const std::string bounded = nnplug::bounded_line(line);
    EXPECT_LE(bounded.size(), 4096u + 64u);
    EXPECT_EQ(bounded.rfind("start mmm", 0), 0u);
    EXPECT_EQ(bounded.substr(bounded.size() - 8), "mmmm end");
    EXPECT_NE(bounded.find(" ... (" + std::to_string(line.size() - 2048 - 1024) + " bytes left out) ... "),
              std::string::npos);
    EXPECT_EQ(nnplug::bounded_line(bounded), bounded);  // bounded twice reads as bounded once
}

}  // namespace
