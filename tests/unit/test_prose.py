"""The prose of machine text: what a tool turn holds of a question (recall's coverage)."""

from __future__ import annotations

from soloqueue_mem.text.prose import prose


def test_code_tokens_are_left_out_and_words_kept():
    text = "export_followups(month='2026-06', out='/home/ann/x.xlsx') ran; see train.py --config a"
    assert prose(text) == "ran see a"


def test_a_json_document_counts_by_its_values_not_its_keys():
    text = '{"pickup_date": "2026-10-14", "note": "Saturday pickup", "trucks": 3, "ok": true}'
    assert prose(text) == "2026-10-14 Saturday pickup 3"


def test_a_token_the_question_names_whole_is_kept():
    text = "dbt run --select fct_churn"
    assert prose(text, "Why did fct_churn fail?") == "dbt run fct_churn"
    assert prose(text, "Why did the churn model fail?") == "dbt run"


def test_urls_camel_case_and_addresses_are_code():
    assert prose("GET https://api.example.com/v1 by getUser for ann@example.com") == "GET by for"
