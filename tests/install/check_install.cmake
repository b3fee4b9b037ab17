# Installs the build in BUILD_DIR (component dev: headers, static libraries, CMake package) into
# a fresh prefix under WORK_DIR, configures and builds the outside project in SOURCE_DIR against
# that prefix alone, and runs it. Run by CTest (tests/install/CMakeLists.txt).
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER BUILD_TYPE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_install.cmake needs -D${var}=...")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component dev)
# No internal/ folder at any depth (codec/internal, codec/blosc/internal, loader/internal, ...).
file(GLOB_RECURSE installed LIST_DIRECTORIES true RELATIVE ${prefix}/include/patchfeed
     ${prefix}/include/patchfeed/*)
list(FILTER installed INCLUDE REGEX "(^|/)internal(/|$)")
if(installed)
  message(FATAL_ERROR "internal headers were installed under ${prefix}/include/patchfeed: "
                      "${installed}")
endif()
run_step("configure the outside project" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
         -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
         -DCMAKE_PREFIX_PATH=${prefix})
run_step("build the outside project" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("run it" ${WORK_DIR}/build/consumer ${WORK_DIR}/dataset)
