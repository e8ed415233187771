# `cmake --install`: the two shared libraries with their C headers, the
# tools, and a CMake package (find_package(m2n) -> m2n::runtime,
# m2n::compiler). test/Install builds a consumer project against it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS m2n_runtime m2n_compiler EXPORT m2nTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES runtime/include/m2n/runtime.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/m2n)
install(FILES include/m2n-c/Compiler.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/m2n-c)
install(TARGETS m2n-opt m2n-sim m2n-run m2n-artifact-dump m2n-refit
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(M2N_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/m2n)
install(EXPORT m2nTargets NAMESPACE m2n::
  DESTINATION ${M2N_CMAKE_PACKAGE_DIR})
configure_package_config_file(cmake/m2nConfig.cmake.in
  ${PROJECT_BINARY_DIR}/m2nConfig.cmake
  INSTALL_DESTINATION ${M2N_CMAKE_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
# Pre-1.0 the minor version is the compatibility boundary (the SONAME's).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/m2nConfigVersion.cmake
  VERSION ${M2N_VERSION}.0 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/m2nConfig.cmake
              ${PROJECT_BINARY_DIR}/m2nConfigVersion.cmake
  DESTINATION ${M2N_CMAKE_PACKAGE_DIR})
