# SPDX-License-Identifier: MIT
# Every external dependency, from Debian packages (scripts/install-deps.sh installs them).
# Each becomes an imported target; nothing is added globally.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)           # Boost.Graph is header-only
find_package(yaml-cpp REQUIRED)             # target: yaml-cpp
find_package(nlohmann_json 3 REQUIRED)      # target: nlohmann_json::nlohmann_json
find_package(CLI11 REQUIRED)                # target: CLI11::CLI11
find_package(MPI REQUIRED COMPONENTS CXX)   # target: MPI::MPI_CXX (only the sweep's MPI module)

# SystemC 2.3.4 ships only pkg-config metadata and is built as C++17.
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc)
add_library(nocflow_systemc INTERFACE)
add_library(nocflow::systemc ALIAS nocflow_systemc)
target_link_libraries(nocflow_systemc INTERFACE PkgConfig::SYSTEMC Threads::Threads)
target_compile_definitions(nocflow_systemc INTERFACE SC_CPLUSPLUS=201703L)

# lp_solve: static archive plus what it needs. Only optimizer's lp backend includes its header.
find_path(LPSOLVE_INCLUDE_DIR lpsolve/lp_lib.h REQUIRED)
find_library(LPSOLVE_LIBRARY NAMES liblpsolve55.a lpsolve55 REQUIRED)
find_library(COLAMD_LIBRARY colamd REQUIRED)
add_library(nocflow_lpsolve INTERFACE)
add_library(nocflow::lpsolve ALIAS nocflow_lpsolve)
target_include_directories(nocflow_lpsolve SYSTEM INTERFACE ${LPSOLVE_INCLUDE_DIR})
target_link_libraries(nocflow_lpsolve INTERFACE ${LPSOLVE_LIBRARY} ${COLAMD_LIBRARY} ${CMAKE_DL_LIBS} m)
