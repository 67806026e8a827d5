# The optional CUDA backend. Sets STYLEPIPE_HAS_CUDA, the CUDA language for
# the compiler launcher, the CUDA libraries to link, and the filters that keep
# each build to its own sources:
#   *.cu, *_cuda.cpp            built only with CUDA;
#   *_nocuda.cpp                built only without it (what a CPU-only build
#                               answers where CUDA is asked for);
#   *_gpu_*test.cpp, *_cuda_*test.cpp  GPU tests, built only with CUDA.
set(STYLEPIPE_HAS_CUDA OFF)
set(STYLEPIPE_CUDA_LANGUAGE)
set(STYLEPIPE_CUDA_LIBRARIES)
set(STYLEPIPE_FFNVCODEC)
if(STYLEPIPE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(STYLEPIPE_HAS_CUDA ON)
    set(STYLEPIPE_CUDA_LANGUAGE CUDA)
    set(STYLEPIPE_CUDA_LIBRARIES CUDA::cudart_static CUDA::cufft CUDA::curand)
    set(STYLEPIPE_FFNVCODEC ffnvcodec)
  elseif(STYLEPIPE_CUDA STREQUAL "AUTO")
    message(STATUS "stylepipe: no CUDA compiler found: building the CPU backend only")
  else()
    message(FATAL_ERROR "stylepipe: STYLEPIPE_CUDA=${STYLEPIPE_CUDA} but no CUDA compiler was found "
                        "(set CMAKE_CUDA_COMPILER, or -DSTYLEPIPE_CUDA=OFF for a CPU-only build)")
  endif()
endif()
message(STATUS "stylepipe: CUDA backend ${STYLEPIPE_HAS_CUDA}")

function(sp_filter_backend_sources list_var)
  set(files ${${list_var}})
  if(STYLEPIPE_HAS_CUDA)
    list(FILTER files EXCLUDE REGEX "_nocuda\\.cpp$")
  else()
    list(FILTER files EXCLUDE REGEX "(\\.cu|_cuda\\.cpp)$")
  endif()
  set(${list_var} ${files} PARENT_SCOPE)
endfunction()

function(sp_filter_backend_tests list_var)
  set(files ${${list_var}})
  if(NOT STYLEPIPE_HAS_CUDA)
    list(FILTER files EXCLUDE REGEX "_(gpu|cuda)_[^/]*$")
    list(FILTER files EXCLUDE REGEX "\\.cu$")
  endif()
  set(${list_var} ${files} PARENT_SCOPE)
endfunction()
