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
# Headers are included by their path from the repository root ("codec/b2nd/nd_reader.h"); installed,
# that root is <prefix>/include/patchfeed.
set(PATCHFEED_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/patchfeed)

# Installs `target` into the export set patchfeedTargets as patchfeed::<name>, with the headers
# of HDRS that are not under an internal/ folder (those stay out of the installed tree: nothing
# public includes them, tests/install checks it by building against the installed tree alone).
function(patchfeed_install_library target name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  install(TARGETS ${target} EXPORT patchfeedTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(header IN LISTS ARGN)
    if(NOT header MATCHES "(^|/)internal/")
      get_filename_component(subfolder "${folder}/${header}" DIRECTORY)
      install(FILES ${header} DESTINATION ${PATCHFEED_INSTALL_INCLUDEDIR}/${subfolder}
              COMPONENT dev)
    endif()
  endforeach()
endfunction()

function(patchfeed_cc_library)
  cmake_parse_arguments(PF "NO_INSTALL" "NAME" "HDRS;SRCS;DEPS;COPTS" ${ARGN})
  set(target patchfeed_${PF_NAME})
  add_library(${target} STATIC ${PF_SRCS} ${PF_HDRS})
  add_library(patchfeed::${PF_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:${PATCHFEED_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC ${PF_DEPS})
  target_compile_options(${target} PRIVATE ${PF_COPTS})
  _patchfeed_common_flags(${target})
  if(NOT PF_NO_INSTALL)
    patchfeed_install_library(${target} ${PF_NAME} ${PF_HDRS})
  endif()
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
