# Header-only dependencies: spdlog (with fmt header-only), nlohmann_json, CLI11 (the deepum command)
# and doctest (the tests). Looked up in DEEPUM_DEPS_DIR (default: .deps/include, filled by
# scripts/fetch_deps.sh), then in the system include paths. Everything is used header-only so the
# same build works on machines without a package manager, and nothing of ours links a shared
# spdlog/fmt that could clash with the app's.
set(DEEPUM_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps/include" CACHE PATH "Where the header-only deps live")
option(DEEPUM_FETCH_DEPS "Run scripts/fetch_deps.sh (Debian/Ubuntu) when a header is missing" ON)

function(deepum_find_header var header)
  find_path(${var} ${header} HINTS ${DEEPUM_DEPS_DIR} NO_CMAKE_SYSTEM_PATH)
  if(NOT ${var})
    find_path(${var} ${header})
  endif()
endfunction()

set(deepum_headers nlohmann/json.hpp spdlog/spdlog.h fmt/format.h CLI/CLI.hpp)
set(deepum_header_vars DEEPUM_JSON_INCLUDE DEEPUM_SPDLOG_INCLUDE DEEPUM_FMT_INCLUDE DEEPUM_CLI11_INCLUDE)
if(DEEPUM_BUILD_TESTS)
  list(APPEND deepum_headers doctest/doctest.h)
  list(APPEND deepum_header_vars DEEPUM_DOCTEST_INCLUDE)
endif()

function(deepum_find_headers missing_var)
  set(missing "")
  foreach(var header IN ZIP_LISTS deepum_header_vars deepum_headers)
    deepum_find_header(${var} ${header})
    if(NOT ${var})
      unset(${var} CACHE)  # found later, after fetching, it must not stay NOTFOUND
      list(APPEND missing ${header})
    endif()
  endforeach()
  set(${missing_var} "${missing}" PARENT_SCOPE)
endfunction()

deepum_find_headers(deepum_missing)
# A fresh clone on Debian or Ubuntu (pip's isolated build included) fetches them itself.
if(deepum_missing AND DEEPUM_FETCH_DEPS AND DEEPUM_DEPS_DIR STREQUAL "${PROJECT_SOURCE_DIR}/.deps/include")
  message(STATUS "deepum: ${deepum_missing} not found; running scripts/fetch_deps.sh")
  execute_process(COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/fetch_deps.sh RESULT_VARIABLE fetch_rc)
  if(fetch_rc EQUAL 0)
    deepum_find_headers(deepum_missing)
  endif()
endif()
if(deepum_missing)
  message(FATAL_ERROR "deepum: ${deepum_missing} not found. On Debian or Ubuntu run scripts/fetch_deps.sh; "
    "elsewhere install the spdlog, fmt, nlohmann-json and CLI11 headers (and doctest for the tests) "
    "from your package manager, or set DEEPUM_DEPS_DIR to a folder holding them.")
endif()

add_library(deepum_json INTERFACE)
target_include_directories(deepum_json SYSTEM INTERFACE ${DEEPUM_JSON_INCLUDE})

add_library(deepum_spdlog INTERFACE)
target_include_directories(deepum_spdlog SYSTEM INTERFACE ${DEEPUM_SPDLOG_INCLUDE} ${DEEPUM_FMT_INCLUDE})
target_compile_definitions(deepum_spdlog INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY
  SPDLOG_NO_EXCEPTIONS=0)

add_library(deepum_cli11 INTERFACE)
target_include_directories(deepum_cli11 SYSTEM INTERFACE ${DEEPUM_CLI11_INCLUDE})

if(DEEPUM_BUILD_TESTS)
  add_library(deepum_doctest INTERFACE)
  target_include_directories(deepum_doctest SYSTEM INTERFACE ${DEEPUM_DOCTEST_INCLUDE})
endif()
