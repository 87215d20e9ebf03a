# Script mode: runs `PROGRAM conformance --plugin PLUGIN [EXTRA]` and requires an exit code
# matching EXIT_CODE (default 1: a failed case, not a kit that could not run; CMake gives a
# death by signal as text, e.g. "Subprocess aborted") and a line matching EXPECTED, which names
# the case. FORBIDDEN_LINE_START, when given, must start no line of the output (plugin
# text cannot pass for the kit's own), and a failed run (exit code 1) prints its summary.
# MAX_OUTPUT_BYTES, when given, bounds the length of everything the kit printed.
if(NOT DEFINED EXIT_CODE)
  set(EXIT_CODE 1)
endif()
string(REPLACE "|" ";" EXTRA "${EXTRA}")  # EXTRA: arguments separated by |
execute_process(COMMAND ${PROGRAM} conformance --plugin ${PLUGIN} ${EXTRA} --verbose
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
# The kit's own summary starts its line; a plugin's forged one is indented and escaped.
string(REGEX MATCH "(^|\n)conformance of [^\n]*" summary "${output}")
string(STRIP "${summary}" summary)
message(STATUS "${summary}")
if(NOT result MATCHES "^${EXIT_CODE}$")
  message(FATAL_ERROR "expected exit code ${EXIT_CODE} from the kit, got ${result}:\n${output}")
endif()
string(REGEX MATCH "${EXPECTED}[^\n]*" line "${output}")
if(line STREQUAL "")
  message(FATAL_ERROR "no line matching '${EXPECTED}' in:\n${output}")
endif()
message(STATUS "caught: ${line}")
if(DEFINED FORBIDDEN_LINE_START)
  string(FIND "\n${output}" "\n${FORBIDDEN_LINE_START}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "a line starts with '${FORBIDDEN_LINE_START}':\n${output}")
  endif()
endif()
if(DEFINED MAX_OUTPUT_BYTES)
  string(LENGTH "${output}" length)
  if(length GREATER MAX_OUTPUT_BYTES)
    message(FATAL_ERROR "the kit printed ${length} bytes; at most ${MAX_OUTPUT_BYTES} expected")
  endif()
endif()
if(summary STREQUAL "" AND EXIT_CODE STREQUAL "1")
  message(FATAL_ERROR "no summary line in:\n${output}")
endif()
