"""Quick, deterministic extraction of semantic memories from turns (seed 003 §5.4/§5.6).

No model: patterns for the statements people make about themselves and their rules,
in Chinese and English, each producing a subject/predicate-shaped draft that goes
through ``remember``'s update rules. Only user turns yield preferences, facts and
rules (an assistant's sentences are not the user's word); failed tool results yield
ERROR memories whoever logged them.

The text is cut into sentences and clauses first (see :func:`clauses`); a clause only
counts as the user's own statement when it is not

- inside a fenced code block (pasted code, logs and docstrings are not statements),
- a question (ends with ? / ？, opens with a question word, or — in Chinese — carries
  an interrogative such as 什么/哪/是不是 or ends with 吗/呢),
- reported speech (a clause after "他说，" / "my friend said:"),
- part of a hypothetical ("if …", "如果…，…": without its condition the rest is wrong).

What a pattern captures is then checked: a like/dislike or "I use" of "this/it/这个"
is a reaction to the moment, not a lasting preference; "my point/question is …" and
"我的意思/问题是…" are discourse, not attributes; "my X is not Y" / "我的X不是Y" says
what a value is not; "never mind" and "别担心" are not rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any, NamedTuple

from soloqueue_mem.memory.store import Draft

SOURCE = "rules"
MAX_SENTENCE = 200


class Pattern(NamedTuple):
    regex: re.Pattern[str]
    type: str
    predicate: str  # "{0}" takes the first group; "" for a list (likes, rules), never superseded
    content: str  # format string over the groups
    duration: str | None = None
    check: str = ""  # what the captured text must pass: see _acceptable


def _p(
    pattern: str,
    type_: str,
    predicate: str,
    content: str,
    duration: str | None = None,
    check: str = "",
) -> Pattern:
    return Pattern(re.compile(pattern, re.IGNORECASE), type_, predicate, content, duration, check)


@cache
def _patterns() -> tuple[Pattern, ...]:
    obj = r"(.{2,120}?)"
    return (
        # English: rules first (they often contain "I")
        _p(r"^(?:please\s+)?always\s+" + obj + r"$", "RULE", "", "Always {0}", "permanent", "rule"),
        _p(
            r"^(?:please\s+)?(?:never|don't ever|do not ever)\s+" + obj + r"$",
            "RULE",
            "",
            "Never {0}",
            "permanent",
            "rule",
        ),
        _p(
            r"^(?:please\s+)?(?:don't|do not)\s+" + obj + r"$",
            "RULE",
            "",
            "Don't {0}",
            None,
            "rule",
        ),
        _p(
            r"^my (?:favou?rite|preferred) ([\w' ]{2,30}?) (?:is|are) " + obj + r"$",
            "PREFERENCE",
            "favorite {0}",
            "User's favorite {0} is {1}",
        ),
        _p(
            r"^i (?:really |also |absolutely )?(?:prefer|like|love|enjoy) " + obj + r"$",
            "PREFERENCE",
            "",
            "User likes {0}",
            None,
            "object",
        ),
        _p(
            r"^i(?:'m| am) (?:also )?(?:a )?(?:big |huge )?fan of " + obj + r"$",
            "PREFERENCE",
            "",
            "User likes {0}",
            None,
            "object",
        ),
        _p(
            r"^i (?:really |also )?(?:hate|dislike|don't like|do not like|don't really like"
            r"|do not really like|can't stand|cannot stand) " + obj + r"$",
            "PREFERENCE",
            "",
            "User dislikes {0}",
            None,
            "object",
        ),
        _p(
            r"^i(?:'m| am) not (?:really )?(?:a )?(?:big |huge )?fan of " + obj + r"$",
            "PREFERENCE",
            "",
            "User dislikes {0}",
            None,
            "object",
        ),
        _p(
            r"^my name is " + obj + r"$", "FACT", "name", "User's name is {0}", "permanent", "value"
        ),
        _p(
            r"^my ([\w' ]{2,30}?) (?:is|are) " + obj + r"$",
            "FACT",
            "{0}",
            "User's {0} is {1}",
            None,
            "attribute",
        ),
        _p(
            r"^i(?: live|'m based| am based) in " + obj + r"$",
            "FACT",
            "lives in",
            "User lives in {0}",
        ),
        _p(r"^i work (?:at|for) " + obj + r"$", "FACT", "works at", "User works at {0}"),
        _p(r"^i work as (an? .{2,80}?)$", "FACT", "role", "User works as {0}"),
        _p(r"^i(?:'m| am) using " + obj + r"$", "FACT", "", "User uses {0}", None, "object"),
        # "on" is a busy word (on a call, on vacation, on it): only a name-like object
        _p(r"^i(?:'m| am) on " + obj + r"$", "FACT", "", "User uses {0}", None, "name"),
        _p(
            r"^i (?:mostly |mainly |usually |normally |still |also )?use " + obj + r"$",
            "FACT",
            "",
            "User uses {0}",
            None,
            "object",
        ),
        # Chinese
        _p(
            r"^(?:请)?(?:永远不要|绝对不要|禁止|不准|不许)" + obj + r"$",
            "RULE",
            "",
            "禁止{0}",
            "permanent",
            "rule",
        ),
        _p(
            r"^(?:请)?(?:总是|始终|一定要|务必|必须)" + obj + r"$",
            "RULE",
            "",
            "必须{0}",
            "permanent",
            "rule",
        ),
        _p(r"^(?:请)?(?:不要|别)" + obj + r"$", "RULE", "", "不要{0}", None, "rule"),
        # a rule about a topic: 提交信息必须用英文 (not about a person; default retention)
        _p(
            r"^([^我他她它]{1,8}?)(?:都|也)?(?:必须|务必|一律|一定要)" + obj + r"$",
            "RULE",
            "",
            "{0}必须{1}",
        ),
        _p(
            r"^([^我他她它]{1,8}?)(?:都|也)?(?:禁止|不准|不许)" + obj + r"$",
            "RULE",
            "",
            "{0}禁止{1}",
        ),
        _p(
            r"^我(?:最)?喜欢的(.{1,10}?)是" + obj + r"$",
            "PREFERENCE",
            "最喜欢的{0}",
            "用户最喜欢的{0}是{1}",
        ),
        _p(
            r"^我(?:也|很|非常|比较|更|一直|特别)?(?:喜欢|偏好|爱用|习惯用)" + obj + r"$",
            "PREFERENCE",
            "",
            "用户喜欢{0}",
            None,
            "object",
        ),
        _p(
            r"^我(?:也|很|非常|特别|一直)?(?:讨厌|不喜欢|不太喜欢|受不了)" + obj + r"$",
            "PREFERENCE",
            "",
            "用户不喜欢{0}",
            None,
            "object",
        ),
        _p(r"^我是(?:一名|一位)" + obj + r"$", "FACT", "职业", "用户是{0}"),
        _p(r"^我叫" + obj + r"$", "FACT", "名字", "用户的名字是{0}", "permanent", "value"),
        # 我的电脑不是 Mac says what the value is not
        _p(
            r"^我的([^，。]{1,10}?)(?<![不没])是" + obj + r"$",
            "FACT",
            "{0}",
            "用户的{0}是{1}",
            None,
            "attribute",
        ),
        _p(r"^我(?:住在|在)(.{1,30}?)(?:工作|上班)$", "FACT", "工作地点", "用户在{0}工作"),
        _p(r"^我住在" + obj + r"$", "FACT", "住址", "用户住在{0}"),
        _p(
            r"^我(?:平时|一般|主要|日常|现在|一直|也)?(?:在用|正在用|使用|用的是|用(?![了过来于着的]))"
            + obj
            + r"$",
            "FACT",
            "",
            "用户使用{0}",
            None,
            "object",
        ),
    )


# --- what counts as a statement ---------------------------------------------------


@cache
def _res() -> dict[str, re.Pattern[str]]:
    cjk = r"\u4e00-\u9fff"
    return {
        "fence": re.compile(r"```.*?(?:```|\Z)", re.DOTALL),
        # Chinese punctuation always ends a sentence; . ! ? only before a space or the
        # end, so paths, versions and URLs stay whole.
        "sentence": re.compile(r"[。！？\n]+|[.!?]+(?=\s|$)"),
        # Inside a sentence: Chinese commas (not the list comma 、) and semicolons;
        # "word: "; and an English
        # comma or "and/but" that opens a new clause about the speaker (", and I …").
        "clause": re.compile(
            r"[，；;]+|：|:(?=\s)|,(?=\s*[" + cjk + r"])"
            r"|,\s*(?:(?:and|but|so)\s+)?(?=(?:i|i'm|i've|my)\b)"
            r"|\s+(?:and|but)\s+(?=(?:i|i'm|my)\b)",
            re.IGNORECASE,
        ),
        "filler": re.compile(
            r"^(?:(?:also|and|but|so|btw|by the way|oh|ok|okay|well|fyi|just so you know"
            r"|from now on|going forward|in (?:the )?future|hi|hey|hello)[,:!]?\s+"
            r"|(?:另外|还有|对了|顺便说一下|顺便说一句|顺便|以后|今后|从现在开始|从今以后|而且|并且)"
            r"[，,：:]?\s*)+",
            re.IGNORECASE,
        ),
        "question_en": re.compile(
            r"^(?:what|what's|whats|where|where's|which|who|who's|whom|whose|why|how|how's|when)\b"
            r"|^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might"
            r"|have|has|had)(?:n't)?\s+(?:i|you|we|they|he|she|it|my|your|our|the|this|that"
            r"|these|those|there|anyone|someone)\b",
            re.IGNORECASE,
        ),
        "question_zh": re.compile(
            r"什么|哪(?!怕)|谁|怎么|怎样|为什么|为何|是不是|能不能|可不可以|会不会|有没有"
            r"|要不要|对不对|好不好|行不行|多少|几点|几个|来着|吗\W*$"
        ),
        "hypothetical": re.compile(
            r"^(?:if|suppose|supposing|imagine|assuming|assume|what if|even if|unless"
            r"|in case|let's say)\b|^(?:如果|假如|假设|要是|万一|假使|倘若|若是|即使|就算|哪怕)",
            re.IGNORECASE,
        ),
        "speech": re.compile(
            r"(?:(?<!小)说|讲|告诉我|提到|提过|写着|写道|表示|提醒我|叮嘱我|嘱咐我)(?:过|了)*$"
            r"|\b(?:said|says|told me|tells me|wrote|writes|mentioned)$",
            re.IGNORECASE,
        ),
        "own_speech": re.compile(
            r"^(?:我|i)(?:早就|都|已经|刚才|之前|刚刚|一直|\s)*(?:说|讲|提|said)"
        ),
        # a Chinese clause that continues the speaker's previous one without repeating 我
        "carries_subject": re.compile(
            r"^(?:在|平时|一般|主要|也|还|住在|用|喜欢|不喜欢|讨厌|偏好|习惯|最喜欢|比较|很|非常"
            r"|是一名|是一位)"
        ),
        "deictic": re.compile(
            r"^(?:this|that|these|those|it|them|you|your|how|what|the way)\b"
            r"(?!\s+(?:when|if|whenever)\b)|^[这那它你]",
            re.IGNORECASE,
        ),
        "discourse": re.compile(
            r"\b(?:question|questions|point|guess|concern|problem|issue|idea|thought|thoughts"
            r"|understanding|plan|bad|mistake|fault|suggestion|answer|reason|worry|feeling"
            r"|impression|take|view|opinion|assumption|hope|request|intention|excuse)$"
            r"|(?:意思|问题|想法|理解|看法|建议|观点|猜测|疑问|意见|担心|感觉|猜想|计划|打算"
            r"|要求|请求|回答|答案|原因|错|锅)$",
            re.IGNORECASE,
        ),
        "negated": re.compile(r"^(?:not|no longer|never)\b", re.IGNORECASE),
        # an instruction starts with a verb: "always the same error" is a complaint
        "not_a_verb": re.compile(r"^(?:the|a|an|this|that|these|those|my|your)\b", re.I),
        "interjection": re.compile(
            r"^(?:mind|worry|worries|fret|panic|mention it|be sorry)\b"
            r"|^(?:担心|客气|着急|介意|在意|紧张|难过|生气|害怕)",
            re.IGNORECASE,
        ),
        "name_like": re.compile(r"^\S*[A-Z0-9]|^\S+\s+\S*[A-Z0-9]"),
    }


class Clause(NamedTuple):
    text: str
    question: bool  # ends with ? / ？ or reads as one
    quoted: bool  # reported speech or inside a hypothetical: not the speaker's own claim
    carried: str  # the clause with the sentence's subject 我 restored, or ""


def _cut(text: str, splitter: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """``(piece, the delimiter after it)`` for each piece of ``text``."""
    start = 0
    for found in splitter.finditer(text):
        yield text[start : found.start()], found.group()
        start = found.end()
    yield text[start:], ""


def _clean(part: str) -> str:
    part = part.strip(" \t,，、:：\"'“”`")
    return _res()["filler"].sub("", part).strip(" \t,，、:：\"'“”")


def clauses(text: str) -> Iterator[Clause]:
    """The clauses of ``text`` with what :func:`from_text` needs to judge them: code
    blocks are dropped; each clause knows whether it asks, reports someone else's words
    or hangs on a condition."""
    res = _res()
    text = res["fence"].sub("\n", text)
    for sentence, end in _cut(text, res["sentence"]):
        quoted = False
        speaker_clause = False  # an earlier clause of this sentence opened with 我
        pieces = list(_cut(sentence, res["clause"]))
        for number, (raw, delimiter) in enumerate(pieces):
            part = _clean(raw)
            if not part:
                continue
            last = number == len(pieces) - 1
            stop = end if last else delimiter
            if res["hypothetical"].match(part):
                quoted = True
            question = (
                "?" in stop
                or "？" in stop
                or bool(res["question_en"].match(part))
                or bool(res["question_zh"].search(part))
            )
            carried = ""
            if speaker_clause and res["carries_subject"].match(part):
                carried = "我" + part
            if len(part) <= MAX_SENTENCE:
                yield Clause(part, question, quoted, carried)
            if res["speech"].search(part) and not res["own_speech"].match(part):
                quoted = True  # what follows is someone else's word
            speaker_clause = speaker_clause or part.startswith("我")


def sentences(text: str) -> Iterator[str]:
    """The text's sentences and clauses, in order (for summaries)."""
    for part in re.split(r"[。！？；;，\n]+|[.!?]+(?=\s|$)", text):
        part = part.strip(" \t,，、:：\"'“”")
        if 2 <= len(part) <= MAX_SENTENCE:
            yield part


def _acceptable(pattern: Pattern, groups: list[str]) -> bool:
    """Whether what ``pattern`` captured is a lasting statement (see the module doc)."""
    res = _res()
    if pattern.check == "rule":
        return not res["interjection"].match(groups[0]) and not res["not_a_verb"].match(groups[0])
    if pattern.check == "object":
        return not res["deictic"].match(groups[0])
    if pattern.check == "name":
        return bool(res["name_like"].match(groups[0])) and not res["deictic"].match(groups[0])
    if pattern.check == "attribute":
        return not res["discourse"].search(groups[0]) and not res["negated"].match(groups[1])
    if pattern.check == "value":
        return not res["negated"].match(groups[0])
    return True


def _draft(clause: str) -> Draft | None:
    for pattern in _patterns():
        found = pattern.regex.match(clause)
        if found is None:
            continue
        groups = [g.strip() for g in found.groups()]
        if not _acceptable(pattern, groups):
            return None
        return Draft(
            content=pattern.content.format(*groups),
            type=pattern.type,
            subject="user" if pattern.content[:1].isascii() else "用户",
            predicate=pattern.predicate.format(*groups).lower(),  # "" for lists
            duration=pattern.duration,
            source=SOURCE,
        )
    return None


def from_text(text: str) -> list[Draft]:
    """The drafts the user's ``text`` states, in order, at most one per clause."""
    drafts = []
    for clause in clauses(text):
        if clause.question or clause.quoted or len(clause.text) < 2:
            continue
        draft = _draft(clause.text) or (_draft(clause.carried) if clause.carried else None)
        if draft is not None:
            drafts.append(draft)
    return drafts


def from_tool_results(
    tool_results: list[dict[str, Any]], tool_names: dict[str, str]
) -> list[Draft]:
    """ERROR memories from failed tool results: which tool failed, and how."""
    drafts = []
    for result in tool_results:
        if not result.get("is_error"):
            continue
        name = tool_names.get(result.get("tool_use_id") or "", "tool")
        first_line = next(
            (line for line in str(result["content"]).splitlines() if line.strip()), ""
        )
        drafts.append(
            Draft(
                content=f"{name} failed: {first_line.strip()[:MAX_SENTENCE]}",
                type="ERROR",
                subject=name,
                predicate="error",
                source=SOURCE,
            )
        )
    return drafts


def from_turn(
    role: str, content: str, tool_results: list[dict[str, Any]], tool_names: dict[str, str]
) -> list[Draft]:
    drafts = from_text(content) if role == "user" else []
    return drafts + from_tool_results(tool_results, tool_names)


def from_records(records: list[dict[str, Any]]) -> list[Draft]:
    """Drafts from a stretch of JSONL records (tool names resolved within it)."""
    names = {call.get("id"): call["name"] for r in records for call in r.get("tool_calls") or []}
    found: list[Draft] = []
    for record in records:
        found += from_turn(
            record["role"], record.get("content") or "", record.get("tool_results") or [], names
        )
    return found
