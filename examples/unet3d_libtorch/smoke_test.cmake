# The example as an outside user builds and runs it: install patchfeed into a fresh prefix,
# build this folder against it and libtorch, then
#   1. train 20 steps on a generated dataset: every step's tensors are the ring slot's memory
#      and the loss falls (the last quarter's mean below the first's);
#   2. train 10 steps, checkpoint, and resume for 10 more: steps 10-19 must see the same
#      batches (index and voxel checksum) as steps 10-19 of run 1.
# Run by CTest (examples/CMakeLists.txt).
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER TORCH_PREFIX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "smoke_test.cmake needs -D${var}=...")
  endif()
endforeach()

function(run_step what out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("install patchfeed" ignored ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
         --component dev)
run_step("configure the example" ignored ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
         -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
         "-DCMAKE_PREFIX_PATH=${prefix};${TORCH_PREFIX}")
run_step("build the example" ignored ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

set(exe ${WORK_DIR}/build/unet3d_libtorch)
set(common --dir ${WORK_DIR}/data --patch 32,32,32 --batch 2 --threads 2 --print-batches)
run_step("train 20 steps" whole ${exe} ${common} --generate 4 --steps 20)
run_step("train 10 steps and checkpoint" first ${exe} ${common} --steps 10
         --checkpoint ${WORK_DIR}/ckpt)
run_step("resume for 10 more" resumed ${exe} ${common} --steps 20 --checkpoint ${WORK_DIR}/ckpt
         --resume)

# 0. Every step's tensors were the slot's memory (the program checks, and says so at the end).
if(NOT whole MATCHES "zero-copy: every step's tensors were the ring slot's memory")
  message(FATAL_ERROR "no zero-copy confirmation in:\n${whole}")
endif()

# 1. The loss falls.
string(REGEX MATCH "first [0-9]+ steps ([-0-9.]+), last [0-9]+ steps ([-0-9.]+)" _ "${whole}")
if(NOT CMAKE_MATCH_2)
  message(FATAL_ERROR "no mean-loss line in:\n${whole}")
endif()
set(first_loss ${CMAKE_MATCH_1})
set(last_loss ${CMAKE_MATCH_2})
if(NOT last_loss LESS first_loss)
  message(FATAL_ERROR "the loss did not fall: first steps ${first_loss}, last ${last_loss}")
endif()

# 2. The resumed run saw exactly the batches of steps 10-19 of the uninterrupted run.
string(REGEX MATCHALL "batch step 1[0-9] [^\n]*" expected "${whole}")
string(REGEX MATCHALL "batch step 1[0-9] [^\n]*" got "${resumed}")
list(LENGTH expected n_expected)
if(NOT n_expected EQUAL 10 OR NOT "${expected}" STREQUAL "${got}")
  message(FATAL_ERROR "the resumed run saw other batches:\nexpected ${expected}\ngot ${got}")
endif()
string(REGEX MATCHALL "batch step 0[0-9]|batch step [0-9] " early "${resumed}")
if(early)
  message(FATAL_ERROR "the resumed run started over instead of at step 10")
endif()
message(STATUS "loss ${first_loss} -> ${last_loss}; resumed run matched steps 10-19")
