# Sanitizer and fuzzing builds, each in its own build folder (README "Checks",
# scripts/sanitize-and-fuzz.sh).
#
# STYLEPIPE_SANITIZE (address,undefined or thread) instruments the host C++
# code. The .cu files stay as nvcc builds them, device code and host side
# alike: their host side only launches kernels, which need a GPU, and the GPU
# tests have compute-sanitizer (scripts/gpu-check.sh).
#
# STYLEPIPE_FUZZ (with CMAKE_CXX_COMPILER=clang++) adds libFuzzer's coverage
# instrumentation and builds the harnesses of tests/fuzz as fuzzers. Without
# it they are replay programs that CTest runs over the seed corpus and the
# regression inputs.
set(STYLEPIPE_SANITIZE "" CACHE STRING "Sanitizers for the host C++ code: address,undefined or thread")
option(STYLEPIPE_FUZZ "Build the tests/fuzz harnesses as libFuzzer fuzzers (clang++ only)" OFF)

if(STYLEPIPE_SANITIZE)
  # -fno-sanitize-recover: a finding aborts the test that makes it, so it fails.
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${STYLEPIPE_SANITIZE};-fno-sanitize-recover=all;-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=${STYLEPIPE_SANITIZE})
endif()

# Shared objects that an uninstrumented program loads (the Python module, the
# GStreamer plugin) need ASan's shared runtime preloaded into that program:
# clang's, in clang ASan builds. TSan, libFuzzer and gcc ASan builds leave them out.
set(STYLEPIPE_LOADED_MODULES ON)
set(STYLEPIPE_ASAN_SHARED_RUNTIME "")
if(STYLEPIPE_SANITIZE MATCHES "thread" OR STYLEPIPE_FUZZ OR
   (STYLEPIPE_SANITIZE MATCHES "address" AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
  set(STYLEPIPE_LOADED_MODULES OFF)
elseif(STYLEPIPE_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                  OUTPUT_VARIABLE STYLEPIPE_ASAN_SHARED_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

if(STYLEPIPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "STYLEPIPE_FUZZ needs libFuzzer: configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
endif()
