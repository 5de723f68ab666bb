# Links every entry of the source package into the build-tree package (see CMakeLists.txt).
file(MAKE_DIRECTORY ${DST})
file(GLOB entries RELATIVE ${SRC} ${SRC}/*)
foreach(entry ${entries})
  if(NOT entry MATCHES "\\.so$" AND NOT entry STREQUAL "__pycache__")
    file(CREATE_LINK ${SRC}/${entry} ${DST}/${entry} SYMBOLIC)
  endif()
endforeach()
