# The GStreamer plugin (gstreamer/): libgststylepipe.so with the `stylepipe`
# element, a client of the public API only (scripts/check-layers.sh). Built
# where pkg-config finds GStreamer >= 1.22 (Debian 12) with its base and video
# libraries; skipped with a message otherwise. Its tests need gstreamer-check
# and the tools (gst-launch-1.0) with videotestsrc (gstreamer1.0-plugins-base).
set(STYLEPIPE_GSTREAMER AUTO CACHE STRING "Build the GStreamer plugin: AUTO, ON or OFF")

set(STYLEPIPE_HAS_GSTREAMER OFF)
# GStreamer's tools (gst-launch-1.0, the plugin scanner) are not instrumented:
# as with the Python module, a clang ASan build preloads ASan's shared runtime
# for them; TSan, libFuzzer and gcc ASan builds leave the plugin out.
set(sp_gst_asan_runtime "${STYLEPIPE_ASAN_SHARED_RUNTIME}")  # cmake/checks.cmake
if(NOT STYLEPIPE_LOADED_MODULES)
  message(STATUS "stylepipe: the GStreamer plugin is left out of this sanitizer build (${STYLEPIPE_SANITIZE})")
  set(STYLEPIPE_GSTREAMER OFF)
elseif(sp_gst_asan_runtime)
  get_filename_component(sp_gst_asan_runtime_dir ${sp_gst_asan_runtime} DIRECTORY)
endif()
if(NOT STYLEPIPE_GSTREAMER STREQUAL "OFF")
  pkg_check_modules(GST IMPORTED_TARGET
    gstreamer-1.0>=1.22 gstreamer-base-1.0>=1.22 gstreamer-video-1.0>=1.22)
  if(GST_FOUND)
    set(STYLEPIPE_HAS_GSTREAMER ON)
    message(STATUS "stylepipe: the GStreamer plugin is built (GStreamer ${GST_gstreamer-1.0_VERSION})")
  elseif(STYLEPIPE_GSTREAMER STREQUAL "ON")
    message(FATAL_ERROR "stylepipe: no GStreamer >= 1.22 development files (gstreamer-1.0, -base, -video)")
  else()
    message(STATUS "stylepipe: the GStreamer plugin is skipped: no GStreamer >= 1.22 development files "
                   "(apt-get install libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev)")
  endif()
endif()

if(STYLEPIPE_HAS_GSTREAMER)
  # Where the plugin is built: GST_PLUGIN_PATH=<build>/gstreamer finds it.
  set(STYLEPIPE_GST_PLUGIN_DIR ${CMAKE_BINARY_DIR}/gstreamer)
  # CUDA memory (video/x-raw(memory:CUDAMemory)) where the build has CUDA and
  # GStreamer's CUDA library (libgstcuda-1.0, 1.22's plugins-bad) is found.
  set(STYLEPIPE_GST_CUDA_MEMORY OFF)
  if(STYLEPIPE_HAS_CUDA)
    pkg_check_modules(GST_CUDA IMPORTED_TARGET gstreamer-cuda-1.0>=1.22)
    if(GST_CUDA_FOUND)
      set(STYLEPIPE_GST_CUDA_MEMORY ON)
    else()
      message(STATUS "stylepipe: the GStreamer plugin takes system memory only: no gstreamer-cuda-1.0 "
                     "(apt-get install libgstreamer-plugins-bad1.0-dev)")
    endif()
  endif()
  message(STATUS "stylepipe: the GStreamer plugin's CUDA memory path ${STYLEPIPE_GST_CUDA_MEMORY}")

  file(GLOB GST_PLUGIN_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/gstreamer/*.cpp)
  list(FILTER GST_PLUGIN_SOURCES EXCLUDE REGEX "_test\\.cpp$")
  sp_filter_backend_sources(GST_PLUGIN_SOURCES)
  if(STYLEPIPE_GST_CUDA_MEMORY)
    list(FILTER GST_PLUGIN_SOURCES EXCLUDE REGEX "/cuda_memory_none\\.cpp$")
  else()
    list(FILTER GST_PLUGIN_SOURCES EXCLUDE REGEX "/cuda_memory_gstcuda\\.cpp$")
  endif()
  add_library(gststylepipe MODULE ${GST_PLUGIN_SOURCES})
  target_link_libraries(gststylepipe PRIVATE stylepipe_api ${STAGE_OBJECTS} PkgConfig::GST)
  if(STYLEPIPE_GST_CUDA_MEMORY)
    target_link_libraries(gststylepipe PRIVATE PkgConfig::GST_CUDA)
    target_compile_definitions(gststylepipe PRIVATE GST_USE_UNSTABLE_API)
    # libgstcuda's loader header includes cudaGL.h, which includes <GL/gl.h>
    # for two types. Machines without OpenGL's headers (the GPU machines) get
    # a stand-in with those types; the plugin uses no OpenGL.
    include(CheckIncludeFileCXX)
    check_include_file_cxx(GL/gl.h STYLEPIPE_HAVE_GL_H)
    if(NOT STYLEPIPE_HAVE_GL_H)
      set(gl_stand_in ${CMAKE_BINARY_DIR}/gstreamer/gl-stand-in)
      file(WRITE ${gl_stand_in}/GL/gl.h
        "/* A stand-in for OpenGL's header (cmake/gstreamer.cmake): the types cudaGL.h names. */\n"
        "#pragma once\ntypedef unsigned int GLenum;\ntypedef unsigned int GLuint;\n")
      target_include_directories(gststylepipe SYSTEM PRIVATE ${gl_stand_in})
    endif()
  endif()
  # Installed (and packaged) where this GStreamer looks for its plugins: the
  # pkg-config pluginsdir, relative to the install prefix where it is under it.
  pkg_get_variable(sp_gst_pluginsdir gstreamer-1.0 pluginsdir)
  pkg_get_variable(sp_gst_prefix gstreamer-1.0 prefix)
  set(STYLEPIPE_GST_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/gstreamer-1.0)
  if(sp_gst_pluginsdir AND sp_gst_prefix AND sp_gst_pluginsdir MATCHES "^${sp_gst_prefix}/(.+)$")
    set(STYLEPIPE_GST_INSTALL_DIR ${CMAKE_MATCH_1})
  endif()
  install(TARGETS gststylepipe LIBRARY DESTINATION ${STYLEPIPE_GST_INSTALL_DIR})
  # As the Python module, the static libraries' symbols stay inside the plugin;
  # the version script keeps the stages' objects local too: it exports its descriptor only.
  target_link_options(gststylepipe PRIVATE -Wl,--exclude-libs,ALL
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/gstreamer/plugin.map)
  set_property(TARGET gststylepipe APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/gstreamer/plugin.map)
  target_link_options(gststylepipe PRIVATE -Wl,--no-undefined)
  if(sp_gst_asan_runtime)
    target_link_options(gststylepipe PRIVATE -shared-libasan)
  endif()
  set_target_properties(gststylepipe PROPERTIES
    PREFIX "lib" OUTPUT_NAME gststylepipe LIBRARY_OUTPUT_DIRECTORY ${STYLEPIPE_GST_PLUGIN_DIR})
endif()

# The plugin's tests (CPU): GstHarness and pipelines in a gtest binary, and
# gst-launch-1.0 runs against the CLI. Both find the plugin through
# GST_PLUGIN_PATH and keep their registry in the build folder.
if(STYLEPIPE_HAS_GSTREAMER)
  pkg_check_modules(GST_CHECK IMPORTED_TARGET gstreamer-check-1.0>=1.22)
  find_program(STYLEPIPE_GST_LAUNCH gst-launch-1.0)
  set(gst_test_environment
    "GST_PLUGIN_PATH=${STYLEPIPE_GST_PLUGIN_DIR}"
    "GST_REGISTRY_1_0=${STYLEPIPE_GST_PLUGIN_DIR}/launch-registry.bin")
  if(sp_gst_asan_runtime)
    list(APPEND gst_test_environment "LD_PRELOAD=${sp_gst_asan_runtime}")
  endif()
  if(GST_CHECK_FOUND)
    add_executable(test_gstreamer ${PROJECT_SOURCE_DIR}/gstreamer/tests/element_test.cpp)
    target_link_libraries(test_gstreamer PRIVATE PkgConfig::GST_CHECK PkgConfig::GST GTest::gtest)
    # The binary sets the environment above itself (unless it is set): a
    # discovered test's ENVIRONMENT takes one variable only.
    target_compile_definitions(test_gstreamer PRIVATE STYLEPIPE_GST_PLUGIN_DIR="${STYLEPIPE_GST_PLUGIN_DIR}"
      STYLEPIPE_BINARY="$<TARGET_FILE:stylepipe>")
    add_dependencies(test_gstreamer gststylepipe stylepipe)
    if(sp_gst_asan_runtime)
      # One ASan runtime, the shared one, for the test and the plugin it loads.
      target_link_options(test_gstreamer PRIVATE -shared-libasan)
      set_target_properties(test_gstreamer PROPERTIES BUILD_RPATH ${sp_gst_asan_runtime_dir})
    endif()
    gtest_discover_tests(test_gstreamer DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS gstreamer TIMEOUT 300)
  else()
    message(STATUS "stylepipe: the GStreamer plugin's GstHarness tests are skipped: no gstreamer-check-1.0")
  endif()
  if(STYLEPIPE_GST_LAUNCH)
    add_test(NAME gstreamer_launch
      COMMAND ${PROJECT_SOURCE_DIR}/gstreamer/tests/launch_test.sh $<TARGET_FILE:stylepipe>)
    set_tests_properties(gstreamer_launch PROPERTIES
      ENVIRONMENT "${gst_test_environment}" LABELS gstreamer TIMEOUT 300 SKIP_RETURN_CODE 77)
    # The README's file and live recipes as written (tests/check_readme_gstreamer.py).
    add_test(NAME gstreamer_readme_recipes
      COMMAND ${PROJECT_SOURCE_DIR}/tests/check_readme_gstreamer.py ${PROJECT_SOURCE_DIR}/README.md
              $<TARGET_FILE:stylepipe> ${STYLEPIPE_GST_PLUGIN_DIR})
    set_tests_properties(gstreamer_readme_recipes PROPERTIES
      ENVIRONMENT "${gst_test_environment}" LABELS gstreamer TIMEOUT 300 SKIP_RETURN_CODE 77)
    if(sp_gst_asan_runtime)
      # gst-launch-1.0's own allocations at exit are not the plugin's leaks.
      set_tests_properties(gstreamer_launch gstreamer_readme_recipes PROPERTIES
                           ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append:::detect_leaks=0")
    endif()
  else()
    message(STATUS "stylepipe: the GStreamer plugin's gst-launch tests are skipped: no gst-launch-1.0 "
                   "(apt-get install gstreamer1.0-tools)")
  endif()
endif()
