# CUDA: the library itself needs only the toolkit's headers (it resolves every CUDA function at run
# time, so it loads on machines without a driver). The test programs need nvcc.
find_path(DEEPUM_CUDA_INCLUDE cuda.h
  HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda
  PATH_SUFFIXES include)
find_path(DEEPUM_CUPTI_INCLUDE cupti.h
  HINTS ${DEEPUM_CUDA_INCLUDE} ${DEEPUM_CUDA_INCLUDE}/../extras/CUPTI/include)
if(DEEPUM_CUDA_INCLUDE)
  set(DEEPUM_CUDA_HEADERS_FOUND ON)
  add_library(deepum_cuda_headers INTERFACE)
  target_include_directories(deepum_cuda_headers SYSTEM INTERFACE ${DEEPUM_CUDA_INCLUDE})
  message(STATUS "deepum: CUDA headers in ${DEEPUM_CUDA_INCLUDE}")
else()
  set(DEEPUM_CUDA_HEADERS_FOUND OFF)
  message(WARNING "deepum: cuda.h not found (set CUDA_HOME); building only the CUDA-free core and its tests")
endif()

# Only the tests' and benchmarks' programs are CUDA sources: a default build needs no nvcc.
if(DEEPUM_BUILD_TESTS OR DEEPUM_BUILD_BENCH)
  include(CheckLanguage)
  check_language(CUDA)
endif()
if(CMAKE_CUDA_COMPILER AND DEEPUM_CUDA_HEADERS_FOUND AND NOT DEEPUM_SANITIZE AND NOT DEEPUM_TSAN)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  set(DEEPUM_HAVE_NVCC ON)
else()
  set(DEEPUM_HAVE_NVCC OFF)
  message(STATUS "deepum: no nvcc (or no tests and benchmarks asked for); no CUDA program is built")
endif()
