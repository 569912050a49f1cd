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
from typing import NamedTuple

USER = "user"

# canonical: (Chinese label, aliases in both languages)
PREDICATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "editor": ("编辑器", ("editor", "code editor", "text editor", "ide", "编辑器", "代码编辑器")),
    "database": ("数据库", ("database", "db", "数据库")),
    "cache": ("缓存", ("cache", "缓存")),
    "port": ("端口", ("port", "port number", "端口", "端口号")),
    "language": (
        "语言",
        ("language", "programming language", "main language", "语言", "编程语言", "开发语言"),
    ),
    "os": ("操作系统", ("os", "operating system", "操作系统", "系统")),
    "name": ("名字", ("name", "名字", "姓名", "名称")),
    "birthday": ("生日", ("birthday", "date of birth", "生日", "出生日期")),
    "city": ("城市", ("city", "home town", "hometown", "城市", "所在城市", "住址", "家乡")),
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
    "pet": ("宠物", ("pet", "宠物")),
    "version": ("版本", ("version", "版本", "版本号")),
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
# Many can be in use at once: "I use Python" and "I use Go" are both true.
MANY = frozenset({"language", "framework"})


def _fold(text: str) -> str:
    text = re.sub(r"^(?:the|our|my|your)\s+|^(?:我们的|我的|咱们的)", "", text.strip().casefold())
    return " ".join(text.replace("'s ", " ").split()).strip("的 ")


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
        raw = " ".join(phrase.casefold().split())
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
        for alias in sorted(self.predicates, key=len, reverse=True):
            if not folded.endswith(alias) or len(alias) < 2:
                continue
            head = folded[: -len(alias)]
            if alias.isascii() and head and not head.endswith(" "):
                continue  # "export" does not end with the word "port"
            owner = head.strip().removesuffix("的").strip()
            if len(owner) > 20:
                break
            return self.subject(owner) if owner else USER, self.predicates[alias]
        return USER, folded

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
