"""What of a query an embedding model reads (no model needed: tokens counted by a
stand-in, one per character)."""

from soloqueue_mem.semantic.model import PASTED_TOKENS, query_window


def test_a_pasted_text_is_read_by_its_last_sentence():
    pasted = "我们聊了很多旅行的事。" * (PASTED_TOKENS // 10 + 1)
    assert query_window(pasted + "我现在用哪个编辑器？", len) == "我现在用哪个编辑器？"
