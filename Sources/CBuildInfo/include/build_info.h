#ifndef STOREKEEPER_BUILD_INFO_H
#define STOREKEEPER_BUILD_INFO_H

/// The release this binary is ("0.9.0") and the commit it was built from ("1a2b3c4", with
/// "-dirty" when the tree had changes): what `scripts/release` stamped, "unknown" in a
/// development build. Static strings, never freed.
const char *storekeeper_build_version(void);
const char *storekeeper_build_commit(void);

#endif
