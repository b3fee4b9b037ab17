# patchfeed_cc_library / patchfeed_cc_test / patchfeed_cc_binary, after abseil's absl_cc_library:
# one place sets warnings, sanitizers and include roots, so no flag leaks into CMAKE_CXX_FLAGS.

set(PATCHFEED_WARNINGS -Wall -Wextra -Wpedantic -Wshadow)
# GCC 12 at -O3 reports vector growth through resize/insert as out-of-bounds memcpy
# (known false positives of GCC 12). ASan and UBSan builds check those accesses for real.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
  list(APPEND PATCHFEED_WARNINGS -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread)
endif()
if(PATCHFEED_WERROR)
  list(APPEND PATCHFEED_WARNINGS -Werror)
endif()

set(PATCHFEED_SANITIZE_FLAGS "")
if(PATCHFEED_SANITIZE)
  string(REPLACE ";" "," _pf_san "${PATCHFEED_SANITIZE}")
  set(PATCHFEED_SANITIZE_FLAGS -fsanitize=${_pf_san} -fno-omit-frame-pointer
                               -fno-sanitize-recover=all)
endif()

# Fuzzer builds instrument every library for coverage; only the fuzzer binary links libFuzzer.
if(PATCHFEED_BUILD_FUZZERS)
  list(APPEND PATCHFEED_SANITIZE_FLAGS -fsanitize=fuzzer-no-link)
endif()

function(_patchfeed_common_flags target)
  target_compile_options(${target} PRIVATE ${PATCHFEED_WARNINGS} ${PATCHFEED_SANITIZE_FLAGS})
  if(PATCHFEED_SANITIZE_FLAGS)
    target_link_options(${target} PUBLIC ${PATCHFEED_SANITIZE_FLAGS})
  endif()
endfunction()

# patchfeed_cc_library(NAME codec HDRS ... SRCS ... DEPS ... [COPTS ...])
# makes patchfeed_<NAME> with alias patchfeed::<NAME>; includes are rooted at the repository.
function(patchfeed_cc_library)
  cmake_parse_arguments(PF "" "NAME" "HDRS;SRCS;DEPS;COPTS" ${ARGN})
  set(target patchfeed_${PF_NAME})
  add_library(${target} STATIC ${PF_SRCS} ${PF_HDRS})
  add_library(patchfeed::${PF_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${PF_DEPS})
  target_compile_options(${target} PRIVATE ${PF_COPTS})
  _patchfeed_common_flags(${target})
endfunction()

# patchfeed_cc_test(NAME codec_test SRCS ... DEPS ...): a GoogleTest binary registered with ctest.
function(patchfeed_cc_test)
  cmake_parse_arguments(PF "" "NAME" "SRCS;DEPS" ${ARGN})
  set(target patchfeed_${PF_NAME})
  add_executable(${target} ${PF_SRCS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${PF_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  _patchfeed_common_flags(${target})
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "PATCHFEED_TESTDATA=${PROJECT_SOURCE_DIR}/tests")
endfunction()

# patchfeed_cc_binary(NAME x SRCS ... DEPS ...)
function(patchfeed_cc_binary)
  cmake_parse_arguments(PF "" "NAME;OUTPUT_NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${PF_NAME} ${PF_SRCS})
  target_include_directories(${PF_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${PF_NAME} PRIVATE ${PF_DEPS})
  if(PF_OUTPUT_NAME)
    set_target_properties(${PF_NAME} PROPERTIES OUTPUT_NAME ${PF_OUTPUT_NAME})
  endif()
  _patchfeed_common_flags(${PF_NAME})
endfunction()
