"""Seed 004's recursive character splitter: chunk bounds, overlap, separator
priority, and CJK text without spaces."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from soloqueue_mem.memory.splitter import CHUNK_OVERLAP, CHUNK_SIZE, split_text


def test_cjk_without_spaces_is_cut_into_overlapping_windows():
    text = "".join(chr(0x4E00 + n % 500) for n in range(1200))
    chunks = split_text(text)
    assert [len(c) for c in chunks] == [500, 500, 300]
    assert chunks == [text[0:500], text[450:950], text[900:1200]]
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after[:CHUNK_OVERLAP] == before[-CHUNK_OVERLAP:]


def test_short_text_is_one_chunk_and_empty_text_none():
    assert split_text("  项目最终决定采用微服务架构。 ") == ["项目最终决定采用微服务架构。"]
    assert split_text("") == []
    assert split_text("\n\n \n") == []


def test_paragraphs_come_before_lines_and_lines_before_spaces():
    paragraphs = [f"p{n} " + "word " * 60 for n in range(4)]  # ~306 characters each
    chunks = split_text("\n\n".join(paragraphs))
    assert chunks == [p.strip() for p in paragraphs]  # never cut inside a paragraph
    lines = "\n".join(f"line {n} " + "x" * 90 for n in range(12))
    for chunk in split_text(lines):
        assert all(row.startswith("line ") for row in chunk.split("\n"))  # whole lines


def test_words_overlap_by_whole_words_up_to_fifty_characters():
    text = " ".join(f"w{n:03d}" for n in range(300))
    chunks = split_text(text)
    assert all(len(c) <= CHUNK_SIZE for c in chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        shared = [k for k in range(1, CHUNK_OVERLAP + 1) if after.startswith(before[-k:])]
        assert shared, (before[-60:], after[:60])
        assert before[-max(shared) - 1] == " "  # the overlap is whole words


def test_a_long_paragraph_is_split_further_with_the_next_separator():
    text = "intro\n\n" + "句子。" * 400  # one 1200-character paragraph, no spaces
    chunks = split_text(text)
    assert chunks[0] == "intro"
    assert all(len(c) <= CHUNK_SIZE for c in chunks)
    assert "".join([chunks[1]] + [c[CHUNK_OVERLAP:] for c in chunks[2:]]) == "句子。" * 400


def test_overlap_must_be_smaller_than_the_chunk():
    with pytest.raises(ValueError):
        split_text("abc", size=10, overlap=10)


@given(st.text(alphabet=st.sampled_from(list("ab 数据\n")), max_size=3000))
def test_chunks_are_bounded_and_cover_every_character(text):
    chunks = split_text(text)
    assert all(0 < len(c) <= CHUNK_SIZE for c in chunks)
    assert set("".join(chunks)) - set(" \n") == set(text) - set(" \n")
