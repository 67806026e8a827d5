# Installation and the Debian package:
#   cmake --build BUILD && (cd BUILD && cpack -G DEB)   ->  stylepipe_VERSION_ARCH.deb
# /usr/bin/stylepipe, the ready configs in /usr/share/stylepipe/configs (with
# the schema their yaml-language-server line names), a man
# page made from the CLI's own help (help2man, at build time), the copyright
# file; the Python module and the GStreamer plugin where the build has them
# (cmake/python.cmake, cmake/gstreamer.cmake install them). Dependencies come
# from the binaries (dpkg-shlibdeps), never typed here.
include(GNUInstallDirs)

install(TARGETS stylepipe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/stylepipe/configs
        FILES_MATCHING PATTERN "*.yaml" PATTERN "stylepipe.schema.json")
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stylepipe)

find_program(STYLEPIPE_HELP2MAN help2man)
if(STYLEPIPE_HELP2MAN)
  set(man_page ${CMAKE_BINARY_DIR}/stylepipe.1.gz)
  add_custom_command(OUTPUT ${man_page}
    COMMAND ${PROJECT_SOURCE_DIR}/packaging/make-man-page.sh ${STYLEPIPE_HELP2MAN} $<TARGET_FILE:stylepipe> ${man_page}
    DEPENDS stylepipe ${PROJECT_SOURCE_DIR}/packaging/make-man-page.sh
    COMMENT "Man page from stylepipe --help (help2man)")
  add_custom_target(man_page ALL DEPENDS ${man_page})
  install(FILES ${man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "stylepipe: help2man not found: no man page in the package (apt-get install help2man)")
endif()

set(CPACK_PACKAGE_NAME stylepipe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "video stylization pipeline (pencil, halftone, low-poly, xBR, scale)")
set(CPACK_PACKAGE_DESCRIPTION
    "Decodes a video with FFmpeg, runs a YAML-configured chain of effect stages\n"
    "on the CPU or on CUDA, and encodes it again; audio, subtitles, timestamps\n"
    "and colour tags pass through. Ready configs are in /usr/share/stylepipe/configs.")
set(CPACK_PACKAGE_CONTACT "stylepipe maintainers <stylepipe@invalid>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(STYLEPIPE_HAS_PYTHON_MODULE)
  # The module is built for one Python's ABI (cpython-3XY): that Python, whatever its point release.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "python3 (>= ${STYLEPIPE_PYTHON_VERSION}~), python3 (<< ${STYLEPIPE_PYTHON_NEXT_VERSION}~)")
endif()
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
include(CPack)

# Installs the package with apt, stylizes a generated clip with a shipped
# config, removes it. Skipped (77) when not root, without apt, or in a CUDA
# build (the CUDA libraries are not Debian packages dpkg-shlibdeps can name).
add_test(NAME deb_package
  COMMAND ${PROJECT_SOURCE_DIR}/tests/deb_package_test.sh ${CMAKE_BINARY_DIR} $<BOOL:${STYLEPIPE_HAS_CUDA}>)
set_tests_properties(deb_package PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS package
                     RESOURCE_LOCK system_packages)
set(sp_deb_test_environment "")
if(STYLEPIPE_HAS_PYTHON_MODULE)
  list(APPEND sp_deb_test_environment STYLEPIPE_DEB_PYTHON=1 STYLEPIPE_DEB_PYTHON_PRELOAD=${sp_python_asan_runtime})
endif()
if(STYLEPIPE_HAS_GSTREAMER AND STYLEPIPE_GST_LAUNCH)
  list(APPEND sp_deb_test_environment STYLEPIPE_DEB_GST_PLUGIN=${STYLEPIPE_GST_INSTALL_DIR}/libgststylepipe.so
       STYLEPIPE_DEB_GST_PRELOAD=${sp_gst_asan_runtime})
endif()
if(sp_deb_test_environment)
  set_tests_properties(deb_package PROPERTIES ENVIRONMENT "${sp_deb_test_environment}")
endif()
