# Script mode: installs the build tree into a scratch prefix, builds the samples from their
# unchanged sources against it, runs each (installed default config, no environment) and
# checks its printed values with check_sample_output.cmake; then compiles each with a plain
# g++ command line (CANN's samples are built that way too) and checks that program the same way.
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

find_program(GXX g++ REQUIRED)
include(GNUInstallDirs)
foreach(sample IN LISTS samples)
  set(program ${SAMPLES_BUILD}/${sample}_gxx)
  execute_process(COMMAND ${GXX} ${SAMPLES_DIR}/${sample}.cpp -I${PREFIX}/include -L${PREFIX}/${CMAKE_INSTALL_LIBDIR}
                          -Wl,-rpath,${PREFIX}/${CMAKE_INSTALL_LIBDIR} -lnnplug -o ${program}
                  COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${CMAKE_COMMAND} -DPROGRAM=${program} -DEXPECTED=${EXPECTED_${sample}}
                          -P ${CMAKE_CURRENT_LIST_DIR}/../check_sample_output.cmake
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
