"""A writer of stored (uncompressed) zip archives whose records' CRC-32s are computed on worker
threads while earlier records are being written.

Python's ``zipfile`` computes a record's CRC-32 and then writes it, one after the other, on the
calling thread; for a checkpoint of large tensors the two passes take about as long each. Here
every record's CRC starts on a thread pool at once (``zlib.crc32`` releases the GIL), and the
calling thread writes record i (the write releases the GIL too) while the pool checksums the
records after it. The archive is a standard zip (zip64 where sizes or offsets need it), with
each record's data aligned to ``alignment`` bytes by padding in an extra field (id 0x4246, as
``torch.save``'s writer), so ``zipfile``, ``torch.load`` and memory-mapped loads read it.
"""

from __future__ import annotations

import functools
import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

_DOS_DATE = (1 << 5) | 1  # 1980-01-01, the date torch.save and ember.save give every record
_DOS_TIME = 0
_MAX32 = 0xFFFFFFFF
_MAX16 = 0xFFFF
_CHUNK = 64 << 20  # CRC work units: big records are split so that the pool shares them


class ZipWriter:
    """Appends stored records to a binary file object, then its central directory."""

    def __init__(self, file, alignment=64):
        self.file = file
        self.alignment = alignment
        try:
            self.offset = file.tell()
        except (AttributeError, OSError):
            self.offset = 0
        self.entries = []  # (name bytes, crc, size, header offset)

    def _write(self, data):
        self.file.write(data)
        self.offset += len(data)

    def write_record(self, name, data, crc):
        """Writes one record whose CRC-32 is already known."""
        name_bytes = name.encode("utf-8")
        size = memoryview(data).nbytes
        zip64 = size >= _MAX32
        extra = struct.pack("<HHQQ", 1, 16, size, size) if zip64 else b""
        start = self.offset + 30 + len(name_bytes) + len(extra) + 4
        pad = (-start) % self.alignment
        extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if zip64 else 20, 0, 0, _DOS_TIME,
                             _DOS_DATE, crc, _MAX32 if zip64 else size,
                             _MAX32 if zip64 else size, len(name_bytes), len(extra))
        self.entries.append((name_bytes, crc, size, self.offset))
        self._write(header + name_bytes + extra)
        if size:
            self.file.write(data)
            self.offset += size

    def finish(self):
        """Writes the central directory and the end records (zip64 when needed)."""
        directory_offset = self.offset
        for name, crc, size, header_offset in self.entries:
            fields = []
            if size >= _MAX32:
                fields += [size, size]
            if header_offset >= _MAX32:
                fields.append(header_offset)
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) \
                if fields else b""
            version = 45 if fields else 20
            self._write(struct.pack(
                "<IHHHHHHIIIHHHHHII", 0x02014B50, version, version, 0, 0, _DOS_TIME, _DOS_DATE,
                crc, _MAX32 if size >= _MAX32 else size, _MAX32 if size >= _MAX32 else size,
                len(name), len(extra), 0, 0, 0, 0,
                _MAX32 if header_offset >= _MAX32 else header_offset) + name + extra)
        directory_size = self.offset - directory_offset
        count = len(self.entries)
        if count >= _MAX16 or directory_offset >= _MAX32 or directory_size >= _MAX32:
            zip64_offset = self.offset
            self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                                    directory_size, directory_offset))
            self._write(struct.pack("<IIQI", 0x07064B50, 0, zip64_offset, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(count, _MAX16),
                                min(count, _MAX16), min(directory_size, _MAX32),
                                min(directory_offset, _MAX32), 0))


def write_stored_zip(file, records, alignment=64):
    """Writes ``records`` (name, bytes-like) as a stored zip archive to the binary file object
    ``file``, checksumming on a thread pool ahead of the writes."""
    workers = max(1, min(4, (os.cpu_count() or 1)))
    writer = ZipWriter(file, alignment)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = []
        for _, data in records:
            view = memoryview(data).cast("B") if memoryview(data).nbytes else b""
            chunks = [view[i:i + _CHUNK] for i in range(0, len(view), _CHUNK)] or [b""]
            futures.append([(pool.submit(zlib.crc32, c), len(c)) for c in chunks])
        for (name, data), parts in zip(records, futures):
            crc = 0
            for future, length in parts:
                crc = _crc_combine(crc, future.result(), length)
            writer.write_record(name, data, crc)
    writer.finish()


def _gf2_times(matrix, vector):
    total = 0
    i = 0
    while vector:
        if vector & 1:
            total ^= matrix[i]
        vector >>= 1
        i += 1
    return total


def _compose(a, b):
    """The operator a after b (32x32 matrices over GF(2), one int per column)."""
    return [_gf2_times(a, column) for column in b]


@functools.lru_cache(maxsize=16)
def _zeros_operator(length):
    """The operator that advances a CRC-32 register through ``length`` zero bytes."""
    bit = [0xEDB88320] + [1 << n for n in range(31)]  # one zero bit (reflected polynomial)
    byte = bit
    for _ in range(3):
        byte = _compose(byte, byte)  # 2, 4, 8 zero bits
    result = [1 << n for n in range(32)]  # identity
    while length:
        if length & 1:
            result = _compose(byte, result)
        byte = _compose(byte, byte)
        length >>= 1
    return result


def _crc_combine(crc1, crc2, length2):
    """CRC-32 of A+B from crc(A), crc(B) and len(B), as zlib's crc32_combine (which Python's
    zlib module does not expose): crc(A) advanced through len(B) zero bytes, xor crc(B)."""
    if length2 == 0:
        return crc1
    return _gf2_times(_zeros_operator(length2), crc1) ^ crc2
