#!/usr/bin/env python3
"""Checks snapshot files by the rule of the format alone, apart from the
program's code: the trailer (the last line) holds {"end": {..., "crc32c": HEX}},
the CRC-32C (Castagnoli, reflected 0x82F63B78) of exactly the bytes before it.
Prints one line per file; exits 1 if any file fails."""
import json, sys

TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    TABLE.append(c)

def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

bad = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    stored = int(json.loads(data[cut:])["end"]["crc32c"], 16)
    ok = stored == crc32c(data[:cut])
    bad += not ok
    print(("ok " if ok else "BAD ") + path)
sys.exit(1 if bad else 0)
