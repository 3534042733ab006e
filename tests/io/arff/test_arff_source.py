"""Tests of spark_fr.io.arff.source: plain and gzip-compressed files, finding a row's line number."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from tests.io.arff.arff_helpers import ERRORS, SPARSE, write
from spark_fr.io.arff import ArffError, ArffLineError, ArffRowParser, find_line_number, read_header
from spark_fr.io.arff.source import check_gzip, open_text


def gzip_copy(path, name=None):
    target = path.with_name(name or path.name + ".gz")
    target.write_bytes(gzip.compress(path.read_bytes()))
    return target


def test_gzip_header_and_rows_equal_the_plain_file(tmp_path):
    plain = write(tmp_path, SPARSE + "2.5,y,0,no,'a b'\n", name="s.arff")
    packed = gzip_copy(plain)
    a, b = read_header(str(plain)), read_header(str(packed))
    assert (a.relation, a.attributes, a.data_line, a.sparse) == (b.relation, b.attributes, b.data_line, b.sparse)
    with open_text(str(packed)) as handle:
        lines = handle.read().splitlines()[b.data_line:]
    rows = ArffRowParser(b).parse_lines(lines)
    assert rows.n_rows == 7
    np.testing.assert_array_equal(rows.numeric[0], [1.5, 0, 0, 2.5, 0, 0, 2.5])
    assert rows.nominal[4][-1] == "a b"


def test_byte_order_mark_and_crlf_in_gzip(tmp_path):
    path = tmp_path / "b.arff.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf@relation r\r\n@attribute a numeric\r\n@data\r\n1\r\n"))
    header = read_header(str(path))
    assert header.relation == "r" and header.data_line == 3 and header.sparse is False


def test_find_line_number_in_a_gzip_file(tmp_path):
    packed = gzip_copy(write(tmp_path, ERRORS + "1,x,2,no\n% c\n5,z,six,no\n", name="bad.arff"))
    header = read_header(str(packed))
    with open_text(str(packed)) as handle:
        lines = handle.read().splitlines()[header.data_line:]
    with pytest.raises(ArffLineError) as info:
        ArffRowParser(header).parse_lines(lines)
    assert find_line_number(str(packed), info.value.line_text, header.data_line + 1) == 9


def test_name_and_compression_must_agree(tmp_path):
    plain = write(tmp_path, SPARSE, name="s.arff")
    disguised = gzip_copy(plain, "g.arff")  # gzip data, plain name: Spark would parse the bytes
    with pytest.raises(ArffError) as info:
        read_header(str(disguised))
    assert str(info.value) == ("g.arff: the file is gzip-compressed but its name does not end in .gz "
                               "(Spark decompresses by extension); rename it to g.arff.gz")
    fake = write(tmp_path, SPARSE, name="p.arff.gz")
    with pytest.raises(ArffError, match=r"^p.arff.gz: the name ends in .gz but the file is not gzip-compressed$"):
        read_header(str(fake))


def test_truncated_or_corrupt_gzip(tmp_path):
    rows = "".join(f"{{0 {i}.5, 3 yes}}\n" for i in range(3000))
    packed = gzip_copy(write(tmp_path, SPARSE + rows, name="s.arff"))
    check_gzip(str(packed))  # intact: no error
    data = packed.read_bytes()
    truncated = tmp_path / "t.arff.gz"
    truncated.write_bytes(data[: len(data) // 2])
    read_header(str(truncated))  # the header itself is intact ...
    with pytest.raises(ArffError, match=r"^t.arff.gz: corrupt or truncated gzip data \("):
        check_gzip(str(truncated))  # ... the stream is not
    corrupt = tmp_path / "c.arff.gz"
    corrupt.write_bytes(data[:-8] + bytes(8))  # wrong CRC and length
    with pytest.raises(ArffError, match=r"^c.arff.gz: corrupt or truncated gzip data"):
        check_gzip(str(corrupt))
    check_gzip(str(tmp_path / "s.arff"))  # plain files are not read


def test_missing_gzip_file(tmp_path):
    with pytest.raises(ArffError, match="nope.arff.gz: cannot open"):
        read_header(str(tmp_path / "nope.arff.gz"))


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_driver_batches_parsed_on_threads_equal_the_one_by_one_parse(tmp_path, monkeypatch, threads):
    """The driver parses windows of line batches of a compressed file on its threads: the same batches, in the
    file's order, a bad line's batch an error batch where it was."""
    from spark_fr.io.arff.spark import ArffBatches
    from spark_fr.io.readers import read_dataset

    lines = [f"{i * 0.5},{'ab'[i % 2]},{i % 7}" for i in range(53)]
    lines[30] = "1.0,zz,3"  # not a category of b
    path = gzip_copy(write(tmp_path, "@relation r\n@attribute a numeric\n@attribute b {a,b}\n@attribute c numeric\n"
                           "@data\n" + "\n".join(lines) + "\n", name="t.arff"))
    monkeypatch.setattr(ArffBatches, "LINES_PER_BATCH", 8)
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", threads)
    source = read_dataset(None, str(path)).batch_source()
    got = source.driver_batches()
    want = [b.select(source.names) for b in source.parse(source._lines())]
    assert len(got) == len(want) == 7
    assert [b.to_pydict() for b in got] == [b.to_pydict() for b in want]
    assert sum(b.num_rows for b in got) == 53 - 8 + 1  # the bad line's batch of 8 lines: its one error row
