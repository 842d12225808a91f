/*
 * libduethook.so: the hook of adapters/c/duet.h as a shared library, so that the Python hook
 * (duetbench.hook, via ctypes) shares the C implementation: Python itself cannot do an atomic
 * fetch-add on a shared mapping. Strong (not weak) definitions, exported for dlsym.
 */
#define DUET_API __attribute__((visibility("default")))
#include "../adapters/c/duet.h"
