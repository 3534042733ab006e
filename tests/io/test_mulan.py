"""Tests of spark_fr.io.mulan (Mulan label XML)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_fr.io.arff import read_header
from spark_fr.io.mulan import MulanError, read_label_names, read_label_tree
from tests.paths import DATASETS

needs_datasets = pytest.mark.skipif(not DATASETS.is_dir(), reason="shared datasets not available")


def write(tmp_path: Path, text: str, name: str = "labels.xml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@needs_datasets
def test_emotions_labels_are_the_last_arff_attributes():
    labels = read_label_names(str(DATASETS / "mlc_emotions/emotions.xml"))
    header = read_header(str(DATASETS / "mlc_emotions/emotions.arff"))
    assert len(labels) == 6
    assert labels == [a.name for a in header.attributes[-6:]]
    assert labels[0] == "amazed-suprised"
    assert read_label_tree(str(DATASETS / "mlc_emotions/emotions.xml")) == [(name, None) for name in labels]


@needs_datasets
@pytest.mark.parametrize(
    ("folder", "stem", "count"),
    [("mlc_medical", "medical", 45), ("mlc_yeast", "yeast", 14), ("mlc_scene", "scene", 6), ("mlc_flags", "flags", 7)],
)
def test_mulan_sets(folder, stem, count):
    labels = read_label_names(str(DATASETS / folder / f"{stem}.xml"))
    assert len(labels) == count
    arff = DATASETS / folder / (f"{stem}.arff" if stem != "scene" else "scene-train.arff")
    names = [a.name for a in read_header(str(arff)).attributes]
    assert set(labels) <= set(names)
    if stem == "medical":
        assert labels == names[-45:]
        assert labels[0] == "Class-0-593_70" and labels[-1] == "Class-44-786_07"


def test_nested_labels(tmp_path):
    path = write(
        tmp_path,
        """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
  <!-- a comment -->
  <label name="A">
    <label name="A1"/>
    <label name="A2">
      <label name="A2x"></label>
    </label>
  </label>
  <label name="B"/>
</labels>
""",
    )
    assert read_label_names(path) == ["A", "A1", "A2", "A2x", "B"]
    assert read_label_tree(path) == [("A", None), ("A1", "A"), ("A2", "A"), ("A2x", "A2"), ("B", None)]


def test_without_namespace(tmp_path):
    path = write(tmp_path, '<labels><label name="x"/><label name="y"/></labels>')
    assert read_label_names(path) == ["x", "y"]


def test_entities_and_arff_escapes(tmp_path):
    path = write(
        tmp_path,
        '<labels xmlns="http://mulan.sourceforge.net/labels">'
        '<label name="it&apos;s"/>'
        r'<label name="don\'t"/>'
        '<label name="a &amp; b &lt;c&gt; &quot;q&quot;"/>'
        r'<label name="back\\slash"/>'
        "<label name=\"caf&#233;\"/>"
        "</labels>",
    )
    assert read_label_names(path) == ["it's", "don't", 'a & b <c> "q"', "back\\slash", "café"]


def test_escaped_names_match_arff_names(tmp_path):
    arff = tmp_path / "d.arff"
    arff.write_text("@relation r\n@attribute x numeric\n@attribute 'it\\'s' {0,1}\n@data\n", encoding="utf-8")
    xml = write(tmp_path, r'<labels><label name="it\'s"/></labels>')
    assert read_label_names(xml) == [read_header(str(arff)).attributes[-1].name]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('<labels><label name="a"></labels>', r"labels\.xml line 1: malformed XML"),
        ("", r"labels\.xml line 1: malformed XML"),
        ('<labels xmlns="http://mulan.sourceforge.net/labels"></labels>', r"labels\.xml: no <label> elements found"),
        ('<labelset><label name="a"/></labelset>', r"labels\.xml: root element is <labelset>, expected <labels>"),
        ('<labels><label/></labels>', r"labels\.xml: a <label> element has no name attribute"),
        ('<labels><label name="a"/><label name="a"/></labels>', r"labels\.xml: label 'a' is declared twice"),
    ],
)
def test_errors(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(MulanError, match=message) as info:
        read_label_names(path)
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(MulanError, match=r"missing\.xml: cannot open"):
        read_label_names(str(tmp_path / "missing.xml"))
