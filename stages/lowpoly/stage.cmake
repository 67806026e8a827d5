# lowpoly: CGAL (Debian libcgal-dev, header-only) is an independent oracle for
# the Delaunay test only. Without it (the GPU machine) that test compiles to nothing.
find_package(CGAL QUIET)
if(CGAL_FOUND AND TARGET test_lowpoly)
  target_link_libraries(test_lowpoly PRIVATE CGAL::CGAL)
  target_compile_definitions(test_lowpoly PRIVATE SP_LOWPOLY_HAVE_CGAL=1)
endif()
