# Script mode: installs the build tree into a scratch prefix, builds the samples from their
# unchanged sources against it, runs each (installed default config, no environment) and
# checks its printed values with check_sample_output.cmake.
#   -DBUILD_DIR -DPREFIX -DSAMPLES_DIR -DSAMPLES_BUILD -DSAMPLES=<a,b> -DEXPECTED_<sample>=<v0,v1,...>
file(REMOVE_RECURSE ${PREFIX} ${SAMPLES_BUILD})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} COMMAND_ERROR_IS_FATAL ANY
                OUTPUT_QUIET)
string(REPLACE "," ";" samples "${SAMPLES}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR} -B ${SAMPLES_BUILD}
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release -DSAMPLES_DIR=${SAMPLES_DIR}
                        "-DSAMPLES=${samples}"
                COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${SAMPLES_BUILD} COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
foreach(sample IN LISTS samples)
  execute_process(COMMAND ${CMAKE_COMMAND} -DPROGRAM=${SAMPLES_BUILD}/${sample} -DEXPECTED=${EXPECTED_${sample}}
                          -P ${CMAKE_CURRENT_LIST_DIR}/../check_sample_output.cmake
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
