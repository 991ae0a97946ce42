#include "build_info.h"

// scripts/release writes storekeeper_build_stamp.h (two #defines) into its own build
// directory, outside the tree, and puts that directory on the include path. Only this file
// includes it, so a new commit recompiles this file and relinks, nothing more.
#if __has_include("storekeeper_build_stamp.h")
#include "storekeeper_build_stamp.h"
#endif

#ifndef STOREKEEPER_VERSION
#define STOREKEEPER_VERSION "unknown"
#endif
#ifndef STOREKEEPER_COMMIT
#define STOREKEEPER_COMMIT "unknown"
#endif

const char *storekeeper_build_version(void) { return STOREKEEPER_VERSION; }
const char *storekeeper_build_commit(void) { return STOREKEEPER_COMMIT; }
