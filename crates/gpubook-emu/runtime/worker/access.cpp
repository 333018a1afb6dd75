// Check mode's access path as one translation unit: every instrumented load and store calls
// check_access (access/checks.cpp), which runs the bounds, never-written, race (access/races.cpp)
// and access-count (access/counts.cpp) checks; with the compiler pass, what the checks inlined
// into the kernel decline comes to access/inline_checks.cpp. Compiled together, `flatten` inlines them all into
// that one function with any compiler, without link-time optimisation (the H200 machine's g++ has
// no LTO plugin). The build compiles worker/*.cpp, not the files under access/.
#include "access/checks.cpp"
#include "access/counts.cpp"
#include "access/races.cpp"
#include "access/unwritten.cpp"
#include "access/inline_checks.cpp"
