# Run after a GoogleTest executable is built (nnplug_add_gtest_suites in
# tests/CMakeLists.txt): lists its tests and writes a CTest include file with one CTest
# entry per test suite ("Suite" or "Instance/Suite" for parameterised ones), each running
# that suite in one process. One entry per case would start a process per golden case:
# under AddressSanitizer that start-up, not the cases, was most of the test time.
#
# Variables: TEST_EXECUTABLE, TEST_PREFIX, TEST_LABELS, TEST_ENVIRONMENT ("|"-separated
# NAME=value entries), TEST_EXCLUDE (GoogleTest negative patterns, ":"-separated, may be
# empty), CTEST_FILE (the file to write).
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}${errors}")
endif()

# Suite lines start in column 0 and end their name with a dot; test lines are indented.
string(REGEX MATCHALL "(^|\n)[^ \n#][^ \n]*\\." suite_lines "${listing}")
set(filter_tail "")
if(TEST_EXCLUDE)
  set(filter_tail "-${TEST_EXCLUDE}")
endif()
string(REPLACE "|" ";" environment "${TEST_ENVIRONMENT}")

set(script "")
foreach(line IN LISTS suite_lines)
  string(STRIP "${line}" suite)
  string(REGEX REPLACE "\\.$" "" suite "${suite}")
  set(name "${TEST_PREFIX}${suite}")
  string(APPEND script
    "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*${filter_tail}]==])\n"
    "set_tests_properties([==[${name}]==] PROPERTIES LABELS [==[${TEST_LABELS}]==] "
    "ENVIRONMENT [==[${environment}]==])\n")
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
