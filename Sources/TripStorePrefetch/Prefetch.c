// The module's one function is inline in its header; SwiftPM wants a source file.
#include "TripStorePrefetch.h"
