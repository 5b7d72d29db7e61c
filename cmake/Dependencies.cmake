# Header-only dependencies: spdlog (with fmt header-only), nlohmann_json, doctest.
# Looked up in DEEPUM_DEPS_DIR (default: .deps/include, filled by scripts/fetch_deps.sh), then in the
# system include paths. Everything is used header-only so the same build works on machines without a
# package manager, and nothing of ours links a shared spdlog/fmt that could clash with the app's.
set(DEEPUM_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps/include" CACHE PATH "Where the header-only deps live")

function(deepum_find_header var header)
  find_path(${var} ${header} HINTS ${DEEPUM_DEPS_DIR} NO_CMAKE_SYSTEM_PATH)
  if(NOT ${var})
    find_path(${var} ${header})
  endif()
  if(NOT ${var})
    message(FATAL_ERROR "deepum: ${header} not found. Run scripts/fetch_deps.sh (Debian) or set "
                        "DEEPUM_DEPS_DIR to a folder holding spdlog, fmt, nlohmann and doctest headers.")
  endif()
endfunction()

deepum_find_header(DEEPUM_JSON_INCLUDE nlohmann/json.hpp)
deepum_find_header(DEEPUM_SPDLOG_INCLUDE spdlog/spdlog.h)
deepum_find_header(DEEPUM_FMT_INCLUDE fmt/format.h)
deepum_find_header(DEEPUM_DOCTEST_INCLUDE doctest/doctest.h)

add_library(deepum_json INTERFACE)
target_include_directories(deepum_json SYSTEM INTERFACE ${DEEPUM_JSON_INCLUDE})

add_library(deepum_spdlog INTERFACE)
target_include_directories(deepum_spdlog SYSTEM INTERFACE ${DEEPUM_SPDLOG_INCLUDE} ${DEEPUM_FMT_INCLUDE})
target_compile_definitions(deepum_spdlog INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY
  SPDLOG_NO_EXCEPTIONS=0)

add_library(deepum_doctest INTERFACE)
target_include_directories(deepum_doctest SYSTEM INTERFACE ${DEEPUM_DOCTEST_INCLUDE})
