# Script mode: runs `PROGRAM conformance --plugin PLUGIN` and requires exit code EXIT_CODE
# (default 1: a failed case, not a kit that could not run) and a line matching EXPECTED,
# which names the case.
if(NOT DEFINED EXIT_CODE)
  set(EXIT_CODE 1)
endif()
execute_process(COMMAND ${PROGRAM} conformance --plugin ${PLUGIN} --verbose
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
string(REGEX MATCH "[^\n]*conformance of [^\n]*" summary "${output}")
message(STATUS "${summary}")
if(NOT result EQUAL EXIT_CODE)
  message(FATAL_ERROR "expected exit code ${EXIT_CODE} from the kit, got ${result}:\n${output}")
endif()
string(REGEX MATCH "${EXPECTED}[^\n]*" line "${output}")
if(line STREQUAL "")
  message(FATAL_ERROR "no line matching '${EXPECTED}' in:\n${output}")
endif()
message(STATUS "caught: ${line}")
