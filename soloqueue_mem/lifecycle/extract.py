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
from datetime import UTC, datetime, time, timedelta
from functools import cache
from typing import Any, NamedTuple

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.lifecycle import tool_failure
from soloqueue_mem.lifecycle.patterns import Pattern, patterns
from soloqueue_mem.lifecycle.vocabulary import MANY, USER, Vocabulary, vocabulary
from soloqueue_mem.lifecycle.when import future_day
from soloqueue_mem.memory.store import Draft

SOURCE = "rules"
MAX_SENTENCE = 200
PLAN_MARGIN = timedelta(days=3)  # a plan is kept this long after its day
_PEOPLE = (
    r"女儿|儿子|孩子|宝宝|老婆|老公|爱人|对象|朋友|同事|妈|爸|哥|姐|弟|妹"
    r"|daughter|son|kid|wife|husband"
)


# --- what counts as a statement ---------------------------------------------------


@cache
def _res() -> dict[str, re.Pattern[str]]:
    cjk = r"\u4e00-\u9fff"
    return {
        "fence": re.compile(r"```.*?(?:```|\Z)", re.DOTALL),
        # Chinese punctuation always ends a sentence; . ! ? only before a space or the
        # end, so paths, versions and URLs stay whole.
        # "Prof. Okafor" and "Dr. Li" are one sentence.
        "sentence": re.compile(
            r"[。！？\n]+|(?<!\bProf)(?<!\bDr)(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bSt)[.!?]+(?=\s|$)"
        ),
        # Inside a sentence: Chinese commas (not the list comma 、) and semicolons;
        # "word: "; and an English
        # comma or "and/but" that opens a new clause about the speaker (", and I …").
        "clause": re.compile(
            r"[，；;]+|：|:(?=\s)|,(?=\s*[" + cjk + r"])"
            r"|,\s*(?:(?:and|but|so)\s+)?(?=(?:i|i'm|i've|my)\b)"
            r"|\s+(?:and|but)\s+(?=(?:i|i'm|my)\b)"
            r"|\s*(?:——|—|–)\s*|\s+-\s+",
            re.IGNORECASE,
        ),
        "filler": re.compile(
            r"^(?:(?:also|and|but|so|btw|by the way|oh|ok|okay|well|fyi|just so you know"
            r"|from now on|going forward|in (?:the )?future|hi|hey|hello|actually|no|nope"
            r"|correction|sorry|wait|hi again|good morning|morning|quick reminder|one more thing"
            r"|nice|thanks|update)[,:!]?\s+"
            r"|(?:另外|还有|对了|顺便说一下|顺便说一句|顺便|以后|今后|从现在开始|从今以后|而且|并且"
            r"|其实|不对|更正一下|更正|说错了|哦|噢|不过|你好|您好|早上好|嗨|哈喽|嗯+|好的)"
            r"[，,：:～~!！]?\s*)+",
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
        "speaker": re.compile(r"^(?:我|(?:i|i'm|i've|my)\b|\S+ here\b)", re.IGNORECASE),
        "own_speech": re.compile(
            r"^(?:我|i)(?:早就|都|已经|刚才|之前|刚刚|一直|\s)*(?:说|讲|提|said)"
        ),
        # a Chinese clause that continues the speaker's previous one without repeating 我
        "carries_subject": re.compile(
            r"^(?:在|平时|一般|主要|也|还|住在|用|喜欢|不喜欢|讨厌|偏好|习惯|最喜欢|比较|很|非常"
            r"|是一名|是一位|是(?!不)|负责|主要负责|老家|现在住在|搬到|现在在|目前在)"
        ),
        "deictic": re.compile(
            r"^(?:this|that|these|those|it|them|you|your|how|what|the way)\b"
            r"(?!\s+(?:when|if|whenever)\b)|^[这那它]|^你的?(?:这|那|刚)|^你.{0,2}$",
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
            r"|^(?:担心|客气|着急|介意|在意|紧张|难过|生气|害怕)|^忘(?:了|记了?)?$",
            re.IGNORECASE,
        ),
        "name_like": re.compile(r"^\S*[A-Z0-9]|^\S+\s+\S*[A-Z0-9]"),
        "stale": re.compile(
            r"\s+(?:right now|now|currently|at the moment|anymore|any more|these days|nowadays"
            r"|already|recently|last (?:week|month|year|sprint|quarter)|a while ago|yesterday"
            r"|today)$|^now\s+|\s*(?:了|啦)$",
            re.IGNORECASE,
        ),
        "role": re.compile(
            r"\b(?:engineer|developer|dev|programmer|designer|manager|lead|scientist|analyst"
            r"|student|teacher|professor|researcher|architect|admin|administrator|sre|consultant"
            r"|founder|cto|ceo|pm|writer|doctor|nurse|lawyer|freelancer|intern|tester|owner"
            r"|maintainer|director|head of \w+)s?$"
            r"|(?:工程师|开发|开发者|程序员|设计师|经理|产品|学生|研究生|博士生|老师|教师|研究员"
            r"|架构师|运维|测试|分析师|科学家|医生|律师|负责人|主管|总监|实习生|创始人|站长"
            r"|前端|后端|全栈)$",
            re.IGNORECASE,
        ),
        # a plan: the speaker's intention (the day is found by lifecycle.when)
        "plan": re.compile(
            r"\b(?:i|we)\b.*\b(?:plan|plans|planning|going to|gonna|intend|intends|will"
            r"|scheduled|have to|need to)\b|\b(?:i|we)(?:'ll|'m \w+ing|'re \w+ing| am \w+ing"
            r"| are \w+ing)\b"
            r"|(?<![不需只主重])要(?![求是])|打算|计划|准备|将要|安排|预计|得去|会去",
            re.IGNORECASE,
        ),
        "han": re.compile(r"[\u4e00-\u9fff]"),
        # what a message ends with that says nothing: laughter, emoji
        "laugh": re.compile(r"(?:\s*(?:lol|haha+|hh+|哈+|[\U0001F300-\U0001FAFF\u2600-\u27BF]))+$"),
        # a value ends where a new clause starts: "orca, it's an 8×A100 machine"
        "value_end": re.compile(r",\s+(?=[a-z]|\d+\s+[a-z]).*$"),
        # the topic the next clauses speak about: "about the timeout", "关于 retry 配置",
        # "ticket 系统我们已经不用 Jira 了"
        # A correction names what it corrects: "scratch that about Metabase", "I got the
        # churn window wrong", "staging 的端口不是 8443", "max_client_conn 换掉了".
        "fix": re.compile(
            r"^(?:scratch that|quick correction|correction|a correction)"
            r" (?:about|on|regarding|to) (?:the |our |my )?(?P<fix>.{2,40})$"
            r"|^(?:i|we) (?:got|had|said) (?:the |our |my )?(?P<wrong>.{2,40}?) wrong$"
            r"|^(?P<zh>[^，。我你他她它]{2,30}?)\s*(?:其实)?(?:不是|并不是|换掉了|改掉了|变了)"
            r"\s*[^，。]{0,20}$",
            re.IGNORECASE,
        ),
        "topic": re.compile(
            r"^(?:about|regarding|as for) (?:the |our |my )?(?P<topic>.+)$"
            r"|^关于(?:上次|之前)?(?:那个|这个)?(?P<topic_zh>.+?)$"
            r"|^(?P<dropped>[^，。我你他她它]+?)\s*(?:我们|我|团队)?(?:已经|早就|现在)?"
            r"(?:不用|不再用|没在用)\s*.+$",
            re.IGNORECASE,
        ),
        # a clause that goes on about what the one before named: "RabbitMQ, 跑在 5673 端口"
        "goes_on": re.compile(r"^(?:跑在|运行在|部署在|托管在|监听|开在|在\s*\d)"),
        # a rule for the task at hand (24 h) rather than about how to work
        "task": re.compile(
            r"\b(?:this time|for now|today|for this task|in this task|right now|this session"
            r"|for this (?:pr|change|commit|branch))\b"
            r"|这次|这回|本次|今天|暂时|这个任务|先别|先不要|目前先|这一次",
            re.IGNORECASE,
        ),
        "task_opening": re.compile(
            r"^(?:(?:this time|for now|for this task|today|right now)[,:]?\s+"
            r"|(?:这次|这回|本次|今天|暂时|目前)(?:先)?[，,]?\s*)",
            re.IGNORECASE,
        ),
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
            speaker_clause = speaker_clause or bool(res["speaker"].match(part))


def sentences(text: str) -> Iterator[str]:
    """The text's sentences and clauses, in order (for summaries)."""
    for part in re.split(r"[。！？；;，\n]+|[.!?]+(?=\s|$)", text):
        part = part.strip(" \t,，、:：\"'“”")
        if 2 <= len(part) <= MAX_SENTENCE:
            yield part


def _acceptable(check: str, parts: dict[str, str], words: Vocabulary) -> bool:
    """Whether what a pattern captured is a lasting statement (see the module doc)."""
    res = _res()
    value, attr = parts.get("value", ""), parts.get("attr", "")
    if check == "rule":
        return not res["interjection"].match(value) and not res["not_a_verb"].match(value)
    if check in ("object", "switch"):
        return not res["deictic"].match(value) and not res["negated"].match(value)
    if check == "name":
        return bool(res["name_like"].match(value)) and not res["deictic"].match(value)
    if check == "attribute":
        return not res["discourse"].search(attr) and not res["negated"].match(value)
    if check == "known":
        return words.known(attr) and not res["negated"].match(value)
    if check == "thing":
        return not res["deictic"].match(parts.get("thing", "")) and not res["negated"].match(value)
    if check == "person":
        return value.split()[0].casefold() not in _NOT_NAMES
    if check == "role":
        return _is_role(value)
    if check == "known name":
        return words.known(attr) and bool(res["name_like"].match(value))
    if check == "place":  # "I moved to Berlin", not "we moved to CircleCI"
        return not words.category(value)
    if check == "pet":
        return attr not in ("名字", "名") and not res["deictic"].match(value)
    if check == "value":
        return not res["negated"].match(value)
    return True


def _is_role(text: str) -> bool:
    """ "ML engineer on the vision team", "shop-web 的前端": a role word at the end of
    the phrase, before what it is on or at."""
    return bool(_res()["role"].search(re.sub(r"\s+(?:on|at|in|for|of|with) .*$", "", text)))


_NOT_NAMES = frozenset(
    "ok okay fine sorry not so here back done ready good great sure new happy glad afraid"
    " american british chinese english french german indian japanese korean canadian".split()
)


def _tidy(value: str, single: bool) -> str:
    """A value without the time words that only say it is new ("Helix now", "TiDB 了")
    or laughter; a ``single`` value (one of an attribute) also without the clause that
    follows it ("orca, it's an 8×A100 machine")."""
    res = _res()
    value = res["laugh"].sub("", value)
    if single:
        value = res["value_end"].sub("", value)
    return res["stale"].sub("", res["stale"].sub("", value).strip(" \t,，")).strip(" \t,，")


def _key(
    pattern: Pattern, parts: dict[str, str], words: Vocabulary, topic: str = "", fix: str = ""
) -> tuple[str, str]:
    """The canonical (subject, predicate) of what ``pattern`` matched (see patterns.py);
    a switch that names no known attribute ("上周全部迁到 Linear", "we changed it to
    15 seconds") is about the clause's ``topic`` or the attribute its value names; a
    bare corrected value ("是 9443", "it's 60 days") is about what the clause just
    before said was wrong (``fix``)."""
    spec, value = pattern.predicate, parts.get("value", "")
    subject = words.subject(parts["thing"]) if parts.get("thing") else USER
    if spec == "attr":
        return words.split(parts["attr"])
    if spec == "favorite":
        return USER, "favorite " + words.predicate(parts["attr"])
    if spec == "switch":
        attr = parts.get("attr", "")
        if words.known(attr) or (
            re.fullmatch(r"[a-z][\w .-]*", attr, re.IGNORECASE)
            and not _res()["deictic"].match(attr)
        ):
            return words.split(attr)
        if topic:
            return words.split(topic)
        return USER, words.category(value) or words.category(parts.get("old", ""))
    if spec == "correction":  # "是 9443" right after "staging 的端口不是 8443"
        return words.split(fix) if fix else (USER, words.category(value))
    if spec == "pet":  # one fact per pet ("Miso" and "Nori"); "我女儿叫 Ada" is no pet
        person = re.search(_PEOPLE, parts.get("attr", ""), re.IGNORECASE)
        return (words.subject(value), "pet") if not person else (USER, "")
    if spec == "use":
        category = words.category(value)
        return USER, "" if category in MANY else category
    if spec == "runs":
        if parts.get("thing") and words.known(parts["thing"]):
            return words.split(parts["thing"])
        return subject, "deploy"
    return subject, words.predicate(spec) if spec else ""


def _drafts(clause: str, words: Vocabulary, topic: str = "", fix: str = "") -> list[Draft]:
    """The drafts of the first pattern that matches the clause and passes its guard."""
    for pattern in patterns():
        found = pattern.regex.match(clause)
        if found is None:
            continue
        parts = {k: v.strip() for k, v in found.groupdict().items() if v and v.strip()}
        if "value" in parts:
            parts["value"] = _tidy(parts["value"], bool(pattern.predicate))
        if not parts.get("value") or not _acceptable(pattern.check, parts, words):
            continue  # a plainer pattern may still read it
        if pattern.predicate == "purpose":
            return _purposes(pattern, parts["value"], words)
        tool, _, purpose = parts["value"].partition(" for ")
        if pattern.predicate == "switch" and words.known(purpose):  # "to Vault for secrets"
            parts.update(value=tool, attr=purpose)
        subject, predicate = _key(pattern, parts, words, topic, fix)
        if pattern.predicate in ("switch", "correction") and not predicate:
            return []  # a switch to something unknown names no attribute
        chinese = not pattern.content[:1].isascii() or pattern.content.startswith("{thing}用")
        label = words.label(predicate, chinese) if predicate else parts.get("attr", "")
        content = pattern.content.format_map(
            {"thing": "", "count": "", "field": "", **parts, "label": label, "fix": fix or label}
        )
        draft = Draft(
            content=content[:1].upper() + content[1:],
            type=pattern.type,
            subject=subject,
            predicate=predicate,
            duration=pattern.duration,
            source=SOURCE,
        )
        if parts.get("role") and _is_role(parts["role"]):  # "I'm Alice, the SRE lead"
            role = Draft(f"User is the {parts['role']}", "FACT", USER, "job", source=SOURCE)
            return [draft, role]
        if parts.get("employer"):  # "我在 Finch Pay 做 backend tech lead"
            employer = f"用户在{parts['employer']}工作"
            return [draft, Draft(employer, "FACT", USER, "employer", source=SOURCE)]
        return [draft]
    return []


def _purposes(pattern: Pattern, value: str, words: Vocabulary) -> list[Draft]:
    """ "Grafana for dashboards and PagerDuty for on-call": a fact per tool, keyed on
    what it is for (or, failing that, on what the tool is)."""
    drafts = []
    for part in re.split(r",\s*(?:and\s+)?|\s+and\s+", value):
        tool, _, purpose = part.partition(" for ")
        if not tool.strip() or not purpose.strip():
            continue
        predicate = words.split(purpose)[1] if words.known(purpose) else words.category(tool)
        content = pattern.content.format(value=tool.strip(), attr=purpose.strip())
        drafts.append(Draft(content, pattern.type, USER, predicate, source=SOURCE))
    return drafts


def canonical(draft: Draft, words: Vocabulary) -> Draft:
    """``draft`` (from the model, say) with its subject and predicate in canonical form."""
    if not draft.predicate:
        return draft
    subject, predicate = words.split(draft.predicate)
    if subject == USER and draft.subject:
        subject = words.subject(draft.subject)
    return draft._replace(subject=subject, predicate=predicate)


def _plan(clause: str, now: datetime) -> Draft | None:
    """A plan with a day ("next week we migrate…", "明天要去北京"): a FACT kept until
    ``PLAN_MARGIN`` after the day."""
    if not _res()["plan"].search(clause):
        return None
    day = future_day(clause, now)
    if day is None:
        return None
    until = datetime.combine(day, time(), UTC) + timedelta(days=1) + PLAN_MARGIN
    chinese = bool(_res()["han"].search(clause))
    content = f"计划（{day}）：{clause}" if chinese else f"Plan for {day}: {clause}"
    return Draft(content, "FACT", USER, "", until=until, source=SOURCE)


def _rule_duration(draft: Draft, task: bool) -> Draft:
    """Seed 001: a rule for the task at hand lasts a day, one about how to work stays."""
    if draft.type != "RULE":
        return draft
    return draft._replace(duration="24h" if task else "permanent")


def from_text(
    text: str, now: datetime | None = None, words: Vocabulary | None = None
) -> list[Draft]:
    """The drafts the user's ``text`` states, in order, at most one statement per
    clause. Plans need ``now`` (the turn's time) to resolve their day."""
    words = words or vocabulary()
    res = _res()
    drafts: list[Draft] = []
    topic = named = fix = ""  # what the clauses are about; the name the last statement
    # gave; what the clause just before said was wrong
    for clause in clauses(text):
        if clause.question or clause.quoted or len(clause.text) < 2:
            continue
        task = bool(res["task"].search(clause.text))
        bare = res["task_opening"].sub("", clause.text)
        if named and res["goes_on"].match(bare):
            bare = named + bare
        found = _drafts(bare, words, topic, fix)
        if not found and clause.carried:
            found = _drafts(clause.carried, words, topic, fix)
        if not found and drafts and drafts[-1].predicate == "name" and _is_role(bare):
            found = [Draft(f"User is the {bare}", "FACT", USER, "job", source=SOURCE)]
        fix = _fixed(bare, words)
        topic = _topic(bare, words) or fix or topic
        named = _named(found)
        plan = _plan(clause.text, now) if now is not None else None
        if plan is not None and not any(d.type == "RULE" for d in found):
            found = [plan]  # "下周要迁移到 k8s" is a plan, not yet a switch
        drafts += [_labelled(_rule_duration(d, task), words) for d in found]
    return drafts


def _labelled(draft: Draft, words: Vocabulary) -> Draft:
    """A keyed fact tagged with its attribute in both languages ("deploy-tool",
    "部署工具"): a question in the other language still finds it."""
    if draft.predicate not in words.labels:
        return draft
    names = {draft.predicate, words.label(draft.predicate, chinese=True)}
    return draft._replace(tags=tuple(sorted(n.replace(" ", "-") for n in names)))


def _topic(clause: str, words: Vocabulary) -> str:
    """The known attribute a clause announces as its topic, or ""."""
    found = _res()["topic"].match(clause)
    if found:
        phrase = next(p for p in found.groups() if p)
    else:
        phrase = clause  # a bare attribute: "Prometheus 那个保留期"
    return phrase if words.known(phrase) else ""


def _fixed(clause: str, words: Vocabulary) -> str:
    """What a clause says was wrong ("I got the churn window wrong" -> "churn window"),
    or "". A known value stands for its attribute: "scratch that about Metabase" is
    about the BI tool."""
    found = _res()["fix"].match(clause)
    if found is None:
        return ""
    phrase = next(p for p in found.groups() if p).strip()
    if not words.known(phrase) and words.category(phrase):
        return words.category(phrase)
    return phrase


def _named(drafts: list[Draft]) -> str:
    """The name the last draft gave its attribute ("RabbitMQ", "jade"), or ""."""
    if not drafts or drafts[-1].type != "FACT":
        return ""
    value = re.split(r"是|叫|\bis\b|\bcalled\b", drafts[-1].content)[-1].strip()
    return value if re.fullmatch(r"[\w.\-]{2,30}", value) else ""


def from_tool_results(
    tool_results: list[dict[str, Any]], tool_names: dict[str, str]
) -> list[Draft]:
    """ERROR memories from failed tool results (see ``tool_failure``): which tool
    failed, and how."""
    drafts = []
    for result in tool_results:
        if not tool_failure.failed(result):
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
    record: dict[str, Any], tool_names: dict[str, str], words: Vocabulary | None = None
) -> list[Draft]:
    """Drafts from one JSONL record: the user's statements (plans resolved against the
    turn's own time) and its failed tool results."""
    drafts = []
    if record["role"] == "user":
        said_at = parse_timestamp(record["timestamp"]) if record.get("timestamp") else None
        drafts = from_text(record.get("content") or "", said_at, words)
    return drafts + from_tool_results(record.get("tool_results") or [], tool_names)


def tool_names(records: list[dict[str, Any]]) -> dict[str, str]:
    """Tool call id -> tool name within a stretch of records."""
    return {call.get("id"): call["name"] for r in records for call in r.get("tool_calls") or []}


def from_records(records: list[dict[str, Any]], words: Vocabulary | None = None) -> list[Draft]:
    """Drafts from a stretch of JSONL records (tool names resolved within it)."""
    names = tool_names(records)
    return [draft for record in records for draft in from_turn(record, names, words)]
