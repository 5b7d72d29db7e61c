# deepum_warnings: the project's warning set, applied to every target we build from our own sources.
add_library(deepum_warnings INTERFACE)
target_compile_options(deepum_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wdouble-promotion
    -Wformat=2 -Wimplicit-fallthrough>)
if(DEEPUM_WARNINGS_AS_ERRORS)
  target_compile_options(deepum_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

add_library(deepum_sanitizers INTERFACE)
if(DEEPUM_FUZZ)
  # Coverage for libFuzzer in every library a fuzz target links; each target adds the fuzzer's main.
  target_compile_options(deepum_sanitizers INTERFACE -fsanitize=fuzzer-no-link,address,undefined
    -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(deepum_sanitizers INTERFACE -fsanitize=address,undefined)
elseif(DEEPUM_SANITIZE)
  target_compile_options(deepum_sanitizers INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
  target_link_options(deepum_sanitizers INTERFACE -fsanitize=address,undefined)
elseif(DEEPUM_TSAN)
  target_compile_options(deepum_sanitizers INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(deepum_sanitizers INTERFACE -fsanitize=thread)
endif()
