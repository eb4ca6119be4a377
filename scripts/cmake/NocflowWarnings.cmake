# SPDX-License-Identifier: MIT
# Warnings and sanitizers through interface targets, never global flags.
add_library(nocflow_warnings INTERFACE)
add_library(nocflow::warnings ALIAS nocflow_warnings)
target_compile_options(nocflow_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)

option(NOCFLOW_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(NOCFLOW_SANITIZE)
  target_compile_options(nocflow_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(nocflow_warnings INTERFACE -fsanitize=address,undefined)
endif()
