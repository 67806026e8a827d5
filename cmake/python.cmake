# The Python module (python/): built where an interpreter with its headers,
# pybind11 (2.10 from Debian, or 3.x) and NumPy is found; skipped with a
# message otherwise. STYLEPIPE_PYTHON picks the interpreter; by default the
# first of python3 on PATH and /usr/bin/python3 that has all three (a pyenv
# python3 first on PATH often has none of them).
set(STYLEPIPE_PYTHON "" CACHE FILEPATH "The Python interpreter the module is built for (default: found)")
set(STYLEPIPE_PYTHON_MODULE AUTO CACHE STRING "Build the Python module: AUTO, ON or OFF")

function(sp_python_probe interpreter out_var)
  execute_process(COMMAND ${interpreter} -c
    "import sysconfig, os, numpy, pybind11; h = sysconfig.get_paths()['include']; assert os.path.exists(os.path.join(h, 'Python.h')), 'no Python.h in ' + h; print(pybind11.get_cmake_dir(), end='')"
    RESULT_VARIABLE status OUTPUT_VARIABLE cmake_dir ERROR_VARIABLE why OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(status EQUAL 0)
    set(${out_var} ${cmake_dir} PARENT_SCOPE)
  else()
    string(REGEX REPLACE ".*\n([^\n]+)\n?$" "\\1" why "${why}")
    set(sp_python_why "${interpreter}: ${why}" PARENT_SCOPE)
    set(${out_var} "" PARENT_SCOPE)
  endif()
endfunction()

set(STYLEPIPE_HAS_PYTHON_MODULE OFF)
# An uninstrumented interpreter loads the module: in clang ASan builds ASan's shared
# runtime is preloaded into it (cmake/checks.cmake decides where the module can be).
set(sp_python_asan_runtime "${STYLEPIPE_ASAN_SHARED_RUNTIME}")  # cmake/checks.cmake
if(NOT STYLEPIPE_LOADED_MODULES)
  message(STATUS "stylepipe: the Python module is left out of this sanitizer build (${STYLEPIPE_SANITIZE})")
  set(STYLEPIPE_PYTHON_MODULE OFF)
endif()
if(NOT STYLEPIPE_PYTHON_MODULE STREQUAL "OFF")
  set(candidates ${STYLEPIPE_PYTHON})
  if(NOT candidates)
    find_program(sp_path_python3 python3 NO_CACHE)
    set(candidates ${sp_path_python3} /usr/bin/python3)
  endif()
  set(why_not "")
  foreach(candidate ${candidates})
    if(NOT EXISTS ${candidate})
      continue()
    endif()
    sp_python_probe(${candidate} pybind11_cmake_dir)
    if(pybind11_cmake_dir)
      set(sp_python ${candidate})
      break()
    endif()
    list(APPEND why_not "${sp_python_why}")
  endforeach()
  if(sp_python)
    set(PYTHON_EXECUTABLE ${sp_python})  # pybind11 2.10 (FindPythonInterp)
    set(Python_EXECUTABLE ${sp_python})  # pybind11 3 (FindPython)
    find_package(pybind11 CONFIG REQUIRED HINTS ${pybind11_cmake_dir})
    set(STYLEPIPE_HAS_PYTHON_MODULE ON)
    execute_process(COMMAND ${sp_python} -c "import sys; print('%d.%d;%d.%d' % (sys.version_info[:2] + (sys.version_info[0], sys.version_info[1] + 1)), end='')"
                    OUTPUT_VARIABLE sp_python_versions)
    list(GET sp_python_versions 0 STYLEPIPE_PYTHON_VERSION)
    list(GET sp_python_versions 1 STYLEPIPE_PYTHON_NEXT_VERSION)
    message(STATUS "stylepipe: the Python module is built for ${sp_python} (pybind11 ${pybind11_VERSION})")
  elseif(STYLEPIPE_PYTHON_MODULE STREQUAL "ON")
    message(FATAL_ERROR "stylepipe: no Python with its headers, pybind11 and NumPy: ${why_not}")
  else()
    message(STATUS "stylepipe: the Python module is skipped: no Python with its headers, pybind11 and NumPy "
                   "(apt-get install python3-dev python3-pybind11 python3-numpy): ${why_not}")
  endif()
endif()

if(STYLEPIPE_HAS_PYTHON_MODULE)
  set(STYLEPIPE_PYTHON_DIR ${CMAKE_BINARY_DIR}/python)
  file(GLOB PYTHON_MODULE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/*.cpp)
  # No LTO in sanitizer builds: clang 19 drops ASan's module constructors from LTO objects.
  if(STYLEPIPE_SANITIZE)
    pybind11_add_module(_stylepipe MODULE NO_EXTRAS ${PYTHON_MODULE_SOURCES})
  else()
    pybind11_add_module(_stylepipe MODULE ${PYTHON_MODULE_SOURCES})
  endif()
  target_link_libraries(_stylepipe PRIVATE stylepipe_api ${STAGE_OBJECTS})
  # The static libraries' symbols (FFmpeg, fmt, FFTW, ...) stay inside the module:
  # no clash with the copies PyTorch or others load, and objects built as
  # position-independent executables (the GPU kit's FFTW) link as local code.
  target_link_options(_stylepipe PRIVATE -Wl,--exclude-libs,ALL)
  set(sp_python_test_environment "PYTHONPATH=${STYLEPIPE_PYTHON_DIR}" "STYLEPIPE_BINARY=$<TARGET_FILE:stylepipe>")
  if(sp_python_asan_runtime)
    target_link_options(_stylepipe PRIVATE -shared-libasan)
    # The interpreter's own allocations at exit are not the module's leaks.
    list(APPEND sp_python_test_environment "LD_PRELOAD=${sp_python_asan_runtime}")
  endif()
  set_target_properties(_stylepipe PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${STYLEPIPE_PYTHON_DIR}/stylepipe)
  # The package's Python files beside the extension, so that PYTHONPATH=build/python imports it.
  file(GLOB PYTHON_PACKAGE_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/stylepipe/*.py
       ${PROJECT_SOURCE_DIR}/python/stylepipe/*.pyi ${PROJECT_SOURCE_DIR}/python/stylepipe/py.typed)
  set(copied)
  foreach(file ${PYTHON_PACKAGE_FILES})
    get_filename_component(name ${file} NAME)
    add_custom_command(OUTPUT ${STYLEPIPE_PYTHON_DIR}/stylepipe/${name}
      COMMAND ${CMAKE_COMMAND} -E copy ${file} ${STYLEPIPE_PYTHON_DIR}/stylepipe/${name} DEPENDS ${file})
    list(APPEND copied ${STYLEPIPE_PYTHON_DIR}/stylepipe/${name})
  endforeach()
  add_custom_target(stylepipe_python_files ALL DEPENDS ${copied})
  add_dependencies(_stylepipe stylepipe_python_files)
  # Installed (and so in the .deb) where Debian's python3 looks: /usr/lib/python3/dist-packages.
  install(TARGETS _stylepipe LIBRARY DESTINATION lib/python3/dist-packages/stylepipe)
  install(FILES ${PYTHON_PACKAGE_FILES} DESTINATION lib/python3/dist-packages/stylepipe)
  # Under the preloaded ASan runtime the interpreter's (and bash's, pip's) own
  # allocations at exit are not the module's leaks. (string_append adds no
  # separator: hence the leading ':'.)
  function(sp_python_asan_test_options test)
    if(sp_python_asan_runtime)
      set_tests_properties(${test} PROPERTIES ENVIRONMENT_MODIFICATION
        "ASAN_OPTIONS=string_append:::detect_leaks=0")
    endif()
  endfunction()
  file(GLOB PYTHON_TESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/tests/test_*.py)
  foreach(test_file ${PYTHON_TESTS})
    get_filename_component(test_name ${test_file} NAME_WE)
    add_test(NAME python_${test_name} COMMAND ${sp_python} -m unittest -v ${test_name}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/python/tests)
    set_tests_properties(python_${test_name} PROPERTIES ENVIRONMENT "${sp_python_test_environment}"
      SKIP_RETURN_CODE 77 LABELS python TIMEOUT 600)
    sp_python_asan_test_options(python_${test_name})
  endforeach()
  add_test(NAME python_readme_recipes
           COMMAND ${sp_python} ${PROJECT_SOURCE_DIR}/tests/check_readme_python.py ${PROJECT_SOURCE_DIR}/README.md
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(python_readme_recipes PROPERTIES ENVIRONMENT "${sp_python_test_environment}" LABELS python
                       TIMEOUT 600)
  sp_python_asan_test_options(python_readme_recipes)
  add_test(NAME python_pip_install
           COMMAND ${PROJECT_SOURCE_DIR}/python/tests/pip_install_test.sh ${sp_python} ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(python_pip_install PROPERTIES
    ENVIRONMENT "${sp_python_test_environment};SOURCE_DIR=${PROJECT_SOURCE_DIR}" SKIP_RETURN_CODE 77 LABELS python
    TIMEOUT 600 RESOURCE_LOCK python_module_build)
  sp_python_asan_test_options(python_pip_install)
endif()
