# Script mode: the third-party path from an install, with no source tree but the plugin's
# and a sample's.
#  1. install nnplug into PREFIX;
#  2. build plugins/examples/scalar_ref out of tree with find_package(nnplug) against it;
#  3. register the built plugin by a path relative to a config file and run a CANN sample
#     (examples/aclnn_binary_cross_entropy_with_logits_backward.cpp, built against the install) through it;
#  4. run the installed `nnplug conformance` on the plugin by that path (its golden data
#     from PREFIX/share/nnplug/conformance);
#  5. install the plugin with nnplug_add_plugin's rule into PREFIX's plugin folder and run
#     the kit on it by name.
file(REMOVE_RECURSE ${PREFIX} ${PLUGIN_BUILD} ${SAMPLES_BUILD})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} COMMAND_ERROR_IS_FATAL ANY
                OUTPUT_QUIET)
foreach(file bin/nnplug share/nnplug/conformance/binary_cross_entropy_golden.txt lib/cmake/nnplug/nnplugPlugin.cmake
        include/nnplug/plugin.h include/nnplug/plugin_support.h include/nnplug/op_slots.h
        include/nnplug/dtype_convert.h include/nnplug/ops/binary_cross_entropy_math.h include/nnplug/ops/binary_cross_entropy_with_logits_math.h)
  if(NOT EXISTS ${PREFIX}/${file})
    message(FATAL_ERROR "the install lacks ${file}")
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${PLUGIN_SOURCE} -B ${PLUGIN_BUILD} -G Ninja -DCMAKE_PREFIX_PATH=${PREFIX}
                        -DCMAKE_BUILD_TYPE=Release
                COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${PLUGIN_BUILD} COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
set(plugin ${PLUGIN_BUILD}/libnnplug_scalar_ref.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "the out-of-tree build made no ${plugin}")
endif()
# Only the entry point is exported.
execute_process(COMMAND nm -D --defined-only ${plugin} OUTPUT_VARIABLE symbols COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCHALL "[^\n]* [TW] [^\n]*" functions "${symbols}")
if(NOT functions MATCHES "nnplug_plugin_entry" OR functions MATCHES ";")
  message(FATAL_ERROR "the plugin exports other functions than nnplug_plugin_entry:\n${functions}")
endif()

# A config beside the plugin naming it by a relative path.
file(WRITE ${PLUGIN_BUILD}/scalar_ref.yaml "backend: ./libnnplug_scalar_ref.so\nlog_level: warn\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SAMPLES_DIR}/outside_build -B ${SAMPLES_BUILD}
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release -DSAMPLES_DIR=${SAMPLES_DIR}
                        -DSAMPLES=aclnn_binary_cross_entropy_with_logits_backward
                COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${SAMPLES_BUILD} COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
# The values examples/CMakeLists.txt expects of this sample on every backend.
set(ENV{NNPLUG_CONFIG} ${PLUGIN_BUILD}/scalar_ref.yaml)
execute_process(COMMAND ${CMAKE_COMMAND} -DPROGRAM=${SAMPLES_BUILD}/aclnn_binary_cross_entropy_with_logits_backward
                        -DEXPECTED=0.119203,-1.244919,0.000000,-0.188770,-0.182426,0.476287
                        -P ${SAMPLES_DIR}/check_sample_output.cmake
                COMMAND_ERROR_IS_FATAL ANY)
unset(ENV{NNPLUG_CONFIG})

execute_process(COMMAND ${PREFIX}/bin/nnplug conformance --plugin ${plugin} RESULT_VARIABLE result
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
string(REGEX MATCH "conformance of [^\n]*" summary "${output}")
if(NOT result EQUAL 0 OR NOT summary MATCHES ": PASS")
  message(FATAL_ERROR "the installed kit on the out-of-tree plugin (exit ${result}):\n${output}")
endif()
message(STATUS "${summary}")

execute_process(COMMAND ${CMAKE_COMMAND} --install ${PLUGIN_BUILD} COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
if(NOT EXISTS ${PREFIX}/lib/nnplug/plugins/libnnplug_scalar_ref.so)
  message(FATAL_ERROR "cmake --install put the plugin elsewhere than ${PREFIX}/lib/nnplug/plugins")
endif()
execute_process(COMMAND ${PREFIX}/bin/nnplug conformance --plugin scalar_ref --quick RESULT_VARIABLE result
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
string(REGEX MATCH "conformance of [^\n]*" summary "${output}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the installed kit on the installed plugin, by name (exit ${result}):\n${output}")
endif()
message(STATUS "${summary}")
