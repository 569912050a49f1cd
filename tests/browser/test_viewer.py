"""Issue 33: the viewer ``serve`` shows at ``/``, in a real headless Chromium driven by
Selenium, on a store holding the demo's session (its large tool output offloaded), the
memories its end digested and a small graph. One browser and one server per module;
screenshots of each page land in the module's tmp dir."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from soloqueue_mem.clock import parse_timestamp
from tests.conftest import NOW

pytest.importorskip("starlette", reason="the [server] extra is not installed")
pytest.importorskip("selenium", reason="selenium is not installed (the [test] extra)")

from tests.api.test_http import Server  # noqa: E402 - after the extras' checks
from tests.browser.chromium import missing, open_browser  # noqa: E402

if reason := missing():
    pytest.skip(reason, allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ARCHIVED = "The weekly sync notes live in Notion"


def build_demo_store(root: Path) -> None:
    """A memory decay archived two days back; then the demo's session logged (its
    server log offloaded, its replies in working memory), ended into an episode,
    memories and the scratchpad, its messages fed to the agent's graph, and a working
    memory entry added five hours before now."""
    from soloqueue_mem import Store
    from soloqueue_mem.clock import parse_timestamp
    from soloqueue_mem.ops.demo import DEMO_EVENTS

    root.mkdir(parents=True)
    (root / "config.toml").write_text('language = "en"\n')
    now = parse_timestamp(NOW)
    with Store(root, clock=lambda: now - timedelta(days=2)) as before:
        before.remember(ARCHIVED, duration="3d", importance=0.12, source="agent")
    with Store(root, clock=lambda: now - timedelta(hours=5)) as earlier:
        earlier.working_add("Deploy window for the billing service is Tuesday 10:00")
    with Store(root) as store:
        assert store.consolidate()["decay"]["archived"] == 1
        store.log(DEMO_EVENTS, session="demo-session")
        store.session_end("demo-session")
        store.remember("The staging database lives on db-stage-2.", type="FACT")
        messages = [{"role": e["role"], "content": e["content"]} for e in DEMO_EVENTS]
        store.graph_remember([m for m in messages if m["content"]], sync=True)


class Viewer:
    def __init__(self, browser: Any, server: Server, shots: Path) -> None:
        self.browser, self.server, self.shots = browser, server, shots

    def show(self, page: str) -> Any:
        """The page at ``#page``, loaded afresh (no state left by an earlier test),
        once its data has arrived and rendered."""
        self.browser.get("about:blank")
        self.browser.get(f"http://127.0.0.1:{self.server.port}/#{page}")
        return self.ready(page)

    def ready(self, page: str) -> Any:
        wait = WebDriverWait(self.browser, 30)
        wait.until(
            lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == page
        )
        return self.browser

    def screenshot(self, name: str) -> None:
        self.browser.save_screenshot(str(self.shots / f"viewer-{name}.png"))

    def status(self) -> str:
        return str(self.browser.find_element(By.ID, "status").text)


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    base = tmp_path_factory.mktemp("viewer")
    home = base / "store" / ".soloqueue"
    saved = os.environ.get("SOLOQUEUE_NOW")
    os.environ["SOLOQUEUE_NOW"] = NOW
    try:
        build_demo_store(home)
        server = Server(home, env={"SOLOQUEUE_NOW": NOW})
    finally:
        if saved is None:
            os.environ.pop("SOLOQUEUE_NOW")
    downloads = base / "downloads"
    downloads.mkdir()
    browser = open_browser(base / "profile", downloads)
    try:
        browser.get(server.url)  # the printed URL: sets the cookie, back to /
        yield Viewer(browser, server, base)
    finally:
        browser.quit()
        server.stop()
        shutil.rmtree(base / "profile", ignore_errors=True)


def cli_json(home: Path, *args: str) -> Any:
    env = {**os.environ, "SOLOQUEUE_HOME": str(home), "SOLOQUEUE_NOW": NOW}
    done = subprocess.run(
        [sys.executable, "-m", "soloqueue_mem", "--format", "json", *args],
        capture_output=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)


def test_each_page_renders_the_store(viewer: Viewer) -> None:
    page = viewer.show("overview")
    counts = page.find_element(By.CSS_SELECTOR, "#counts tbody").text
    assert counts.split()[:2] == ["7", "1"]  # turns, sessions
    assert "demo-session" not in counts and "default" in page.find_element(By.ID, "page").text
    viewer.screenshot("overview")
    viewer.show("memories")
    texts = [c.text for c in page.find_elements(By.CSS_SELECTOR, "article.memory .text")]
    assert "User prefers timeouts of at least 5 seconds" in texts  # digested by session end
    viewer.show("graph")
    drawn = page.find_element(By.ID, "cy")
    assert int(drawn.get_attribute("data-nodes")) > 0
    assert page.execute_script("return cy.edges().length") > 0
    page.execute_script("cy.nodes()[0].emit('tap')")
    WebDriverWait(page, 30).until(lambda b: b.find_element(By.ID, "node-detail").text)
    field = page.find_element(By.ID, "graph-keywords")
    field.send_keys("timeout", Keys.ENTER)
    WebDriverWait(page, 30).until(lambda b: b.find_element(By.ID, "graph-found").text)
    assert page.find_elements(By.CSS_SELECTOR, "#graph-found article")
    viewer.screenshot("graph")


def test_a_session_pages_its_turns_and_opens_the_offloaded_artifact(viewer: Viewer) -> None:
    page = viewer.show("sessions")
    page.find_element(By.XPATH, "//td[text()='demo-session']/..//button").click()
    WebDriverWait(page, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#timeline .turn"))
    turns = page.find_elements(By.CSS_SELECTOR, "#timeline .turn")
    assert len(turns) == 7
    assert "帮我看看为什么数据库连接总是超时？" in turns[0].text
    link = page.find_element(By.CSS_SELECTOR, "a.artifact")
    ref = link.text.split()[-1]
    link.click()
    downloaded = viewer.shots / "downloads" / f"artifact-{ref}"
    WebDriverWait(page, 30).until(lambda b: downloaded.exists())
    assert downloaded.read_text().count("WARN db: connection wait") == 120
    viewer.screenshot("sessions")
    page.find_element(By.ID, "trace-query").send_keys("busy_timeout", Keys.ENTER)
    WebDriverWait(page, 30).until(lambda b: "trace" in b.find_element(By.ID, "timeline").text)
    assert page.find_elements(By.CSS_SELECTOR, "#timeline .turn")


def test_search_then_forget_a_memory_and_recall_no_longer_finds_it(viewer: Viewer) -> None:
    home = viewer.shots / "store" / ".soloqueue"
    wanted = "db-stage-2"
    before = cli_json(home, "recall", "staging database", "--channels", "memories")
    assert any(wanted in hit["content"] for hit in before)
    page = viewer.show("memories")
    page.find_element(By.ID, "memory-query").send_keys("staging database", Keys.ENTER)
    card = f"//article[contains(@class,'memory')][.//div[contains(., '{wanted}')]]"
    WebDriverWait(page, 30).until(
        lambda b: b.find_elements(By.XPATH, card + "//div[@class='explain']")
    )
    viewer.screenshot("memories")
    page.find_element(By.XPATH, card + "//button[contains(@class, 'forget')]").click()
    page.find_element(By.XPATH, card + "//button[contains(@class, 'confirm-forget')]").click()
    WebDriverWait(page, 30).until(lambda b: viewer.status() == "Forgotten.")
    after = cli_json(home, "recall", "staging database", "--channels", "memories")
    assert not any(wanted in hit["content"] for hit in after)


def test_restore_an_archived_memory_in_the_page_and_recall_finds_it_again(
    viewer: Viewer,
) -> None:
    home = viewer.shots / "store" / ".soloqueue"
    query = ["recall", "weekly sync notes Notion", "--channels", "memories"]
    assert not any(ARCHIVED in hit["content"] for hit in cli_json(home, *query))
    page = viewer.show("memories")
    page.find_element(By.ID, "memory-inactive").click()
    page.find_element(By.ID, "memory-search").click()
    card = f"//article[contains(@class,'memory')][.//div[text()='{ARCHIVED}']]"
    restore = card + "//button[text()='Restore']"
    WebDriverWait(page, 30).until(lambda b: b.find_elements(By.XPATH, restore))
    page.find_element(By.XPATH, restore).click()
    WebDriverWait(page, 30).until(lambda b: viewer.status() == "Restored.")
    assert not page.find_elements(By.XPATH, restore)  # the card redrawn, active again
    assert [hit["content"] for hit in cli_json(home, *query)] == [ARCHIVED]


def test_the_memories_page_shows_working_memory_with_ttls_the_scratchpad_and_episodes(
    viewer: Viewer,
) -> None:
    page = viewer.show("memories")
    rows = [r.text for r in page.find_elements(By.CSS_SELECTOR, "#working tbody tr")]
    assert len(rows) == 3  # the demo's two replies, logged at NOW, and the earlier entry
    assert "Deploy window for the billing service" in rows[-1] and "19 h 0 min" in rows[-1]
    assert all("24 h 0 min" in row for row in rows[:2])
    assert "busy_timeout 只有 500 毫秒" in rows[0]
    pad = page.find_element(By.CSS_SELECTOR, "#scratchpad pre").text
    assert "## Recent progress\n- 11/26: 帮我看看为什么数据库连接总是超时？ (success)" in pad
    (episode,) = page.find_elements(By.CSS_SELECTOR, "#episodes article.episode")
    assert "default/default/demo-session" in episode.text and "success" in episode.text
    assert "Goal: 帮我看看为什么数据库连接总是超时？" in episode.text
    layers = page.find_element(By.ID, "layers")
    page.execute_script("arguments[0].scrollIntoView()", layers)
    layers.screenshot(str(viewer.shots / "viewer-layers.png"))
    page.find_element(By.ID, "memory-group").send_keys("elsewhere", Keys.ENTER)
    heading = "return document.querySelector('#working h3').textContent"  # never stale
    WebDriverWait(page, 30).until(lambda b: "elsewhere" in b.execute_script(heading))
    assert page.find_element(By.CSS_SELECTOR, "#scratchpad .meta").text == "not written yet"
    assert not page.find_elements(By.CSS_SELECTOR, "#episodes article")


def test_with_language_zh_the_pages_are_labelled_in_chinese(viewer: Viewer, tmp_path: Path) -> None:
    """A second server, on a small store whose ``language`` is zh, in the same browser."""
    from soloqueue_mem import Store

    home = tmp_path / ".soloqueue"
    home.mkdir()
    (home / "config.toml").write_text('language = "zh"\n')
    with Store(home, clock=lambda: parse_timestamp(NOW)) as store:
        store.log("部署窗口定在周二上午十点，请记住。", role="assistant", session="s1")
        store.session_end("s1")
    server = Server(home, env={"SOLOQUEUE_NOW": NOW})
    try:
        zh = Viewer(viewer.browser, server, viewer.shots)
        zh.browser.get(server.url)
        page = zh.show("memories")
        nav = [a.text for a in page.find_elements(By.CSS_SELECTOR, "#nav a")]
        assert nav == ["概览", "会话", "记忆", "图谱"]
        headings = [h.text for h in page.find_elements(By.CSS_SELECTOR, "#layers h3")]
        assert headings == ["工作记忆 · default", "草稿本 · default/default", "情节"]
        assert "24 小时 0 分钟" in page.find_element(By.ID, "working").text
        assert "## 近期进展" in page.find_element(By.CSS_SELECTOR, "#scratchpad pre").text
        label = page.find_element(By.CSS_SELECTOR, "label[for=memory-query]")
        assert label.text == "搜索记忆 (recall)"
        zh.screenshot("memories-zh")
        page = zh.show("overview")
        sections = [h.text for h in page.find_elements(By.CSS_SELECTOR, "#page h3")]
        assert sections == ["数量", "磁盘占用", "分组与代理", "维护"]
        zh.show("sessions")
        headers = [th.text for th in page.find_elements(By.CSS_SELECTOR, "#page th")]
        assert headers[:3] == ["分组", "代理", "会话"]
    finally:
        server.stop()


def test_the_viewer_refuses_a_request_without_the_token(viewer: Viewer) -> None:
    anonymous = {"Authorization": None, "Accept": "text/html"}
    for path in ("/", "/viewer/viewer.js", "/api/v1/stats", "/api/v1/memories"):
        status, _, body = viewer.server.call("GET", path, headers=anonymous)
        assert status == 401 and b"<html" not in body
    status, headers, page = viewer.server.call("GET", "/", headers={"Accept": "text/html"})
    assert status == 200 and b"viewer.js" in page and b'<html lang="en">' in page  # config
    assert "default-src 'self'" in headers["content-security-policy"]
    status, answer = viewer.server.json("GET", "/")  # an API client still gets the JSON
    assert status == 200 and answer["status"] == "ok"


# In the page: every form control's label, and the contrast of each text colour
# against the background it is drawn on (WCAG 2's relative luminance).
CONTRAST_JS = """
const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 4).map(Number);
const lum = ([r, g, b]) => {
  const c = [r, g, b].map((v) => v / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
};
const background = (node) => {
  for (; node; node = node.parentElement) {
    const c = rgb(getComputedStyle(node).backgroundColor);
    if (c.length < 4 || c[3] > 0) return c;
  }
  return [255, 255, 255];
};
const worst = [];
for (const node of document.querySelectorAll("body *")) {
  if (![...node.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
  if (node.closest("#cy")) continue;
  const [a, b] = [lum(rgb(getComputedStyle(node).color)), lum(background(node))];
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  if (ratio < 4.5) worst.push([node.tagName, node.textContent.slice(0, 30), ratio]);
}
return worst;
"""
UNLABELLED_JS = """
return [...document.querySelectorAll("input, select, textarea")]
  .filter((c) => !c.id || !document.querySelector(`label[for="${c.id}"]`)).map((c) => c.outerHTML);
"""


def test_accessibility_basics(viewer: Viewer) -> None:
    for name in ("overview", "sessions", "memories", "graph"):
        page = viewer.show(name)
        assert page.execute_script(UNLABELLED_JS) == [], name
        assert page.execute_script(CONTRAST_JS) == [], name
    page = viewer.show("memories")
    page.find_element(By.TAG_NAME, "body").click()
    reached = []
    for _ in range(20):
        page.switch_to.active_element.send_keys(Keys.TAB)
        active = page.switch_to.active_element
        reached.append(active.get_attribute("id") or active.tag_name)
    assert "memory-query" in reached and "memory-search" in reached
    assert reached.index("memory-query") < reached.index("memory-search")
