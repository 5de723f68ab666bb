"""ember._zip_writer: stored archives with CRC-32s from worker threads, readable by zipfile,
with each record's data aligned, big records checksummed in chunks and combined."""

import io
import os
import struct
import zipfile
import zlib

import pytest

from ember import _zip_writer


@pytest.mark.parametrize("chunk", [7, 1000, 1 << 26])
def test_archive_reads_back_with_valid_crcs(monkeypatch, chunk):
    monkeypatch.setattr(_zip_writer, "_CHUNK", chunk)
    data = os.urandom(100_003)
    records = [("a/data.pkl", b"pickle"), ("a/data/0", memoryview(data)), ("a/empty", b""),
               ("a/data/1", bytearray(b"x" * 4097))]
    out = io.BytesIO()
    out.write(b"prefix")  # the archive need not start at offset 0
    _zip_writer.write_stored_zip(out, records, alignment=64)
    archive = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    assert archive.testzip() is None  # every CRC checks
    for name, payload in records:
        info = archive.getinfo(name)
        assert info.compress_type == zipfile.ZIP_STORED
        assert info.CRC == zlib.crc32(bytes(payload))
        assert archive.read(name) == bytes(payload)
        # The data starts at a multiple of 64 in the file.
        raw = out.getvalue()
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:
                                                       info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0


def test_crc_combine_matches_zlib():
    data = os.urandom(5000)
    for cut in (0, 1, 17, 4096, 5000):
        a, b = data[:cut], data[cut:]
        combined = _zip_writer._crc_combine(zlib.crc32(a), zlib.crc32(b), len(b))
        assert combined == zlib.crc32(data)
