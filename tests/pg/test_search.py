"""PostgreSQL lexical search: the bigram lexemes, their queries, the bounded ranking
and the schema step re-indexing databases written before them."""

from __future__ import annotations

from pathlib import Path

import pytest

from soloqueue_mem import Store
from soloqueue_mem.storage.postgres import memories, turns
from soloqueue_mem.storage.postgres.schema import MIGRATIONS, _replaced_values
from soloqueue_mem.storage.postgres.text import document, lexemes, term_query
from tests.conftest import Cli


def test_a_cjk_run_is_indexed_as_its_bigrams_and_last_character() -> None:
    assert lexemes("我在上海工作, Compiler_v2 上 ok") == [
        *["我在", "在上", "上海", "海工", "工作", "作"],
        *["compil", "v2", "上", "ok"],  # Porter stems, as SQLite's index has them
    ]
    assert document("東京タワー") == "東京 京タ タワ ワー ー"


@pytest.mark.parametrize(
    ("term", "query"),
    [
        ("上海", "'上海'"),
        ("上海市", "'上海' <-> '海市'"),
        ("上", "'上':*"),
        ("上海abc", "'上海' <-> '海' <-> 'abc'"),
        ("abc上", "'abc' <-> '上':*"),
        ("Compiler", "('compil' | 'compiler')"),  # the stem, or a row not re-indexed yet
        ("deploying", "('deploi' | 'deploying')"),
        ("'; DROP", "'drop'"),
        ("!!", None),
    ],
)
def test_a_term_becomes_the_phrase_of_its_lexemes(term: str, query: str | None) -> None:
    assert term_query(term) == query


TEXTS = [
    "我们下周在上海开会",  # 0
    "上海市的天气很好",  # 1
    "海上的船",  # 2: 海上, not 上海
    "上 海 分开写",  # 3: the characters apart
    "见到了上",  # 4: 上 as a run's last character
    "the 上海abc release",  # 5
]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("上海", {0, 1, 5}),
        ("上海市", {0, 1, 5}),  # jieba's search mode adds its sub-word 上海
        ("海上", {2}),
        ("上", {0, 1, 2, 3, 4, 5}),
        ("release", {5}),
    ],
)
def test_cjk_words_are_found_exactly_where_they_occur(
    cli: Cli, on_postgres: str, query: str, found: set[int]
) -> None:
    for text in TEXTS:
        cli.ok("log", "-s", "zh", text)
    hits = cli.json("trace", query, "--limit", "20")
    assert {h["turn_index"] for h in hits} == found


@pytest.mark.parametrize(
    ("text", "term", "matches"),
    [
        ("上海市的天气", "上海市", True),
        ("上海的市场", "上海市", False),  # all three characters, not in a row
        ("海市蜃楼", "上海市", False),
        ("在上海abc里", "上海abc", True),
        ("上海 abc", "上海abc", True),  # apart in the text, as FTS5's phrase
        ("海上 abc", "上海abc", False),
        ("很好", "好", True),
        ("好的", "好", True),
    ],
)
def test_the_database_matches_a_term_where_it_occurs(
    database_url: str, text: str, term: str, matches: bool
) -> None:
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT to_tsvector('simple', %s) @@ to_tsquery('simple', %s)",
            (document(text), term_query(term)),
        ).fetchone()
    assert row == (matches,)


def test_ranking_reads_each_terms_newest_matches_only(
    home: Path, on_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A common term brings its newest WINDOW matches to the ranking; a rare term all
    of its own, however old."""
    monkeypatch.setattr(turns, "WINDOW", 3)
    monkeypatch.setattr(memories, "WINDOW", 3)
    with Store() as store:
        store.log("deploy rollback notes", session="s1")  # the oldest: rare 'rollback'
        for n in range(6):
            store.log(f"deploy number {n}", session="s1")
        assert [h.turn.turn_index for h in store.trace("deploy", limit=20)] == [6, 5, 4]
        found = {h.turn.turn_index for h in store.trace("deploy rollback", limit=20)}
        assert found == {0, 6, 5, 4}
        store.remember("quota rollback plan")
        for n in range(5):
            store.remember(f"quota change {n}")
        recalled = store.recall("quota", channels=["memories"], limit=20, max_tokens=5000)
        assert len(recalled.hits) == 3
        both = store.recall("quota rollback", channels=["memories"], limit=20, max_tokens=5000)
        assert "quota rollback plan" in [hit.candidate.content for hit in both.hits]


def test_the_schema_step_reindexes_rows_written_before_it(database_url: str) -> None:
    """A database at version 1 (CJK characters one lexeme each) is re-indexed on open."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import connect

    stamp = "2026-01-01T00:00:00.000Z"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(MIGRATIONS[0])  # type: ignore[arg-type] - constant SQL
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute(
            "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role,"
            " content, tool_results, timestamp, search) VALUES ('default', 'default', 's1', 0,"
            " 'user', '我们在上海', %s, %s, to_tsvector('simple', '我 们 在 上 海'))",
            ('[{"content": "编译器 ok"}]', stamp),
        )
        conn.execute(
            "INSERT INTO memories (id, group_id, agent_id, type, priority, content, source,"
            " importance_score, confidence, decay_rate, created_at, updated_at, content_key,"
            " tags, search) VALUES ('0123456789abcdef0123456789abcdef', 'default', 'default',"
            " 'FACT', 'LONG_TERM', '部署在周五', 'user', 0.5, 0.8, 0.01, %s, %s, 'k', '[\"运维\"]',"
            " to_tsvector('simple', '部 署 在 周 五'))",
            (stamp, stamp),
        )
    connect(database_url).close()
    with psycopg.connect(database_url) as conn:
        (version,) = conn.execute("SELECT version FROM schema_version").fetchone() or (0,)
        (turn,) = conn.execute("SELECT search::text FROM quarantine_logs").fetchone() or ("",)
        (memory,) = conn.execute("SELECT search::text FROM memories").fetchone() or ("",)
    assert version == len(MIGRATIONS)
    assert "'上海'" in turn and "'编译'" in turn  # the content and the tool result
    assert "'部署'" in memory and "'运维'" in memory  # the content and a tag


def test_the_stems_schema_step_reindexes_english_words(database_url: str) -> None:
    """A database before the stems step (words as written) gets its English words
    stemmed on open; until then a query finds them as written too."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import _apply, connect

    with psycopg.connect(database_url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO schema_version VALUES (0)")
            _apply(conn, 0, False)
            conn.execute("ALTER TABLE memories DROP COLUMN replaced_value")  # the next step's
            stems = MIGRATIONS.index(_replaced_values) - 1
            conn.execute("UPDATE schema_version SET version = %s", (stems,))
        conn.execute(
            "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role,"
            " content, timestamp, search) VALUES ('default', 'default', 's1', 0, 'user',"
            " 'the compilers crashed', '2026-01-01T00:00:00.000Z',"
            " to_tsvector('simple', 'the compilers crashed'))"
        )
        found = conn.execute(
            "SELECT count(*) FROM quarantine_logs WHERE search @@ to_tsquery('simple', %s)",
            (term_query("compilers"),),
        ).fetchone()
        assert found == (1,)  # not re-indexed yet: found as written
    connect(database_url).close()
    with psycopg.connect(database_url) as conn:
        (turn,) = conn.execute("SELECT search::text FROM quarantine_logs").fetchone() or ("",)
        plural = conn.execute(
            "SELECT count(*) FROM quarantine_logs WHERE search @@ to_tsquery('simple', %s)",
            (term_query("compilers"),),
        ).fetchone()
    assert "'compil'" in turn and "'crash'" in turn and "'compilers'" not in turn
    assert plural == (1,)


def test_the_replaced_value_step_fills_rows_written_before_it(database_url: str) -> None:
    """A database before the step (as memory.db's migration 17) gives each memory the
    value it says it replaced, which expiry reads."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import _apply, connect

    with psycopg.connect(database_url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO schema_version VALUES (0)")
            _apply(conn, 0, False)
            conn.execute("ALTER TABLE memories DROP COLUMN replaced_value")
            step = MIGRATIONS.index(_replaced_values)
            conn.execute("UPDATE schema_version SET version = %s", (step,))
        for n, content in enumerate(["We are dropping Jenkins for GitHub Actions", "部署在周五"]):
            conn.execute(
                "INSERT INTO memories (id, group_id, agent_id, type, priority, content, source,"
                " importance_score, confidence, decay_rate, created_at, updated_at,"
                " content_key, search) VALUES (%s, 'default', 'default', 'FACT', 'LONG_TERM',"
                " %s, 'manual', 0.5, 0.5, 0.1, %s, %s, 'k', to_tsvector('simple', ''))",
                (f"{n:032x}", content, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
            )
    connect(database_url).close()
    with psycopg.connect(database_url) as conn:
        values = conn.execute("SELECT replaced_value FROM memories ORDER BY id").fetchall()
    assert values == [("Jenkins",), ("",)]


INSERT_MEMORY = (
    "INSERT INTO memories (id, group_id, agent_id, type, priority, content, source,"
    " importance_score, confidence, decay_rate, created_at, updated_at, content_key, search,"
    " replaced_value) VALUES (%s, 'default', 'default', 'FACT', 'LONG_TERM', %s, 'manual',"
    " 0.5, 0.5, 0.1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'k',"
    " to_tsvector('simple', ''), %s)"
)


def test_rows_written_under_the_older_replaced_value_rule_are_derived_again(
    database_url: str,
) -> None:
    """A database whose rows hold what rule 1 of ``replaced_value`` gave (nothing for
    "48 小时 … 改成 … 24 小时") gets rule 2's value on open (as memory.db's m018); a
    second open changes nothing."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import _apply, connect

    with psycopg.connect(database_url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO schema_version VALUES (0)")
            _apply(conn, 0, False)
            rule_1 = MIGRATIONS.index(_replaced_values) + 1
            conn.execute("UPDATE schema_version SET version = %s", (rule_1,))
        said = [
            ("48 小时太早了客户都忘了，改成提前 24 小时吧", ""),  # as rule 1 gave it
            ("We are dropping Jenkins for GitHub Actions", "Jenkins"),
            ("部署在周五", ""),
        ]
        for n, (content, value) in enumerate(said):
            conn.execute(INSERT_MEMORY, (f"{n:032x}", content, value))
    connect(database_url).close()
    with psycopg.connect(database_url, autocommit=True) as conn:
        values = conn.execute("SELECT replaced_value FROM memories ORDER BY id").fetchall()
        conn.execute("UPDATE memories SET replaced_value = 'kept' WHERE id = %s", (f"{2:032x}",))
    assert values == [("48 小时",), ("Jenkins",), ("",)]

    connect(database_url).close()
    with psycopg.connect(database_url) as conn:
        again = conn.execute("SELECT replaced_value FROM memories ORDER BY id").fetchall()
    assert again == [("48 小时",), ("Jenkins",), ("kept",)]  # not derived on every open


def test_english_words_find_their_other_forms_as_in_sqlite(cli: Cli, on_postgres: str) -> None:
    cli.ok("log", "-s", "en", "the compilers crashed twice during the nightly build")
    cli.ok("remember", "We deployed the billing service on Friday")
    assert [h["turn_index"] for h in cli.json("trace", "compiler crash")] == [0]
    recalled = cli.json("recall", "deploying billing", "--channels", "memories")
    assert [h["content"] for h in recalled] == ["We deployed the billing service on Friday"]


def test_recall_finds_a_chinese_memory_and_turn_on_postgres(cli: Cli, on_postgres: str) -> None:
    cli.ok("log", "-s", "zh", "项目进度在周五汇报")
    cli.ok("remember", "项目的进度每周更新")
    result = cli.json("recall", "项目 进度")
    contents = [hit["content"] for hit in result]
    assert "项目的进度每周更新" in contents and "项目进度在周五汇报" in contents


def test_any_text_makes_a_valid_query(database_url: str) -> None:
    import psycopg

    from soloqueue_mem.storage.postgres.text import any_query

    tricky = [
        "a'b",
        "x\\y",
        "ǅemal",
        "٣٤",
        "e\u0301t\u00e9",
        "😀 ok",
        "ｆｕｌｌ",
        "上'海",
        "한국어",
    ]
    with psycopg.connect(database_url) as conn:
        for text in tricky:
            query = any_query([text, *text.split("'")])
            assert query is not None, text
            conn.execute(
                "SELECT to_tsvector('simple', %s) @@ to_tsquery('simple', %s)",
                (document(text), query),
            ).fetchone()
    assert any_query(["_", "!!"]) is None


def test_the_newest_matches_are_found_in_widening_ranges_of_keys(database_url: str) -> None:
    """With statistics saying a term is common, the newest keys are searched first and
    the range widened while it holds too few: the answer is always the true newest."""
    from soloqueue_mem.storage.postgres.connect import connect
    from soloqueue_mem.storage.postgres.newest import newest_matches

    conn = connect(database_url)
    try:
        texts = [f"rollout step {n}" if n < 150 else f"deploy step {n}" for n in range(400)]
        conn.execute(
            "INSERT INTO quarantine_logs (group_id, agent_id, session_id, turn_index, role,"
            " content, timestamp, search) SELECT 'g', 'a', 's', n, 'user', t, '2026', "
            " to_tsvector('simple', t) FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, n)",
            (texts,),
        )
        conn.execute("ANALYZE quarantine_logs")
        ids = [row[0] for row in conn.execute("SELECT id FROM quarantine_logs ORDER BY id")]
        for phrase, window in (("'rollout'", 5), ("'deploy'", 5), ("'step'", 400), ("'x'", 5)):
            found = [
                key
                for (key,) in newest_matches(
                    conn, "quarantine_logs", "id", phrase, "group_id = %(g)s", {"g": "g"}, window
                )
            ]
            expected = [
                i for i, text in zip(ids, texts, strict=True) if phrase.strip("'") in text.split()
            ][::-1][:window]
            assert found == expected, phrase
    finally:
        conn.close()


def test_a_window_s_plans_read_the_memories_expiry_index(database_url: str) -> None:
    """The plans of a coming window are read through one range of the memories' expiry
    index, on PostgreSQL as in memory.db: the planner uses it even on a small table
    when a sequential scan is ruled out (a table with no such index would still scan)."""
    import psycopg

    from soloqueue_mem.storage.postgres.connect import connect

    connect(database_url).close()
    with psycopg.connect(database_url) as conn:
        conn.execute("SET enable_seqscan = off")
        rows = conn.execute(
            "EXPLAIN SELECT id FROM memories WHERE expires_at > %s AND expires_at <= %s",
            ("2026-01-01T00:00:00.000Z", "2026-01-08T00:00:00.000Z"),
        ).fetchall()
    assert "memories_expires" in "\n".join(row[0] for row in rows)
