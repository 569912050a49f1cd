"""Patterns for everyday developer speech, often code-switched inside one sentence.

"retry 次数现在设的是 5 次", "batch size is 192 now", "we track tickets in Jira",
"我们做 code review 都用 Gerrit", "secrets 都放在 Vault 里", "Priya here — ML
engineer", "我在 Finch Pay 做 backend tech lead", "我家那只柯基叫 Tofu", "我老家是
Chennai". They are tried before the plainer patterns of ``patterns.py`` (first match
wins), so each one is specific: an attribute it keys on must be a known one
(``vocabulary``), a value a name or a number, a role a role word.

Parts and ``predicate`` specs are those of ``patterns.py``; two more specs:
``purpose`` ("uses Grafana for dashboards and PagerDuty for on-call": one fact per
"X for Y") and ``job`` with an ``employer`` part (where they work: one fact, keyed on
the job and tagged ``employer`` too, see ``extract._labelled``).
"""

from __future__ import annotations

from soloqueue_mem.lifecycle.patterns import OBJ, Pattern, keyed, make

_DET = r"(?:the |our |my )?"
# an attribute phrase: a few words, not a person and what they said
_ATTR = (
    r"(?!(?:he|she|they|i|you|we|it|someone|people)\b)(?!.*\b(?:said|says|told|thinks?)\b)"
    r"(?P<attr>[\w' .&/-]{2,40}?)"
)
_ZH_TOPIC = r"(?P<attr>[^，。我你他她它这那]{1,40}?)"
_WE_ZH = r"(?:我们|咱们|我|团队|我们组|我们团队|全组|大家)"
_OFTEN_ZH = r"(?:现在|目前|一般|平时|默认|都|也|主要|一直|还是|应该|其实|实际上)"
_NAME = r"(?P<value>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?|[\u4e00-\u9fff]{2,4})"
_ANIMAL = r"cat|dog|puppy|kitten|corgi|rabbit|parrot|hamster|bird"
_SURNAME = (  # "我是刘洋": a Chinese name opens with a common surname
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕"
    "丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严武戴莫孔汤"
)
_PARTNER_ZH = r"老公|老婆|爱人|对象|妻子|丈夫|太太|先生|男朋友|女朋友"


def _english() -> list[Pattern]:
    return [
        # the language of the answers, in either language: "以后回答都用中文", "switch
        # back to answering in English": one attribute, so the later rule supersedes
        make(
            r"^(?=.{0,40}?(?:回答|回复|answer|repl(?:y|ies)|respon(?:d|ses?)|talk to me))"
            r".{0,40}?(?:用|in|with)\s*(?P<value>简体中文|繁体(?:中文|字)?|中文|英文|日文|English"
            r"|Chinese|Japanese|Spanish|French|German)(?![A-Za-z]).*$",
            "RULE",
            "reply language",
        ),
        # settings: "Prometheus retention is set to 15 days", "retries are 8 now"
        keyed(
            r"^" + _DET + _ATTR + r" (?:is|are) (?:currently |now |still )?"
            r"(?:set to|configured to|configured as|capped at|set at) " + OBJ + r"$",
            "attribute",
        ),
        # "we track tickets in Jira", "we keep secrets in Vault"
        keyed(
            r"^(?:we|i|the team|our team)(?: all| mostly| still| now)?"
            r" (?:track|manage|keep|log|file|store|put) "
            + _ATTR
            + r" (?:in|on|with|into) "
            + OBJ
            + r"$",
            "known",
        ),
        # "the whole team uses Grafana for dashboards and PagerDuty for on-call"
        make(
            r"^(?:we|i|the (?:whole )?team|our team|everyone|my team)(?: all| mostly| also"
            r"| now| still| mainly)? (?:use|uses|are using|'re using|rely on|relies on) "
            r"(?P<value>.+? for .+)$",
            "FACT",
            "purpose",
            check="object",
        ),
        # a bare corrected value after what was wrong: "I got the window wrong — it's 60
        # days, not 45"
        make(
            r"^(?:no,? )?(?:it's|it is|they're|they are)(?: actually| really)?"
            r" (?P<value>[\w.:/+-]+(?: [\w.:/+-]+){0,3}?)(?:,? (?:not|instead of) .*)?$",
            "FACT",
            "correction",
            check="switch",
        ),
        # "Priya here — ML engineer on the vision team", "陈浩 here, SRE"
        make(
            r"^" + _NAME + r" here(?:\s*[,，—–-]+\s*(?P<role>.{2,60}))?$",
            "FACT",
            "name",
            flags=0,
        ),
        make(
            r"^(?i:i'm|i am) (?i:originally )?from (?P<value>[A-Z].{1,40})$",
            "FACT",
            "hometown",
            flags=0,
        ),
        make(
            r"^(?i:i(?: was born and raised| was raised| grew up| spent my childhood) in )"
            r"(?P<value>[A-Z][\w .'-]{1,40}?)(?:,.*| (?i:so|and|but) .*)?$",
            "FACT",
            "hometown",
            flags=0,
        ),
        make(
            r"^(?i:i was born in|i'm born in|i am born in) (?P<value>(?:19|20)\d\d)\b.*$",
            "FACT",
            "birth year",
            flags=0,
        ),
        make(
            r"^i(?:'m| am) (?:severely |very |also )?allergic to (?P<value>[\w' -]{2,40}?)"
            r"(?:,.*| (?:so|and|but) .*)?$",
            "FACT",
            "allergy",
        ),
        make(
            r"^i(?:'m| am) (?P<value>(?:a )?(?:vegetarian|vegan|pescatarian|lactose[- ]intolerant"
            r"|gluten[- ]intolerant|gluten[- ]free|halal|kosher|teetotal|coeliac|celiac))\b.*$",
            "FACT",
            "diet",
        ),
        make(
            r"^(?i:i|we|my (?:partner|wife|husband|family|girlfriend|boyfriend) and i)"
            r"(?:'ve| have)? (?:just |recently )?moved to (?P<value>[A-Z][\w .'-]{1,40})$",
            "FACT",
            "city",
            check="place",
            flags=0,
        ),
        make(
            r"^(?i:my) (?P<attr>" + _ANIMAL + r")(?:'s name is| is called| is named|,)? "
            r"(?P<value>[A-Z][\w'-]+)\b.*$",
            "FACT",
            "pet",
            flags=0,
        ),
        make(
            r"^i (?:mostly |mainly |also )?(?:own|am responsible for|'m responsible for"
            r"|look after) " + OBJ + r"$",
            "FACT",
            check="object",
        ),
        make(
            r"^(?:please )?(?P<value>(?:keep|write|give|put) (?:your |the |all |my )?"
            r"(?:answers|replies|responses|explanations|comments|code comments"
            r"|commit messages)\b.{0,80})$",
            "RULE",
        ),
    ]


def _chinese() -> list[Pattern]:
    return [
        # settings: "retry 次数现在设的是 5 次", "timeout 我们设的是 8 秒"
        keyed(
            r"^" + _ZH_TOPIC + _WE_ZH + r"?" + _OFTEN_ZH + r"?"
            r"(?:设的是|设置的是|设成了?|设置成了?|设置为|设为|配置为|配置的是|配的是|定的是"
            r"|设的|设了|锁在|固定在)"
            r"\s*(?P<value>.{1,40}?)$",
            "attribute",
        ),
        # "训练的 batch size 我们现在用 256", "learning rate 是 3e-4", "并发数现在是 16"
        keyed(
            r"^" + _ZH_TOPIC + r"\s*" + _WE_ZH + r"?" + _OFTEN_ZH + r"?(?:用|跑|开|是|在)\s*"
            r"(?P<value>[\d.]+(?:e-?\d+)?\s*\S{0,4}|[A-Za-z][\w .&+-]{0,40})$",
            "known",
        ),
        # "我们组做 code review 都用 Gerrit", "日志我们用 Loki 收"
        keyed(
            r"^(?:"
            + _WE_ZH
            + r"(?:组|团队)?"
            + _OFTEN_ZH
            + r"?(?:做|的))?"
            + _ZH_TOPIC
            + r"\s*"
            + _WE_ZH
            + r"?"
            + _OFTEN_ZH
            + r"?(?:用|使用|用的是|在用)\s*(?P<value>[^，。]{1,40}?)\s*(?:来)?"
            r"(?:做|收|管|存|跑|管理|存储|记录|收集)?$",
            "known",
        ),
        # "我们用 Sentry 做错误监控"
        keyed(
            r"^" + _WE_ZH + _OFTEN_ZH + r"?(?:用|使用)\s*(?P<value>[^，。]{1,40}?)\s*(?:来)?"
            r"(?:做|管理|跑|记录|收集|管)(?P<attr>[^，。]{1,20})$",
            "known",
        ),
        # "secrets 都放在 Vault 里"
        keyed(
            r"^" + _ZH_TOPIC + r"\s*" + _WE_ZH + r"?" + _OFTEN_ZH + r"?"
            r"(?:放在|存在|存到|放到|托管在|记在|记录在|存放在)\s*(?P<value>[^，。]{1,40}?)"
            r"(?:里|上|中|里面)?$",
            "known",
        ),
        # "我老家是 Chennai", "我生日是 11 月 2 号"
        keyed(
            r"^我(?P<attr>[^，。的\s]{1,4}?)(?:是|在)" + OBJ + r"$",
            "known",
        ),
        # "（staging 的端口不是 8443，）是 9443", "（换掉了，）现在是 5000"
        make(
            r"^(?:现在|目前|其实|实际上|而|应该)?(?:已经)?(?:是|改成了?|换成了?|变成了?)"
            r"\s*(?P<value>[^，。\s]{1,30}?)(?:了)?$",
            "FACT",
            "correction",
            check="switch",
        ),
        _p_name_zh(),
        make(
            r"^我是\s*(?P<value>[" + _SURNAME + r"][\u4e00-\u9fff]{1,2})$",
            "FACT",
            "name",
        ),
        # "我是在武汉长大的", "我在青岛长大", "我从小在成都长大"
        make(
            r"^我(?:是)?(?:从小)?在\s*(?P<value>[^，。\s]{1,12}?)\s*(?:长大|出生)的?$",
            "FACT",
            "hometown",
        ),
        # "我是 90 后", "我是 1988 年生的", "我 95 年出生"
        make(
            r"^我(?:是)?\s*(?P<value>(?:19|20)?\d\d\s*(?:后|年(?:生的?|出生的?)))"
            r"(?:[，,].*)?$",
            "FACT",
            "birth year",
        ),
        make(
            r"^我(?:有点|比较|很)?对\s*(?P<value>[^，。]{1,20}?)\s*过敏$",
            "FACT",
            "allergy",
        ),
        make(
            r"^我(?P<value>吃素|是素食者|不吃(?:辣|肉|猪肉|牛肉|海鲜))$",
            "FACT",
            "diet",
        ),
        # "我老公是做芯片设计的", "我老婆是老师"
        make(
            r"^我(?:的|家)?(?P<attr>" + _PARTNER_ZH + r")(?:是|在)\s*(?P<value>[^，。]{2,30})$",
            "FACT",
            "partner",
        ),
        # "我大学在华科读的计算机", "我本科是在浙大读的"
        make(
            r"^我?(?:大学|本科|硕士|研究生|博士)(?:是)?在\s*(?P<value>[^，。\s]{2,20}?)\s*"
            r"(?:读|念|上)的?(?P<field>.{0,20})$",
            "FACT",
            "education",
        ),
        # pets: "我家那只柯基叫 Tofu", "我家 Lucky 是只金毛"
        make(
            r"^我家?(?:的|那只|那条|这只|这条|的那只)?(?P<attr>(?![家有养们])[^，。\s]{1,6}?)(?:的名字)?"
            r"(?:叫|名叫)\s*(?P<value>[^，。]{1,20})$",
            "FACT",
            "pet",
            check="pet",
        ),
        make(
            r"^我家(?:的)?\s*" + _NAME + r"\s*是(?:一)?(?:只|条)(?P<attr>[^，。]{1,8})$",
            "FACT",
            "pet",
            flags=0,
        ),
        # "（我）现在住在杭州", "上个月搬到深圳了", "已经在深圳住了三年了", "（我）常驻成都"
        make(
            r"^(?:我(?:和|跟)[^，。\s]{1,4}|我们|我)?(?:上个?月|上周|周末|最近|刚刚?|已经|现在|目前|去年)*"
            r"(?:住在|搬到了?|搬去了?|常驻)"
            r"\s*(?P<value>[^，。\s]{1,20}?)$",
            "FACT",
            "city",
        ),
        make(
            r"^我?(?:已经|一直|现在)?在\s*(?P<value>[^，。\s]{1,12}?)\s*(?:住|生活)了?"
            r"(?:[一二三四五六七八九十两几\d]+年)?了?$",
            "FACT",
            "city",
        ),
        # "我在 Finch Pay 做 backend tech lead"
        make(
            r"^我(?:现在|目前)?在\s*(?P<employer>[^，。]{1,30}?)\s*(?:做|当|担任|干)\s*"
            r"(?P<value>[^，。]{2,40})$",
            "FACT",
            "job",
            check="role",
        ),
        make(r"^我(?:主要)?负责\s*" + OBJ + r"$", "FACT", check="object"),
        # a rule before a step: "跑训练之前先 dry-run 一个 step"
        make(r"^(?P<value>.{1,30}?(?:之前|以前|前)(?:都|要|必须|一定)?先.{2,60})$", "RULE"),
        # a rule about a topic: "Commit message 请用英文写"
        make(
            r"^(?P<attr>[^我你他她它，。]{2,20}?)\s*(?:请|麻烦)(?:都|统一)?用" + OBJ + r"$",
            "RULE",
        ),
        # "Prod cluster 叫 jade": the thing's name
        make(
            r"^(?![一两三几\d]\s*[只条个位])(?P<thing>(?:我们的?|咱们的?)?[^，。我你他她它这那叫]{1,20}?)\s*(?:叫|名叫|叫做)\s*(?P<value>[\w.\-]{1,40})$",
            "FACT",
            "name",
            check="thing",
        ),
    ]


def late() -> list[Pattern]:
    """Tried after the plainer patterns: an attribute stated with nothing around it."""
    return [
        # "batch size is 192 now", "Experiment tracking lives in MLflow"
        make(
            r"^" + _DET + _ATTR + r" (?P<verb>is|are) (?:now )?" + OBJ + r"$",
            "FACT",
            "attr",
            check="known name",
        ),
        make(
            r"^"
            + _DET
            + _ATTR
            + r" (?:lives|live|is|are|happens|happen|runs|run) (?:in|on) "
            + OBJ
            + r"$",
            "FACT",
            "attr",
            check="known name",
        ),
    ]


def _p_name_zh() -> Pattern:
    """ "我是 Anna": a name, where "我是前端工程师" is a role."""
    return make(
        r"^我是\s*(?P<value>[A-Z][a-z]+(?: [A-Z][a-z]+)?)$",
        "FACT",
        "name",
        flags=0,
    )


def patterns() -> list[Pattern]:
    return [*_english(), *_chinese()]
