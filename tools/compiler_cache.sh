# Sourced by tools/dev.sh and tools/fuzz.sh after tools/debian_packages.sh.
# use_compiler_cache sets COMPILER_CACHE_ARGS, the CMake arguments that make every build
# compile through ccache: a fresh clone (CI's) or a rebuild after switching branches then
# recompiles only what changed since any earlier build on the machine. CCACHE_BASEDIR makes
# the paths in a compile command relative to the clone, so two clones share entries;
# CCACHE_NOHASHDIR lets the Debug builds (-g) share them too. NNPLUG_CCACHE=0 builds
# without it.
use_compiler_cache() {
  if [ "${NNPLUG_CCACHE:-1}" = 0 ]; then
    COMPILER_CACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=)
    return
  fi
  install_missing_packages ccache
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
  COMPILER_CACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}
