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
from datetime import date, datetime, timedelta
from functools import cache
from typing import Any, NamedTuple

from soloqueue_mem.clock import parse_timestamp
from soloqueue_mem.lifecycle import tool_failure
from soloqueue_mem.lifecycle.lessons import lessons
from soloqueue_mem.lifecycle.own_words import PLAN_MARGIN, own_words, plan_expiry, planned
from soloqueue_mem.lifecycle.patterns import Pattern, patterns
from soloqueue_mem.lifecycle.restated import said_once
from soloqueue_mem.lifecycle.vocabulary import MANY, PERSONAL, PETS, USER, Vocabulary, vocabulary
from soloqueue_mem.lifecycle.when import DATE_FIRST_REACH, future_day, opens_with_date
from soloqueue_mem.memory.store import Draft
from soloqueue_mem.text.cue import is_correction
from soloqueue_mem.text.handover import handover_hints, leaving

SOURCE = "rules"
MAX_SENTENCE = 200
# the agent told to act on what was just said: "…, put it in my calendar", "…, write
# that down" (a clause of its own, see ``clause``); not "remind me to…", which says what
# the plan is for
TOLD = r"(?:put|add|write|note|save|book|schedule) (?:it|that|this|them)\b"
_PEOPLE = (  # the speaker's family: "奶奶今年九十了" is about someone who matters
    r"奶奶|爷爷|外婆|外公|女儿|儿子|孩子|宝宝|老婆|老公|爱人|对象|妈|爸|哥|姐|弟|妹"
    r"|\b(?:daughter|son|kids?|wife|husband|partner|mom|dad|mother|father|parents"
    r"|in-laws|brother|sister|baby|twins?)\b"
)
# who owns or is on call for what: "Alice is on call this week", "Dev owns search"
_DUTY = (
    r"(?i:\bon[- ]?call\b|\bowns\b|\bowner of\b|\bresponsible for\b|\bin charge of\b"
    r"|\bmaintains\b|\bmaintainer of\b)"
)


# --- what counts as a statement ---------------------------------------------------


@cache
def _res() -> dict[str, re.Pattern[str]]:
    cjk = r"\u4e00-\u9fff"
    return {
        "fence": re.compile(r"```.*?(?:```|\Z)", re.DOTALL),
        # Chinese punctuation always ends a sentence; . ! ? only before a space or the
        # end, so paths, versions and URLs stay whole.
        # "Prof. Okafor" and "Dr. Li" are one sentence. An emoji before a space ends
        # one as a full stop does: "…只能吃白饭😂 说正事，报关那边…" says two things.
        "sentence": re.compile(
            r"[。！？\n]+|(?<!\bProf)(?<!\bDr)(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bSt)[.!?]+(?=\s|$)"
            r"|[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s+"
        ),
        # Inside a sentence: Chinese commas (not the list comma 、) and semicolons;
        # "word: "; and an English
        # comma or "and/but" that opens a new clause about the speaker (", and I …").
        "clause": re.compile(
            r"[，；;]+|：|:(?=\s)|,(?=\s*[" + cjk + r"])"
            r"|,\s*(?:(?:and|but|so)\s+)?(?=(?:i|i'm|i've|my)\b)"
            # a request after a statement: "My dog is called Rex, could you remember that?"
            r"|,\s*(?=(?:(?:can|could|would|will) you|please)\b)"
            # … or told to act on it: "…, put it in my calendar", "…, write that down"
            rf"|,\s*(?={TOLD})"
            r"|\s+(?:and|but)\s+(?=(?:i|i'm|my)\b)"
            r"|\s*(?:——|—|–)\s*|\s+-\s+",
            re.IGNORECASE,
        ),
        "filler": re.compile(
            r"^(?:(?:also|and|but|so|btw|by the way|oh|ok|okay|well|fyi|just so you know"
            r"|from now on|going forward|in (?:the )?future|hi|hey|hello|actually"
            r"|correction|sorry|wait|hi again|good morning|morning|quick reminder|one more thing"
            r"|nice|thanks|update|lol|haha+|hah)(?:[,:!，]\s*|\s+)|(?:no|nope)[,!]\s*"
            # ("no caffeine" is no filler; 早 followed by a pause greets, as "morning," does:
            # 早～, 早啊～, 早 出事了, not 早上 or 早点)
            r"|(?:另外|还有|对了|顺便说一下|顺便说一句|顺便|以后|今后|从现在开始|从今以后|而且|并且"
            r"|其实|不对|更正一下|更正|说错了|哦|噢|不过|你好|您好|早上好|早安|早[啊呀]?(?=[～~，,!！\s])|嗨|哈喽"
            r"|嗯+|好的)"
            r"[，,：:～~!！]?\s*)+",
            re.IGNORECASE,
        ),
        "question_en": re.compile(
            r"^(?:what|what's|whats|where|where's|which|who|who's|whom|whose|why|how|how's)\b"
            r"|^when\s+(?:is|are|was|were|do|does|did|will|can|should)\b"
            r"|^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might"
            r"|have|has|had)(?:n't)?\s+(?:i|you|we|they|he|she|it|my|your|our|the|this|that"
            r"|these|those|there|anyone|someone)\b",
            re.IGNORECASE,
        ),
        "question_zh": re.compile(
            r"什么|哪(?!怕)|谁|怎么|怎样|为什么|为何|是不是|能不能|可不可以|会不会|有没有"
            r"|要不要|对不对|好不好|行不行|多少|几点|几个|来着|啥|吗\W*$"
        ),
        "hypothetical": re.compile(
            r"^(?:if|suppose|supposing|imagine|assuming|assume|what if|even if|unless"
            r"|in case|let's say)\b|^(?:如果|假如|假设|要是|万一|假使|倘若|若是|即使|就算|哪怕)",
            re.IGNORECASE,
        ),
        "speech": re.compile(
            r"(?:(?<!小)说|讲|告诉我|提到|提过|写着|写道|表示|提醒我|叮嘱我|嘱咐我)(?:过|了)*$"
            r"|\b(?:said|says|told me|tells me|wrote|mentioned)$",
            re.IGNORECASE,
        ),
        "speaker": re.compile(r"^(?:我|(?:i|i'm|i've|my)\b|\S+ here\b)", re.IGNORECASE),
        "own_speech": re.compile(
            r"^(?:我|i)(?:早就|都|已经|刚才|之前|刚刚|一直|\s)*(?:说|讲|提|said)"
        ),
        # a Chinese clause that continues the speaker's previous one without repeating 我
        "carries_subject": re.compile(
            r"^(?:在|平时|一般|主要|也|还|住在|用|喜欢|不喜欢|讨厌|偏好|习惯|最喜欢|比较|很|非常"
            r"|是一名|是一位|是(?!不)|负责|主要负责|老家|现在住在|常驻|搬到|现在在|目前在)"
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
        # a judgement of the moment, no value: "the account name is wrong"
        "judgement": re.compile(
            r"^(?:wrong|right|correct|incorrect|off|broken|fine|ok|okay|weird|bad|good|great"
            r"|outdated|stale|错的?|不对|对的?|坏了|有问题)$",
            re.IGNORECASE,
        ),
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
        # a job that names where it is held: "禾麦烘焙的运营经理", "在 Finch Pay 做 tech
        # lead", "product manager at Acme"
        "employer_named": re.compile(r"\S的|在\s*\S.*(?:做|当|担任|干)|\b(?:at|for)\s+\S"),
        # a plan: the speaker's intention (the day is found by lifecycle.when), or a
        # reminder they ask for ("sponsor call Wednesday 2pm, remind me to …", "提醒我明天
        # 给妈妈打电话": what it reminds of happens that day)
        "plan": re.compile(
            r"\b(?:i|we)\b.*\b(?:plan|plans|planning|going to|gonna|intend|intends|will"
            r"|scheduled|have to|need to)\b|\b(?:i|we)(?:'ll|'m \w+ing|'re \w+ing| am \w+ing"
            r"| are \w+ing)\b|\bremind me\b"
            r"|(?<![不需只主重])要(?![求是])|打算|计划|准备|将要|安排|预计|得去|会去"
            r"|(?<![他她])提醒(?:我|一下)",
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
        # what makes a sentence no statement of the user's: a request for the task at
        # hand ("帮我写个正则", "Translate 'see you' into Spanish"), quoted text
        "request": re.compile(
            r"^(?:请|麻烦)?你?(?:帮|给我)|^(?:请)?你?(?:再|先)?(?:把|写|改|翻译|总结"
            r"|解释|提炼|优化|润色|算|查|看看|看下|讲讲|说说|列|试试|重新|跑一下)"
            r"|^(?:please\s+)?(?:write|make|try|explain|translate|summari[sz]e|rewrite|show"
            r"|give|help|tell|fix|check|run|add|create|generate|find|list|compare|refactor"
            r"|convert|draft|review|let's|let us|go ahead|continue|do)\b"
            r"|^(?:can|could|would|will) you\b"
            r"|^(?:i'd like|i would like|i want you to|i need you to|let me)\b"
            rf"|^{TOLD}",
            re.IGNORECASE,
        ),
        # ... also later in the sentence: "team lunch friday the 11th, can you put it in
        # the calendar" asks the agent to act on what it says
        "asks_help": re.compile(
            r"(?<![别要])(?:帮我|帮忙|替我)|一下.*看看|^(?:give|tell|show) me\b"
            r"|\b(?:can|could|would|will) you\b",
            re.IGNORECASE,
        ),
        # a clause after a statement that asks the agent to act on it: "…，帮我记一下",
        # "…，麻烦提醒我", "…, please keep that in mind", "…，点餐的时候注意一下好吗？"
        # (not 请求 or 麻烦的是; a bare "好吗" or "可以吗" asks whether the statement is
        # agreed, the statement is then a proposal)
        "told": re.compile(f"^{TOLD}", re.IGNORECASE),
        "request_after": re.compile(
            r"^(?:请(?![假客求])|麻烦(?![的了])|劳驾|please\b)|\w{2}(?:好吗|好不好)\W*$",
            re.IGNORECASE,
        ),
        # quoted text, someone else's word, what a value is not
        "not_said": re.compile(
            r"[“”\"「」]|\b(?!(?:i|we)\b)\w+ (?:said|says|told|thinks|mentioned)\b"
            r"|(?:他|她|他们|同事|朋友|老板|领导|别人|有人|听)说|\b(?:is|are) (?:not|no longer)\b"
            r"|\b(?:isn't|aren't)\b|的[^，。]{1,10}?不是",
            re.IGNORECASE,
        ),
        "statement_zh": re.compile(
            r"的是|在|由|用|负责|归|每|定|设|叫|过敏|喜欢|讨厌|不吃|不喝|值班|维护"
        ),
        # a sentence no pattern reads: what says it is a standing rule, not a fact
        "rule_marker": re.compile(
            r"以后|今后|从现在开始|别|不要|回答|回复|叫我|称呼我"
            r"|\b(?:always|never|from now on|going forward|call me|don't|do not)\b"
            r"|\b(?:answer|reply|respond) (?:in|with)\b",
            re.IGNORECASE,
        ),
        # ... and what says it is a reaction to the moment, or names something
        "of_the_moment": re.compile(
            r"^(?:this|that|it|these|those|you)\b(?!\s+(?:week|month|year|quarter|sprint))"
            # the work is standing: "this project", "this shop project", "这个商城项目"
            r"(?!\s+(?:[\w.-]+\s+){0,2}(?:project|repo|repository|codebase|app|service)\b)"
            r"|^(?:that's|it's|you're)\b|^[那它你哈]|^这(?![周月季年]|个?\w{0,4}?(?:项目|仓库|服务))"
            r"|^我是(?:想)?说|^i mean\b"
            r"|^(?:my bad|i think|i guess|i feel like|i'm not sure|i am not sure)\b"
            r"|^(?:我的天|我觉得|我猜)|昨天|前天|\b(?:yesterday|last night)\b"
            r"|^(?:i'm|i am) (?:so |very |really )?(?:happy|glad|sorry|fine|ok|okay|good|great"
            r"|sure|done|ready|back|here|tired|busy|confused|stuck|lost|on a call|afk)\b",
            re.IGNORECASE,
        ),
        "names_something": re.compile(
            r"\d|我|(?<![\w'])(?i:i|i'm|i've|my|me|we|we're|our|us)(?![\w'])"
            r"|(?<=\S )[A-Z]|[A-Za-z]{2,}.*[\u4e00-\u9fff]|[\u4e00-\u9fff].*[A-Za-z]{2,}"
            r"|" + _PEOPLE + r"|" + _DUTY,
        ),
        "bare_pronoun_zh": re.compile(r"(?:我|咱)们?的?[\s\W]*"),
        "reaction_end": re.compile(
            r"[吧啊呀啦哦～~]$|(?:\s*(?:lol|haha+|hh+|哈+|[\U0001F300-\U0001FAFF\u2600-\u27BF]))+$"
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
    sentence: str = ""  # the whole sentence the clause is part of, as said
    asked: bool = False  # the sentence is a statement a request followed (see clauses)


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
    or hangs on a condition. A statement followed by a request ("My dog is called Rex,
    could you remember that?", "我女儿下个月满三岁，帮我记一下") is a sentence of its
    own: the request asks nothing about whether it is true."""
    res = _res()
    text = res["fence"].sub("\n", text)
    for whole, end in _cut(text, res["sentence"]):
        quoted = False
        speaker_clause = False  # an earlier clause of this sentence opened with 我
        pieces = list(_cut(whole, res["clause"]))
        asked = _request_at(pieces)
        statement = "".join(raw + delimiter for raw, delimiter in pieces[:asked])
        for number, (raw, delimiter) in enumerate(pieces):
            part = _clean(raw)
            if not part:
                continue
            before = number < asked
            sentence = statement if before else whole[len(statement) :]
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
                yield Clause(part, question, quoted, carried, sentence, before)
            if res["speech"].search(part) and not res["own_speech"].match(part):
                quoted = True  # what follows is someone else's word
            speaker_clause = speaker_clause or bool(res["speaker"].match(part))


def _request_at(pieces: list[tuple[str, str]]) -> int:
    """The number of the first clause that asks the agent to act after a statement
    opened the sentence ("…，帮我记一下", "…, can you update my address?", "…, put it in
    my calendar"), or 0 (a filler such as "ok," opens no statement)."""
    res = _res()
    said = [_clean(raw) for raw, _ in pieces]
    for number, part in enumerate(said):
        if any(res[asking].search(part) for asking in ("asks_help", "request_after", "told")):
            return number if any(said[:number]) else 0
        if part and res["request"].match(part):
            return 0  # the sentence opens with a request
    return 0


def sentences(text: str) -> Iterator[str]:
    """The text's sentences and clauses, in order (for summaries)."""
    for part in re.split(r"[。！？；;，\n]+|[.!?]+(?=\s|$)", text):
        part = part.strip(" \t,，、:：\"'“”")
        if 2 <= len(part) <= MAX_SENTENCE:
            yield part


def _refused(check: str, parts: dict[str, str]) -> bool:
    """Whether what a pattern captured shows the clause is no lasting statement (see the
    module doc): a reaction to the moment, discourse, a negation, an interjection."""
    res = _res()
    value, attr, thing = parts.get("value", ""), parts.get("attr", ""), parts.get("thing", "")
    if check == "rule":
        return bool(res["interjection"].match(value) or res["not_a_verb"].match(value))
    if check == "person":
        return value.split()[0].casefold() in _NOT_NAMES
    if check in ("object", "switch", "name", "pet") and res["deictic"].match(value):
        return True
    if check == "thing" and res["deictic"].match(thing):
        return True
    if check in ("object", "switch", "attribute", "known", "thing", "value"):
        if res["negated"].match(value) or res["judgement"].match(value):
            return True
    # "my point is", "the answer is 42"; "原因是 probe 太早" goes on about a failure
    discourse = check == "attribute" or (check == "known" and attr.isascii())
    return discourse and bool(res["discourse"].search(attr))


def _fits(check: str, parts: dict[str, str], words: Vocabulary) -> bool:
    """Whether the captured parts are what the pattern reads (a name, a known attribute)."""
    value, attr = parts.get("value", ""), parts.get("attr", "")
    if check == "name":
        return bool(_res()["name_like"].match(value))
    if check in ("known", "known name"):
        return words.known(attr) and (check == "known" or bool(_res()["name_like"].match(value)))
    if check == "role":
        return _is_role(value)
    if check == "place":  # "I moved to Berlin", not "we moved to CircleCI"
        return not words.category(value)
    if check == "pet":
        return attr not in ("名字", "名")
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
        return words.split(parts["attr"]) if parts.get("attr") else (USER, "")  # "我的 是 X"
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
        animal = re.search(PETS, parts.get("attr", ""), re.IGNORECASE)
        return (words.subject(value), "pet") if animal else (USER, "")
    if spec == "use":
        category = words.category(value)
        return USER, "" if category in MANY else category
    if spec == "built":  # "written in Go": a language; "built with Next.js": a framework
        return subject, words.category(value)
    if spec == "runs":
        if parts.get("thing") and words.known(parts["thing"]):
            return words.split(parts["thing"])
        return subject, "deploy"
    return subject, words.predicate(spec) if spec else ""


def _drafts(
    clause: str, words: Vocabulary, topic: str = "", fix: str = "", said: str = ""
) -> list[Draft] | None:
    """The draft of the first pattern that matches the clause and passes its guard: what
    was ``said`` (the clause itself by default) in the user's own words (see
    ``own_words``), keyed when the pattern is sure which attribute it sets. None when
    no pattern read it and one refused it (see :func:`_refused`)."""
    refused = False
    for pattern in patterns():
        found = pattern.regex.match(clause)
        if found is None:
            continue
        parts = {k: v.strip() for k, v in found.groupdict().items() if v and v.strip()}
        if "value" in parts:
            parts["value"] = _tidy(parts["value"], bool(pattern.predicate))
        if parts.get("value") and _refused(pattern.check, parts):
            refused = True
            continue  # a plainer pattern may still read it
        if not parts.get("value") or not _fits(pattern.check, parts, words):
            continue
        if pattern.predicate == "purpose":
            subject, predicate = USER, _purpose(parts["value"], words)
        else:
            tool, _, purpose = parts["value"].partition(" for ")
            if pattern.predicate == "switch" and words.known(purpose):  # "to Vault for secrets"
                parts.update(value=tool, attr=purpose)
            subject, predicate = _key(pattern, parts, words, topic, fix)
        if pattern.predicate in ("switch", "correction") and not predicate:
            return []  # a switch to something unknown names no attribute
        draft = Draft(
            content=own_words(said or clause),
            type=pattern.type,
            subject=subject,
            predicate=predicate,
            duration=pattern.duration,
            source=SOURCE,
        )
        return [draft]
    return None if refused else []


def _purpose(value: str, words: Vocabulary) -> str:
    """ "Grafana for dashboards": the attribute a lone "X for Y" sets (what it is for,
    or failing that what the tool is); "" for several ("Grafana for dashboards and
    PagerDuty for on-call": one memory, keyed on neither)."""
    parts = re.split(r",\s*(?:and\s+)?|\s+and\s+", value)
    if len(parts) != 1:
        return ""
    tool, _, purpose = value.partition(" for ")
    return words.split(purpose)[1] if words.known(purpose) else words.category(tool)


def canonical(draft: Draft, words: Vocabulary) -> Draft:
    """``draft`` (from the model, say) with its subject and predicate in canonical form."""
    if not draft.predicate:
        return draft
    subject, predicate = words.split(draft.predicate)
    if subject == USER and draft.subject:
        subject = words.subject(draft.subject)
    return draft._replace(subject=subject, predicate=predicate)


def _plan(clause: str, now: datetime, asked: bool = False) -> Draft | None:
    """A plan with a day ("next week we migrate…", "明天要去北京"): a FACT kept until
    ``PLAN_MARGIN`` after the day. A statement the user ``asked`` the agent to act on
    that names a coming day is one without a word of intention: "team lunch friday
    the 11th, can you put it in the calendar" is about the 11th; so is a statement that
    opens with a coming date ("6月22日周一给客户做一次演示", "June 22: client demo")."""
    intended = asked or _res()["plan"].search(clause) is not None
    if not intended and not opens_with_date(clause):
        return None
    day = future_day(clause, now)
    if day is None or (not intended and day - now.date() > DATE_FIRST_REACH):
        return None
    return Draft(_planned(day, clause), "FACT", USER, "", until=plan_expiry(day), source=SOURCE)


def _planned(day: date, said: str) -> str:
    """A plan's content: what was said, after the day it resolved to."""
    return planned(day, own_words(said), chinese=bool(_res()["han"].search(said)))


def _rule_duration(draft: Draft, task: bool) -> Draft:
    """Seed 001: a rule for the task at hand lasts a day, one about how to work stays.
    A task's rule takes no key: "reply in English this time" must not supersede the
    standing rule it departs from for a day."""
    if draft.type != "RULE":
        return draft
    if task:
        return draft._replace(duration="24h", predicate="")
    return draft._replace(duration="permanent")


def from_text(
    text: str, now: datetime | None = None, words: Vocabulary | None = None, before: str = ""
) -> list[Draft]:
    """The drafts the user's ``text`` states, in order: one per sentence that is a
    statement (see :func:`_statement`), else one per clause a pattern reads. Plans
    need ``now`` (the turn's time) to resolve their day. ``before``, what the user said
    in the turn before, may hold the first half of a handover (:func:`_handing_over`)."""
    words = words or vocabulary()
    drafts: list[Draft] = []
    reading = _Reading()
    for sentence in _sentences(clauses(text)):
        reading.refused = False
        found: list[Draft] = []
        cued = False  # a correction cue in this clause, or in the ones before that gave none
        for clause in sentence:
            read = reading.drafts(clause, words, now, drafts + found)
            cued = cued or is_correction(clause.text)
            found += [_correcting(d) for d in read] if cued else read
            cued = cued and not read
        found = said_once(found)  # "周末不安排提柜，no pickups on weekends": one rule
        whole = None if reading.refused else _statement(sentence, found, now)
        if whole is not None:
            found = [_correcting(whole) if is_correction(sentence[0].sentence) else whole]
        drafts += [_lasting(_labelled(d, words)) for d in found]
    return _handing_over(text, drafts, before)


def _lasting(draft: Draft) -> Draft:
    """A fact about who the user is (keyed on an attribute of ``vocabulary.PERSONAL``:
    their city, job, partner, pet …) is kept until a statement of the same key
    supersedes it, as a preference is: seed 003 keeps such traits in the persona, and a
    city said on the first day is still where the user lives a month later. A pet's key
    is its name ("Miso" / pet); anyone else's attribute (the project's name, a
    colleague's email) keeps a fact's 30 days."""
    about_user = draft.subject == USER or draft.predicate == "pet"
    if draft.type != "FACT" or draft.predicate not in PERSONAL or not about_user:
        return draft
    return draft._replace(duration="permanent")


def _handing_over(text: str, drafts: list[Draft], before: str = "") -> list[Draft]:
    """The drafts naming who takes over a role ``text`` hands over, marked as
    corrections of the memory naming who left (:func:`handover_hints`). A handover is
    often said across an exchange: the user's turn ``before`` says who leaves ("阿杰下周
    调去做新品线了"), the assistant asks, and ``text`` says who takes over ("对，以后 OTA
    的事找小林"); when ``text`` names no one leaving, ``before`` completes it."""
    said = text if leaving(text) or not before else f"{before}\n{text}"
    hints = handover_hints(said, [draft.content for draft in drafts])
    return [
        draft._replace(update_hint=hint) if hint else draft
        for draft, hint in zip(drafts, hints, strict=True)
    ]


def _correcting(draft: Draft) -> Draft:
    """The draft marked as a correction of what its words are about (the store finds
    the memory it replaces: :mod:`soloqueue_mem.memory.correction`); its content may
    have lost the cue ("actually") to :func:`own_words`."""
    return draft._replace(update_hint=draft.content)


class _Reading:
    """What the clauses read so far are about: the topic, the name the last statement
    gave, what the clause just before said was wrong."""

    def __init__(self) -> None:
        self.topic = self.named = self.fix = ""
        self.refused = False  # a pattern refused a clause of this sentence

    def drafts(
        self, clause: Clause, words: Vocabulary, now: datetime | None, before: list[Draft]
    ) -> list[Draft]:
        """The drafts a pattern reads in ``clause`` (a plan instead, when it is one)."""
        res = _res()
        if clause.question or clause.quoted or len(clause.text) < 2:
            return []
        task = bool(res["task"].search(clause.text))
        bare = res["task_opening"].sub("", clause.text)
        said = clause.text
        if self.named and res["goes_on"].match(bare):  # "RabbitMQ, 跑在 5673 端口"
            bare = said = f"{self.named} {bare}"
        read = _drafts(bare, words, self.topic, self.fix, said)
        if not read and clause.carried:
            read = _drafts(clause.carried, words, self.topic, self.fix) or read
        self.refused = self.refused or read is None
        found = read or []
        if not found and before and before[-1].predicate == "name" and _is_role(bare):
            found = [Draft(own_words(said), "FACT", USER, "job", source=SOURCE)]
        self.fix = _fixed(bare, words)
        self.topic = _topic(bare, words) or self.fix or self.topic
        self.named = _named(found)
        plan = _plan(clause.text, now) if now is not None else None
        if plan is not None and not any(d.type == "RULE" for d in found):
            found = [plan]  # "下周要迁移到 k8s" is a plan, not yet a switch
        return [_rule_duration(d, task) for d in found]


def _sentences(found: Iterator[Clause]) -> Iterator[list[Clause]]:
    """The clauses grouped by the sentence they are part of."""
    group: list[Clause] = []
    for clause in found:
        if group and clause.sentence != group[0].sentence:  # twice in a row: said once
            yield group
            group = []
        group.append(clause)
    if group:
        yield group


def _statement(
    sentence: list[Clause], found: list[Draft], now: datetime | None = None
) -> Draft | None:
    """The whole sentence as one memory, when all of it is the user's own statement:
    no clause asks, requests, quotes or supposes, and either a pattern read one of its
    clauses (the memory takes that draft's type, key and a plan's day; when patterns
    read several clauses, each keeps its own memory: "I live in Lisbon and I prefer
    green tea" is two) or the sentence says something of substance (see
    :func:`_substantial`). A plan whose day is in another clause than its intention
    ("Next Friday, September 12, I'm presenting …") is the whole sentence's."""
    res = _res()
    if any(c.question or c.quoted for c in sentence):
        return None
    said = _clean(sentence[0].sentence)
    if res["request"].match(sentence[0].text) or res["not_said"].search(said):
        return None
    if any(res["asks_help"].search(c.text) for c in sentence):
        return None
    if len(said) > MAX_SENTENCE:
        return None
    if len(found) > 1:
        return None  # each clause states its own thing: a memory per clause
    if found and found[0].until is not None:  # a plan
        day = (found[0].until - PLAN_MARGIN - timedelta(days=1)).date()
        return found[0]._replace(content=_planned(day, said))
    if found:
        return found[0]._replace(content=own_words(said))
    plan = _plan(said, now, sentence[0].asked) if now is not None else None
    if plan is not None:
        return plan
    if not _substantial(said):
        return None
    rule = bool(res["rule_marker"].search(sentence[0].sentence))
    kind = "RULE" if rule else "FACT"
    draft = Draft(own_words(said), kind, source=SOURCE)
    return _rule_duration(draft, bool(res["task"].search(said)))


def _substantial(said: str) -> bool:
    """Whether a sentence no pattern reads still states something worth keeping: not
    of the moment ("That's wild", "这个思路可以", "昨天又加班", "我觉得是缓存的问题"),
    and it names something — a number, a name or term, the speaker or their family —
    or, in Chinese, reads as a statement (在, 由…负责, 每…)."""
    res = _res()
    if res["of_the_moment"].search(said) or _reacts(said):
        return False
    if res["task_opening"].match(said):  # "今天上海下大雨": the day's news
        return False
    if res["han"].search(said):
        if res["bare_pronoun_zh"].fullmatch(said):  # "我们": the speaker, nothing said
            return False
        return bool(
            res["names_something"].search(said)
            or res["statement_zh"].search(said)
            or is_correction(said)  # "打样这批转到捷配": a value changed
        )
    return len(said.split()) >= 3 and bool(res["names_something"].search(said))


def _reacts(said: str) -> bool:
    """Whether ``said`` ends as a reaction: a particle, laughter, an emoji. 吧 closing
    a change ("上传限制改成 20MB 吧", "…，改成提前 24 小时吧") is the speaker settling
    the new value, not reacting to the moment."""
    found = _res()["reaction_end"].search(said)
    return found is not None and not (found.group() == "吧" and is_correction(said))


def _labelled(draft: Draft, words: Vocabulary) -> Draft:
    """A fact tagged with its attribute in both languages ("deploy-tool", "部署工具")
    and with those of the values it names ("Grafana for dashboards and PagerDuty for
    on-call": monitoring, 监控, on-call, 值班; a city: city, 城市): a question in the
    other language still finds it. A key is one attribute; the values are tagged even
    then ("用户是顾一鸣，在杭州一所高中教物理" is keyed on the name, and tells the city). A job
    that names where it is held ("禾麦烘焙的运营经理", "product manager at Acme") tells the
    employer: "我在哪家公司" finds it."""
    predicates = [draft.predicate, *words.named(draft.content)]
    if draft.predicate == "job" and _res()["employer_named"].search(draft.content):
        predicates.append("employer")
    known = [p for p in predicates if p in words.labels]
    names = {n for p in known for n in (p, words.label(p, chinese=True))}
    if not names:
        return draft
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
        drafts.append(
            Draft(
                content=tool_failure.summary(name, str(result["content"])),
                type="ERROR",
                subject=name,
                predicate="error",
                source=SOURCE,
            )
        )
    return drafts


def from_turn(
    record: dict[str, Any],
    tool_names: dict[str, str],
    words: Vocabulary | None = None,
    before: str = "",
) -> list[Draft]:
    """Drafts from one JSONL record: the user's statements (plans resolved against the
    turn's own time, ``before`` what the user said in the turn before: see
    :func:`from_text`) and its failed tool results."""
    drafts = []
    if record["role"] == "user":
        said_at = parse_timestamp(record["timestamp"]) if record.get("timestamp") else None
        drafts = from_text(record.get("content") or "", said_at, words, before)
    return drafts + from_tool_results(record.get("tool_results") or [], tool_names)


def tool_names(records: list[dict[str, Any]]) -> dict[str, str]:
    """Tool call id -> tool name within a stretch of records."""
    return {call.get("id"): call["name"] for r in records for call in r.get("tool_calls") or []}


def from_records(records: list[dict[str, Any]], words: Vocabulary | None = None) -> list[Draft]:
    """Drafts from a stretch of JSONL records (tool names resolved within it), and the
    lessons of the tool failures the user answered (:mod:`.lessons`)."""
    names = tool_names(records)
    drafts = []
    before = ""  # the user's turn before this one in the stretch
    for record in records:
        drafts += from_turn(record, names, words, before)
        if record["role"] == "user":
            before = record.get("content") or ""
    return drafts + lessons(records, SOURCE)
