# Warnings for the project's own code. Third-party headers come in through imported targets and so
# are system headers: their warnings do not show.
add_library(scriptscope_warnings INTERFACE)
target_compile_options(scriptscope_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Woverloaded-virtual -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(SCRIPTSCOPE_WERROR)
    target_compile_options(scriptscope_warnings INTERFACE -Werror)
endif()
