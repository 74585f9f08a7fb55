#ifndef TRIPSTORE_CRC32C_H
#define TRIPSTORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor has the CRC-32C instruction (SSE 4.2 on x86-64,
/// the CRC extension on arm64): Swift has no way to ask for it itself.
int tripstore_crc32c_has_instruction(void);

/// Folds `count` bytes at `bytes` into the running CRC-32C register `crc`
/// (the checksum's complement, as a table-driven update keeps it) with the
/// processor's instruction; call it only where
/// `tripstore_crc32c_has_instruction` says there is one.
uint32_t tripstore_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif
