# The installed C++ package: `find_package(patchfeed CONFIG REQUIRED)` then
# `target_link_libraries(app PRIVATE patchfeed::loader)` (or patchfeed::codec, patchfeed::augment).
# The libraries are static, so the config finds their dependencies again (TBB, lz4, zstd, zlib,
# libdeflate when built with it, Eigen for the augment headers) the way this build found them.
include(CMakePackageConfigHelpers)

set(PATCHFEED_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/patchfeed)
set(PATCHFEED_WITH_LIBDEFLATE ${DEFLATE_FOUND})

install(EXPORT patchfeedTargets NAMESPACE patchfeed:: DESTINATION ${PATCHFEED_CMAKE_INSTALL_DIR}
        COMPONENT dev)
configure_package_config_file(cmake/patchfeedConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/patchfeedConfig.cmake
                              INSTALL_DESTINATION ${PATCHFEED_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/patchfeedConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/patchfeedConfig.cmake
              ${PROJECT_BINARY_DIR}/patchfeedConfigVersion.cmake
        DESTINATION ${PATCHFEED_CMAKE_INSTALL_DIR} COMPONENT dev)
