# cmake --install: bin/deepum, bin/deepum-sim, lib/libdeepum.so, and a package config, so that
# find_package(deepum) gives deepum::preload (the library, for LD_PRELOAD: $<TARGET_FILE:deepum::preload>),
# deepum::cli and deepum::sim. A wheel (pip install ., scikit-build-core) puts the two tools in the
# environment's bin/ and the library in its lib/: the same layout, so `deepum` finds
# ../lib/libdeepum.so either way.
if(SKBUILD AND NOT TARGET deepum)
  message(FATAL_ERROR "deepum: the wheel needs libdeepum.so, and that needs the CUDA toolkit's headers "
    "(cuda.h, cupti.h); set CUDA_HOME to the toolkit, e.g. CUDA_HOME=/usr/local/cuda pip install .")
endif()

set(deepum_tools deepum-sim)
if(TARGET deepum_cli)
  list(APPEND deepum_tools deepum_cli)
endif()
# The tools need no libstdc++ of the machine's beyond what they were built with; the library
# already links it statically (preload/CMakeLists.txt).
if(NOT DEEPUM_SANITIZE)
  foreach(tool IN LISTS deepum_tools)
    target_link_options(${tool} PRIVATE -static-libstdc++ -static-libgcc)
  endforeach()
endif()

# The wheel takes this component only (pyproject.toml), so no other install rule adds to it.
if(SKBUILD)
  install(TARGETS ${deepum_tools} RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR} COMPONENT wheel)
  install(TARGETS deepum LIBRARY DESTINATION ${SKBUILD_DATA_DIR}/lib COMPONENT wheel)
  return()
endif()

include(CMakePackageConfigHelpers)
set(deepum_targets ${deepum_tools})
if(TARGET deepum)
  list(APPEND deepum_targets deepum)
  set_target_properties(deepum PROPERTIES EXPORT_NAME preload)
endif()
install(TARGETS ${deepum_targets} EXPORT deepumTargets RUNTIME DESTINATION bin LIBRARY DESTINATION lib)
set(deepum_cmake_dir lib/cmake/deepum)
install(EXPORT deepumTargets NAMESPACE deepum:: DESTINATION ${deepum_cmake_dir})
file(WRITE ${PROJECT_BINARY_DIR}/deepumConfig.cmake
  "include(\"\${CMAKE_CURRENT_LIST_DIR}/deepumTargets.cmake\")\n")
write_basic_package_version_file(${PROJECT_BINARY_DIR}/deepumConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/deepumConfig.cmake ${PROJECT_BINARY_DIR}/deepumConfigVersion.cmake
  DESTINATION ${deepum_cmake_dir})
