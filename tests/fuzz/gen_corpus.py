#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Writes the seed corpus of fuzz_esp_decap: every scapy-made packet of
# tests/unit/gen_esp_vectors.py (all algorithms, ESN around 2^32, TFC,
# forgeries, bad padding) in the target's input format: one byte algorithm
# index | ESN << 7, 8 bytes of window top (little endian), the packet.
#   /usr/bin/python3 tests/fuzz/gen_corpus.py tests/fuzz/corpus
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit"))
import gen_esp_vectors as g  # noqa: E402

# The target indexes esp_algorithms[] in common/esp_algorithms.h, whose order is:
TABLE_ORDER = [1, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12]

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for v in g.vectors:
    data = bytes([TABLE_ORDER.index(v["alg"]) | (v["esn"] << 7)]) + v["top"].to_bytes(8, "little")
    data += v["packet"]
    name = "%s-%s" % (v["name"], hashlib.sha1(data).hexdigest()[:8])
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(g.vectors), out))
