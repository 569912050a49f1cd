"""Which known attributes a question asks about, in either language.

Extraction stores an attribute under one language-neutral predicate ("my editor is
Vim" and "我的编辑器是 Helix" are both ``editor``, see
:mod:`soloqueue_mem.lifecycle.vocabulary`), and the memory index holds that predicate.
A question names the attribute in its own words — "我用什么编辑器", "what's my dog
called", "你还记得我叫什么吗" — so recall adds the canonical predicate and its Chinese
label to what it looks for in memories: a fact said in one language is found by a
question in the other. The words below are how questions ask; every alias of the
vocabulary (and of ``config.toml``'s ``[predicates]``) asks too.
"""

from __future__ import annotations

import re
from functools import cache

from soloqueue_mem.lifecycle.vocabulary import Vocabulary

ASKED: dict[str, tuple[str, ...]] = {
    "name": ("name", "called", "call me", "叫什么", "名字", "姓名", "称呼", "怎么称呼"),
    "pet": ("pet", "pets", "dog", "dogs", "cat", "cats", "puppy", "kitten", "宠物", "狗", "猫"),
    "birthday": ("birthday", "born", "生日", "出生"),
    "birth year": ("born", "how old", "age", "出生", "哪年", "多大", "年龄", "几几年"),
    "city": (
        "live",
        "living",
        "city",
        "moved",
        "based in",
        "住在",
        "住哪",
        "城市",
        "搬家",
        "搬到",
        "生活",
    ),
    "timeout": ("timeout", "time out", "timing out", "times out", "超时"),
    "hometown": ("originally", "hometown", "grew up", "grow up", "老家", "家乡", "哪里人", "长大"),
    "diet": ("diet", "dietary", "food", "eat", "vegetarian", "饮食", "忌口", "吃素", "不能吃"),
    "allergy": ("allergy", "allergies", "allergic", "food", "过敏", "不能吃"),
    "partner": ("husband", "wife", "partner", "spouse", "老公", "老婆", "爱人", "对象", "伴侣"),
    "education": ("school", "university", "college", "degree", "studied", "大学", "学校", "学位"),
    "job": (
        "job",
        "role",
        "position",
        "for a living",
        "degree",
        "职业",
        "岗位",
        "职位",
        "做什么工作",
        "学位",
    ),
    "employer": ("company", "employer", "work for", "公司", "单位"),
    "editor": ("editor", "ide", "编辑器"),
    "database": ("database", "db", "数据库"),
    "port": ("port", "端口"),
    "language": ("language", "语言"),
    "timezone": ("timezone", "time zone", "时区"),
    "deploy": ("deploy", "deployed", "hosted", "hosting", "部署"),
}


# Questions about a kind of memory rather than one attribute: "how do I like answers",
# "我有什么规矩", "what failed last time".
ASKED_TYPES: dict[str, tuple[str, ...]] = {
    "PREFERENCE": (
        "like",
        "prefer",
        "preference",
        "preferences",
        "favorite",
        "favourite",
        "enjoy",
        "hate",
        "dislike",
        "want",
        "style",
        "喜欢",
        "偏好",
        "爱",
        "讨厌",
        "习惯",
        "想要",
        "风格",
    ),
    "RULE": (
        "rule",
        "rules",
        "never",
        "always",
        "allowed",
        "must",
        "should i",
        "can i",
        "ok to",
        "okay to",
        "规矩",
        "规则",
        "规定",
        "不要",
        "必须",
        "禁止",
        "不能",
        "怎么办",
        "怎么处理",
        "应该",
    ),
    "ERROR": (
        "error",
        "errors",
        "fail",
        "failed",
        "failure",
        "broke",
        "错误",
        "失败",
        "报错",
        "挂了",
    ),
}


def asked_types(query: str) -> list[str]:
    """The memory types ``query`` asks about (PREFERENCE, RULE, ERROR). Preferences
    only when the question is about the user ("how do I like …", "我喜欢…"): "what
    does Melanie like" asks about someone else."""
    text = query.casefold()
    return [
        kind
        for kind, pattern in _type_patterns().items()
        if pattern.search(text) and (kind != "PREFERENCE" or _self().search(text))
    ]


@cache
def _self() -> re.Pattern[str]:
    return re.compile(r"\b(?:i|me|my|mine|i'm|i'd)\b|我(?!们)")


@cache
def _type_patterns() -> dict[str, re.Pattern[str]]:
    return {kind: _alternatives(cues) for kind, cues in ASKED_TYPES.items()}


def _alternatives(cues: set[str] | tuple[str, ...]) -> re.Pattern[str]:
    """Any of ``cues``; Latin ones as whole words."""
    return re.compile(
        "|".join(
            rf"\b{re.escape(cue)}\b" if cue.isascii() else re.escape(cue)
            for cue in sorted(cues, key=len, reverse=True)
            if len(cue) >= 2 or not cue.isascii()
        )
    )


def asked(query: str, vocabulary: Vocabulary) -> list[tuple[str, str]]:
    """``(canonical predicate, its Chinese label)`` for each attribute ``query`` asks
    about, in the order of the table. Looked up, not matched: the query's words and
    word pairs, and its CJK substrings, against one table of cues."""
    cues = _cues(tuple(sorted(vocabulary.predicates.items())))
    pieces = _pieces(query.casefold())
    found = dict.fromkeys(c for piece in pieces if piece in cues for c in cues[piece])
    return [(canonical, vocabulary.label(canonical, chinese=True)) for canonical in found]


MAX_CUE_WORDS = 3
MAX_CUE_CHARS = 6


def _pieces(text: str) -> list[str]:
    """Runs of up to three Latin words, and CJK substrings of two to six characters."""
    words = re.findall(r"[a-z0-9][a-z0-9/'-]*", text)
    pieces = [
        " ".join(words[i : i + n]) for n in range(1, MAX_CUE_WORDS + 1) for i in range(len(words))
    ]
    for run in [] if text.isascii() else re.findall(r"[\u3400-\u9fff]+", text):
        pieces += [
            run[i : i + n] for n in range(1, MAX_CUE_CHARS + 1) for i in range(len(run) - n + 1)
        ]
    return pieces


@cache
def _cues(aliases: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, ...]]:
    """Every question word and alias -> the canonical predicates it asks about: "born"
    asks for a birthday and a birth year, "degree" for a school and a job."""
    table: dict[str, dict[str, None]] = {}
    for canonical, words in ASKED.items():
        for word in words:
            table.setdefault(word, {})[canonical] = None
    for alias, canonical in aliases:
        if len(alias) >= 2 and alias not in table:  # one character (云) is in too many words
            table[alias] = {canonical: None}
    return {cue: tuple(canonicals) for cue, canonicals in table.items()}
