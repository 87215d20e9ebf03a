# Script mode: copies the golden case files of DATA into a scratch folder, plants a FIFO
# named FIFO_NAME beside them, and runs expect_kit_failure.cmake with --data naming the
# folder (the other variables as there). Nothing ever writes to the FIFO: a kit that opened
# it for reading would wait forever.
set(folder ${SCRATCH})
file(REMOVE_RECURSE ${folder})
file(MAKE_DIRECTORY ${folder})
file(GLOB cases ${DATA}/*_golden.txt ${DATA}/*_golden.cases)
file(COPY ${cases} DESTINATION ${folder})
execute_process(COMMAND mkfifo ${folder}/${FIFO_NAME} RESULT_VARIABLE made)
if(NOT made EQUAL 0)
  message(FATAL_ERROR "cannot make a FIFO in ${folder}")
endif()
set(EXTRA "--data=${folder}|${EXTRA}")
include(${CMAKE_CURRENT_LIST_DIR}/expect_kit_failure.cmake)
file(REMOVE_RECURSE ${folder})
