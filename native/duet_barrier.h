/*
 * The duet barrier protocol for the launcher. Its one implementation is adapters/c/duet.h, which
 * users also copy into their C/C++ harnesses; here it is included without the hook part.
 * The relative path keeps `gcc -Inative native/launcher.c` working without extra include paths.
 */
#ifndef DUET_BARRIER_H
#define DUET_BARRIER_H

#define DUET_PROTOCOL_ONLY 1
#include "../adapters/c/duet.h"

#endif
