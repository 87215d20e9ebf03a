# nnplug_add_plugin(<name> SOURCES <files...> [DESTINATION <folder>] [NO_INSTALL])
#
# Builds the backend plugin <name>: a MODULE library named libnnplug_<name>.so, the file
# the runtime looks for when a config says `backend: <name>`. It links the plugin SDK
# (nnplug::plugin_sdk, headers only), compiles C and C++ with hidden symbols, so that only
# the entry point nnplug_plugin_entry (NNPLUG_PLUGIN_EXPORT) is exported, and without FMA
# contraction (-ffp-contract=off), so that the canonical float32 expressions of
# nnplug/ops/*_math.h give the bits every backend gives.
#
# `cmake --install` puts the plugin into DESTINATION, by default the plugin folder of the
# nnplug it was built against (NNPLUG_PLUGIN_DIR), where `backend: <name>` finds it with
# no environment variable or plugin_paths. NO_INSTALL leaves it out of the install (so
# does the variable NNPLUG_PLUGIN_NO_INSTALL).
#
# The target is nnplug_<name>; add sources, definitions and libraries to it as usual.
function(nnplug_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "DESTINATION" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "nnplug_add_plugin(${name}): SOURCES is required")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_][A-Za-z0-9_.-]*$" OR name MATCHES "\\.\\.")
    message(FATAL_ERROR "nnplug_add_plugin(${name}): a plugin name holds letters, digits, '_', '-' and '.' only")
  endif()
  set(target nnplug_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE nnplug::plugin_sdk)
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>:-ffp-contract=off>
                                           $<$<COMPILE_LANG_AND_ID:C,GNU,Clang,AppleClang>:-ffp-contract=off>)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib" OUTPUT_NAME "nnplug_${name}" SUFFIX ".so"
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED NNPLUG_PLUGIN_OUTPUT_DIR)  # inside nnplug's own build: beside the shipped backends
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${NNPLUG_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT ARG_NO_INSTALL AND NOT NNPLUG_PLUGIN_NO_INSTALL)
    if(NOT ARG_DESTINATION AND DEFINED NNPLUG_PLUGIN_DIR)  # an installed package's folder
      set(ARG_DESTINATION ${NNPLUG_PLUGIN_DIR})
    elseif(NOT ARG_DESTINATION)  # inside nnplug's own build: where the shipped backends install
      set(ARG_DESTINATION ${NNPLUG_PLUGIN_INSTALL_DIR})
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_DESTINATION})
  endif()
endfunction()
