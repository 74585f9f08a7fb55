#include "TripStoreCRC32C.h"
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>

int tripstore_crc32c_has_instruction(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t tripstore_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t c = crc;
    for (; count >= 8; p += 8, count -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
    }
    uint32_t c32 = (uint32_t)c;
    for (; count > 0; p++, count--) c32 = _mm_crc32_u8(c32, *p);
    return c32;
}

#elif defined(__aarch64__)
#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
int tripstore_crc32c_has_instruction(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#else
// Every arm64 processor Apple ships has it.
int tripstore_crc32c_has_instruction(void) { return 1; }
#endif

__attribute__((target("crc")))
uint32_t tripstore_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    for (; count >= 8; p += 8, count -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __crc32cd(crc, word);
    }
    for (; count > 0; p++, count--) crc = __crc32cb(crc, *p);
    return crc;
}

#else
int tripstore_crc32c_has_instruction(void) { return 0; }
uint32_t tripstore_crc32c_update(uint32_t crc, const void *bytes, size_t count) { (void)bytes; (void)count; return crc; }
#endif
