#include "CSystem.h"
int csystem_placeholder(void) { return 0; }
