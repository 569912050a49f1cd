"""Canonical predicates and subjects: one language-neutral key per attribute.

"my editor is Vim" and "我的编辑器是 Helix" are the same attribute: both become
subject ``user``, predicate ``editor``, so the second supersedes the first (see
``memory.store.remember``). The table below is small and bilingual; ``config.toml``
adds aliases (``[predicates]`` ``"我的终端" = "terminal"``).

Subjects: the speaker and their team (I, we, our team, 我, 我们, 团队 …) are one
entity, ``user``: a store belongs to one person's agent, and "my database" and "our
database" are the same thing there. A named part (the API, 前端, the project) has
its own canonical subject.

Values: a switch without the attribute ("我已经换成 Helix 了", "we moved to
CircleCI") names it through a known value (Helix is an editor).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from soloqueue_mem.tuples import NamedTuple

USER = "user"

# canonical: (Chinese label, aliases in both languages)
# Who the user is: name, where they live and come from, work, family and pets, how to
# reach them, what they must not eat. Seed 003 keeps these as persona traits, so a fact
# keyed on one of them about the user lasts like a preference, until a later statement
# of the same key supersedes it (``extract._lasting``). The time zone stays with the
# settings below: it changes with a trip.
PERSONAL: dict[str, tuple[str, tuple[str, ...]]] = {
    "name": ("名字", ("name", "名字", "姓名", "名称")),
    "birthday": ("生日", ("birthday", "date of birth", "生日", "出生日期")),
    "city": ("城市", ("city", "城市", "所在城市", "住址")),
    "hometown": ("老家", ("hometown", "home town", "老家", "家乡", "籍贯")),
    "job": (
        "职业",
        (
            "job",
            "role",
            "occupation",
            "profession",
            "job title",
            "title",
            "职业",
            "岗位",
            "职位",
            "工作",
        ),
    ),
    "employer": ("公司", ("employer", "company", "公司", "工作单位", "工作地点")),
    "email": ("邮箱", ("email", "e-mail", "email address", "邮箱", "电子邮箱", "邮件地址")),
    "phone": ("电话", ("phone", "phone number", "mobile", "电话", "手机", "手机号", "电话号码")),
    "pet": ("宠物", ("pet", "宠物")),
    "birth year": ("出生年份", ("birth year", "year of birth", "出生年份", "出生年")),
    "diet": ("饮食", ("diet", "dietary restriction", "dietary restrictions", "饮食", "忌口")),
    "allergy": ("过敏", ("allergy", "allergies", "food allergy", "过敏", "过敏源")),
    "partner": (
        "伴侣",
        (
            "partner",
            "spouse",
            "wife",
            "husband",
            "boyfriend",
            "girlfriend",
            "伴侣",
            "爱人",
            "老婆",
            "老公",
            "妻子",
            "丈夫",
            "对象",
            "男朋友",
            "女朋友",
        ),
    ),
    "education": (
        "学校",
        ("school", "university", "college", "alma mater", "学校", "大学", "母校", "学历"),
    ),
    "supervisor": ("导师", ("supervisor", "advisor", "adviser", "phd advisor", "导师")),
}
# ... and the user's tools, settings and the parts of their work
PREDICATES: dict[str, tuple[str, tuple[str, ...]]] = PERSONAL | {
    "editor": ("编辑器", ("editor", "code editor", "text editor", "ide", "编辑器", "代码编辑器")),
    "database": ("数据库", ("database", "db", "数据库")),
    "cache": ("缓存", ("cache", "缓存")),
    "port": ("端口", ("port", "port number", "端口", "端口号")),
    "language": (
        "语言",
        ("language", "programming language", "main language", "语言", "编程语言", "开发语言"),
    ),
    "os": ("操作系统", ("os", "operating system", "操作系统", "系统")),
    "timezone": ("时区", ("timezone", "time zone", "tz", "时区")),
    "framework": ("框架", ("framework", "web framework", "框架")),
    "deploy": (
        "部署",
        (
            "deploy target",
            "deployment",
            "hosting",
            "host",
            "cloud",
            "cloud provider",
            "部署",
            "部署平台",
            "云",
            "云服务",
            "云平台",
        ),
    ),
    "shell": ("shell", ("shell", "终端shell")),
    "package manager": ("包管理器", ("package manager", "包管理器", "包管理工具")),
    "ci": ("CI", ("ci", "ci/cd", "ci system", "持续集成")),
    "team chat": (
        "团队聊天工具",
        ("team chat", "chat tool", "chat", "聊天工具", "沟通工具", "即时通讯"),
    ),
    "version": ("版本", ("version", "版本", "版本号")),
    # settings: numbers with units
    "retries": (
        "重试次数",
        ("retries", "retry", "retry count", "max retries", "retry 次数", "重试次数", "重试"),
    ),
    "backoff": ("退避时间", ("backoff", "retry backoff", "退避", "退避时间")),
    "timeout": ("超时时间", ("timeout", "time out", "超时", "超时时间")),
    "batch size": ("batch size", ("batch size", "batch_size", "批大小", "批量大小")),
    "learning rate": ("学习率", ("learning rate", "lr", "学习率")),
    "epochs": ("训练轮数", ("epochs", "训练轮数", "轮数")),
    "retention": (
        "保留期",
        ("retention", "retention period", "data retention", "保留期", "保留时间", "保留天数"),
    ),
    "concurrency": ("并发数", ("concurrency", "并发", "并发数")),
    "max connections": (
        "最大连接数",
        (
            "max connections",
            "max_connections",
            "max_client_conn",
            "connection limit",
            "client connection limit",
            "最大连接数",
            "连接数上限",
        ),
    ),
    "pool size": (
        "连接池大小",
        ("pool size", "connection pool size", "connection pool", "连接池", "连接池大小"),
    ),
    "rate limit": ("限流", ("rate limit", "rate limiting", "限流")),
    # what the team works with
    "ticket tracker": (
        "工单系统",
        (
            "ticket tracker",
            "tickets",
            "ticket system",
            "issue tracker",
            "bug tracker",
            "bugs",
            "ticket 系统",
            "工单系统",
            "工单",
        ),
    ),
    "monitoring": (
        "监控",
        ("monitoring", "dashboards", "metrics", "监控", "监控面板", "仪表盘"),
    ),
    "error tracking": ("错误监控", ("error tracking", "error monitoring", "错误监控", "异常监控")),
    "logging": ("日志", ("logging", "logs", "日志", "日志系统")),
    "on-call": ("值班", ("on-call", "on call", "oncall", "on-call rotation", "paging", "值班")),
    "code review": ("代码评审", ("code review", "code reviews", "代码评审", "代码审查")),
    "experiment tracking": (
        "实验记录",
        ("experiment tracking", "experiment tracker", "experiments", "实验记录", "实验追踪"),
    ),
    "message broker": (
        "消息队列",
        ("message broker", "message queue", "broker", "mq", "消息队列", "消息中间件"),
    ),
    "ingress": ("ingress", ("ingress", "ingress controller", "入口网关")),
    "secrets store": (
        "密钥存储",
        ("secrets store", "secret store", "secrets", "密钥", "密钥存储", "凭据"),
    ),
    "test framework": (
        "测试框架",
        (
            "test framework",
            "testing framework",
            "unit tests",
            "测试框架",
            "单元测试",
            "单元测试框架",
        ),
    ),
    "docs": ("文档工具", ("docs", "documentation", "wiki", "文档", "知识库")),
    "object storage": ("对象存储", ("object storage", "对象存储")),
    "data warehouse": (
        "数仓",
        ("data warehouse", "warehouse", "dwh", "数仓", "数据仓库"),
    ),
    "bi tool": (
        "报表工具",
        (
            "bi tool",
            "bi",
            "reporting tool",
            "reports",
            "exec reports",
            "报表工具",
            "报表",
            "bi 工具",
        ),
    ),
    "deploy tool": ("部署工具", ("deploy tool", "deploys", "continuous delivery", "部署工具")),
    "reply language": ("回答语言", ("reply language", "answer language", "回答语言", "回复语言")),
}

# canonical subject: aliases (the speaker's own words map to USER)
SUBJECTS: dict[str, tuple[str, ...]] = {
    USER: (
        "i",
        "me",
        "my",
        "we",
        "us",
        "our",
        "team",
        "our team",
        "the team",
        "user",
        "我",
        "我们",
        "咱们",
        "团队",
        "我们团队",
        "我们的团队",
        "用户",
        "我家",
    ),
    "project": (
        "project",
        "the project",
        "this project",
        "our project",
        "项目",
        "这个项目",
        "我们的项目",
        "本项目",
    ),
    "api": ("api", "the api", "our api", "接口", "api服务"),
    "backend": ("backend", "the backend", "back end", "后端", "后台"),
    "frontend": ("frontend", "the frontend", "front end", "前端"),
    "app": ("app", "the app", "web app", "the web app", "application", "应用", "网站"),
    "service": ("service", "the service", "服务"),
    "server": ("server", "the server", "服务器"),
    "gateway": ("gateway", "the gateway", "网关"),
}

# canonical predicate: values that name it; "single" ones make "I use X" an attribute
VALUES: dict[str, tuple[str, ...]] = {
    "editor": (
        "vim",
        "neovim",
        "nvim",
        "helix",
        "emacs",
        "vs code",
        "vscode",
        "visual studio code",
        "cursor",
        "zed",
        "sublime",
        "sublime text",
        "intellij",
        "pycharm",
        "webstorm",
        "goland",
        "xcode",
        "nano",
        "windsurf",
    ),
    "database": (
        "postgres",
        "postgresql",
        "mysql",
        "sqlite",
        "mongodb",
        "mongo",
        "tidb",
        "mariadb",
        "oracle",
        "sql server",
        "cockroachdb",
        "dynamodb",
        "clickhouse",
    ),
    "os": ("macos", "linux", "windows", "ubuntu", "arch linux", "fedora", "debian"),
    "shell": ("bash", "zsh", "fish", "nushell", "powershell"),
    "package manager": ("npm", "yarn", "pnpm", "uv", "pip", "poetry", "conda", "pipenv"),
    "ci": ("github actions", "gitlab ci", "jenkins", "circleci", "travis ci", "buildkite"),
    "team chat": (
        "slack",
        "discord",
        "microsoft teams",
        "飞书",
        "feishu",
        "lark",
        "钉钉",
        "dingtalk",
        "企业微信",
        "mattermost",
    ),
    "deploy": (
        "aws",
        "gcp",
        "google cloud",
        "azure",
        "阿里云",
        "aliyun",
        "腾讯云",
        "华为云",
        "fly.io",
        "vercel",
        "heroku",
        "netlify",
        "cloudflare",
        "railway",
        "k8s",
        "kubernetes",
    ),
    "language": (
        "python",
        "rust",
        "go",
        "golang",
        "java",
        "kotlin",
        "typescript",
        "javascript",
        "c++",
        "c#",
        "ruby",
        "swift",
        "php",
        "scala",
        "elixir",
    ),
    "framework": (
        "django",
        "flask",
        "fastapi",
        "react",
        "vue",
        "angular",
        "rails",
        "spring",
        "spring boot",
        "next.js",
        "nuxt",
        "svelte",
        "express",
    ),
}
VALUES |= {
    "ticket tracker": ("jira", "linear", "youtrack", "github issues", "asana", "trello", "clickup"),
    "monitoring": ("grafana", "datadog", "new relic", "prometheus", "zabbix", "nagios"),
    "error tracking": ("sentry", "bugsnag", "rollbar", "crashlytics"),
    "data warehouse": ("snowflake", "bigquery", "redshift", "databricks"),
    "bi tool": ("looker", "metabase", "tableau", "power bi", "superset", "redash"),
    "on-call": ("pagerduty", "opsgenie"),
    "code review": ("gerrit", "phabricator"),
    "experiment tracking": ("mlflow", "weights & biases", "wandb", "w&b", "comet", "neptune"),
    "message broker": ("rabbitmq", "kafka", "nats", "activemq", "pulsar"),
    "ingress": ("traefik", "ingress-nginx", "nginx ingress"),
    "secrets store": ("vault", "aws secrets manager", "1password", "doppler"),
    "test framework": ("jest", "vitest", "pytest", "mocha", "junit", "unittest"),
    "logging": ("loki", "elk", "splunk", "graylog"),
    "deploy tool": ("argo cd", "argocd", "flux", "spinnaker"),
    "docs": ("notion", "confluence"),
}
_VALUE_OF = {name: canonical for canonical, names in VALUES.items() for name in names}
# what a pet is: "我家那只柯基叫 Tofu" names a pet, "我们的项目叫 Aurora" does not
PETS = (
    r"\b(?:cat|dog|puppy|kitten|corgi|rabbit|parrot|hamster|bird|pet)s?\b"
    r"|猫|狗|柯基|金毛|哈士奇|柴犬|泰迪|兔|鹦鹉|仓鼠|宠物|乌龟|金鱼"
)
# where a setting lives: "the staging database" is staging's, not the user's
STAGES = frozenset({"staging", "prod", "production", "dev", "development", "test", "qa", "local"})
# numbers a user sets: "the request timeout" is a timeout, not the request's
SETTINGS = frozenset(
    {"retries", "backoff", "timeout", "batch size", "learning rate", "epochs", "retention"}
    | {"concurrency", "max connections", "pool size", "rate limit"}
)
# Many can be in use at once: "I use Python" and "I use Go" are both true.
MANY = frozenset({"language", "framework"})


def _fold(text: str) -> str:
    text = re.sub(r"^(?:the|our|my|your)\s+|^(?:我们的?|我的|咱们的?)", "", text.strip().casefold())
    return " ".join(text.replace("'s ", " ").split()).strip("的 ")


def _as_said(head: str, phrase: str) -> str:
    """``head`` (folded) as written in an all-Latin ``phrase``, or "" (Chinese text: a
    Latin word there is a name)."""
    if not phrase.isascii() or not head.strip():
        return ""
    found = re.search(r"\b" + re.escape(head.strip()) + r"\b", phrase, re.IGNORECASE)
    return found.group() if found else ""


def _bare(subject: str) -> str:
    """ "staging 环境" and "the staging environment" are "staging"."""
    return re.sub(r"\s*(?:环境|environment|env)$", "", subject) or subject


class Vocabulary(NamedTuple):
    predicates: dict[str, str]  # folded alias -> canonical
    labels: dict[str, str]  # canonical -> Chinese label
    subjects: dict[str, str]  # folded alias -> canonical

    def predicate(self, phrase: str) -> str:
        """The canonical predicate of an attribute phrase ("time zone" -> "timezone");
        an unknown phrase, folded."""
        folded = _fold(phrase)
        return self.predicates.get(folded, folded)

    def known(self, phrase: str) -> bool:
        return self.split(phrase)[1] in self.labels

    def subject(self, phrase: str) -> str:
        raw = _bare(" ".join(phrase.casefold().split()))
        if raw in self.subjects:
            return self.subjects[raw]
        folded = _fold(raw)
        return self.subjects.get(folded, folded or USER)

    def split(self, phrase: str) -> tuple[str, str]:
        """``(subject, predicate)`` of an attribute phrase: "staging database" ->
        ("staging", "database"), "Node 版本" -> ("node", "version"), "editor" ->
        ("user", "editor"). The longest alias at the end names the attribute."""
        folded = _fold(phrase)
        if folded in self.predicates:
            return USER, self.predicates[folded]
        for start in range(len(folded) - 1):  # its suffixes, longest first
            alias = folded[start:]
            if alias not in self.predicates:
                continue
            head = folded[:start]
            if alias.isascii() and head and not head.endswith(" "):
                continue  # "export" does not end with the word "port"
            canonical = self.predicates[alias]
            said = _as_said(head, phrase) if canonical in SETTINGS else ""
            return self.owner(head, said), canonical
        return USER, folded

    def owner(self, phrase: str, said: str = "") -> str:
        """The subject a phrase before an attribute names: a known part ("前端"), or
        one name-like word ("staging", "Redis"); a longer description ("训练的",
        "settlement worker 失败后的") is the user's own setting, so that "retries are
        8 now" said later names the same attribute. Before a setting, a plain lowercase
        English word (``said``: the phrase as written) that names no known part, stage
        or value says what the setting is for ("the request timeout", like "请求超时"):
        the user's too."""
        phrase = re.sub(r"(?:那个|这个|的|\s)+$|^(?:那个|这个)", "", phrase.strip()).strip()
        raw = _bare(phrase.casefold())
        if raw in self.subjects or _fold(raw) in self.subjects:
            return self.subject(raw)
        if re.fullmatch(r"[a-z]+", said) and raw not in STAGES and not self.category(raw):
            return USER
        return raw if re.fullmatch(r"[\w.+-]{1,20}", raw, re.ASCII) else USER

    def label(self, canonical: str, chinese: bool) -> str:
        return self.labels.get(canonical, canonical) if chinese else canonical

    def category(self, value: str) -> str:
        """The predicate a known value names ("PostgreSQL 15" -> "database"), or ""."""
        folded = value.strip().casefold()
        for canonical, names in VALUES.items():
            for name in names:
                boundary = r"(?=[\s\d.,/(]|$)" if name.isascii() else ""
                if re.match(re.escape(name) + boundary, folded):
                    return canonical
        return ""

    def named(self, text: str) -> list[str]:
        """The attributes ``text`` speaks of, by name or through a known value:
        "Grafana for dashboards and PagerDuty for on-call" -> monitoring, on-call;
        "请求超时" -> timeout. A Latin value counts only as written like a name
        (capitalised, or with a digit or a dot): "let's go" names no language."""
        found = set()
        for hit in _named_re(frozenset(self.predicates)).finditer(text):
            said = hit.group()
            if said.casefold() in self.predicates:
                found.add(self.predicates[said.casefold()])
            elif not re.fullmatch(r"[a-z ]+", said):
                found.add(_VALUE_OF[said.casefold()])
        if _city_re().search(text):
            found.add("city")
        return sorted(found)


@cache
def _named_re(aliases: frozenset[str]) -> re.Pattern[str]:
    """Known values and attribute names (Latin ones of three letters or more: "db",
    "os" and "tz" are too easily something else) as whole words."""
    names = set(_VALUE_OF) | {a for a in aliases if not a.isascii() or len(a) > 2}
    alternatives = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
    return re.compile(r"(?<![\w.+#-])(?:" + alternatives + r")(?![\w+#-]|\.\w)", re.I)


@cache
def _city_re() -> re.Pattern[str]:
    """A city of :data:`soloqueue_mem.text.bilingual.CITIES` by its Chinese name or its
    English one written as a name ("Chengdu", not "chengdu" inside a path)."""
    from soloqueue_mem.text.bilingual import CITIES

    latin = "|".join(
        re.escape(name[0].upper() + name[1:]) for english, _ in CITIES for name in english
    )
    chinese = "|".join(re.escape(name) for _, names in CITIES for name in names)
    return re.compile(rf"(?<![\w.])(?:{latin})(?!\w)|{chinese}")


def vocabulary(extra: Mapping[str, str] | None = None) -> Vocabulary:
    """The built-in table plus ``extra`` aliases (alias -> canonical predicate)."""
    return _vocabulary(tuple(sorted((extra or {}).items())))


@cache
def _vocabulary(extra: tuple[tuple[str, str], ...]) -> Vocabulary:
    predicates = {
        _fold(alias): canonical
        for canonical, (_, aliases) in PREDICATES.items()
        for alias in aliases
    }
    predicates |= {canonical: canonical for canonical in PREDICATES}
    labels = {canonical: label for canonical, (label, _) in PREDICATES.items()}
    for alias, canonical in extra:
        predicates[_fold(alias)] = _fold(canonical)
        labels.setdefault(_fold(canonical), canonical)
    subjects = {
        alias.casefold(): canonical for canonical, aliases in SUBJECTS.items() for alias in aliases
    }
    return Vocabulary(predicates, labels, subjects)
