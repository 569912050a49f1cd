// The soloqueue-mem viewer: a client of serve's JSON API (same origin; the cookie set
// by the printed login URL authenticates every call). Stored text is data: it only
// ever reaches the page through textContent, never as markup.
"use strict";

// Each label as [English, Chinese]: the store's `language` setting picks one.
const WORDS = {
  overview: ["Overview", "概览"], sessions: ["Sessions", "会话"], memories: ["Memories", "记忆"],
  graph: ["Graph", "图谱"], counts: ["Counts", "数量"], disk: ["Disk use", "磁盘占用"],
  scopes: ["Groups and agents", "分组与代理"], maintenance: ["Maintenance", "维护"],
  databases: ["databases", "数据库"], session_logs: ["session logs", "会话日志"], blobs: ["blobs", "数据块"],
  last_gc: ["last gc", "上次 gc"], last_consolidate: ["last consolidate", "上次 consolidate"],
  hook_errors: ["hook errors", "钩子错误"], never: ["never", "从未"], group: ["Group", "分组"],
  agent: ["Agent", "代理"], session: ["Session", "会话"], turns: ["Turns", "轮次"],
  last_turn: ["Last turn", "最后一轮"], open: ["Open", "打开"], more: ["Load more", "加载更多"],
  search: ["Search", "搜索"], trace_query: ["Search turns (trace)", "搜索对话 (trace)"],
  query: ["Search memories (recall)", "搜索记忆 (recall)"], type: ["Type", "类型"], any: ["any", "全部"],
  tag: ["Tag", "标签"], inactive: ["Include superseded and archived", "包括已取代和已归档"],
  history: ["History", "历史"], edit: ["Edit", "编辑"], save: ["Save", "保存"], cancel: ["Cancel", "取消"],
  forget: ["Forget", "遗忘"], confirm_forget: ["Forget for good", "永久遗忘"],
  restore: ["Restore", "恢复"], artifact: ["Download artifact", "下载制品"],
  tool_calls: ["tool calls", "工具调用"], tool_results: ["tool results", "工具结果"],
  no_results: ["Nothing found.", "没有结果。"], draw: ["Draw", "绘制"],
  keywords: ["Graph recall keywords", "图谱回忆关键词"], node: ["Node", "节点"],
  links_out: ["Links out", "出链"], links_in: ["Links in", "入链"], forgotten: ["forgotten", "已遗忘"],
  focus: ["focus", "焦点"], score: ["score", "得分"], forgot_done: ["Forgotten.", "已遗忘。"],
  saved: ["Saved.", "已保存。"], restored: ["Restored.", "已恢复。"],
  end_of_session: ["End of session.", "会话结束。"], new_content: ["New content", "新内容"],
  archived: ["archived", "已归档"], superseded_by: ["superseded by", "已被取代："],
  working: ["Working memory", "工作记忆"], scratchpad: ["Scratchpad", "草稿本"],
  episodes: ["Episodes", "情节"], added: ["Added", "添加时间"], expires_in: ["Expires in", "剩余时间"],
  source: ["Source", "来源"], content: ["Content", "内容"], updated: ["updated", "更新于"],
  not_written: ["not written yet", "尚未写入"], expired: ["expired", "已过期"],
  hours: ["h", "小时"], minutes: ["min", "分钟"], outcome: ["outcome", "结果"], tools: ["tools", "工具"],
};
const LANG = document.documentElement.lang === "zh" ? "zh" : "en";
const t = (key) => (WORDS[key] ? WORDS[key][LANG === "zh" ? 1 : 0] : key);
const TYPES = ["FACT", "PREFERENCE", "RULE", "SKILL", "ERROR"];

// -- small helpers ---------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(message, isError) {
  const status = document.getElementById("status");
  status.textContent = message || "";
  status.style.color = isError ? "" : "var(--fg)";
}

async function api(path, body) {
  const options = { credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) {
    const message = (data.error && data.error.message) || response.statusText;
    say("error: " + message, true);
    throw new Error(message);
  }
  return data;
}

function query(params) {
  const parts = Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined);
  return parts.length ? "?" + new URLSearchParams(parts).toString() : "";
}

function field(id, label, attrs) {
  return [el("label", { for: id }, label), el("input", { id, ...attrs })];
}

function bytes(n) {
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + " GB";
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + " MB";
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KB";
  return n + " B";
}

function table(headers, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) => el("td", {}, cell))))));
}

function page(title, ...children) {
  const main = document.getElementById("page");
  main.replaceChildren(el("h2", {}, title), ...children);
  return main;
}

// -- overview --------------------------------------------------------------------

async function overview() {
  const [stats, listed] = await Promise.all([api("/api/v1/stats"), api("/api/v1/sessions?limit=1000")]);
  const dbBytes = Object.values(stats.databases).reduce((sum, d) => sum + (d.bytes || 0), 0);
  const scopes = {};
  for (const s of listed.sessions) {
    const key = s.group + "\u0000" + s.agent;
    scopes[key] = scopes[key] || { group: s.group, agent: s.agent, sessions: 0, turns: 0 };
    scopes[key].sessions += 1;
    scopes[key].turns += s.turn_count;
  }
  const state = (value) => (value && Object.keys(value).length
    ? el("pre", {}, JSON.stringify(value, null, 2)) : t("never"));
  page(t("overview"),
    el("section", { id: "counts", "aria-label": t("counts") }, el("h3", {}, t("counts")),
      table(Object.keys(stats.counts), [Object.values(stats.counts)])),
    el("section", { id: "disk", "aria-label": t("disk") }, el("h3", {}, t("disk")),
      table([t("databases"), t("session_logs"), t("blobs")],
        [[bytes(dbBytes), bytes(stats.session_logs.bytes), bytes(stats.blobs.bytes)]])),
    el("section", { id: "scopes", "aria-label": t("scopes") }, el("h3", {}, t("scopes")),
      table([t("group"), t("agent"), t("sessions"), t("turns")],
        Object.values(scopes).map((s) => [s.group, s.agent, s.sessions, s.turns]))),
    el("section", { id: "maintenance", "aria-label": t("maintenance") }, el("h3", {}, t("maintenance")),
      table([t("last_gc"), t("last_consolidate"), t("hook_errors")],
        [[state(stats.gc), state(stats.consolidate), JSON.stringify(stats.hook_errors)]])));
}

// -- sessions --------------------------------------------------------------------

async function sessions() {
  const listed = await api("/api/v1/sessions?limit=200");
  const timeline = el("div", { id: "timeline" });
  const form = el("form", { role: "search", onsubmit: (e) => { e.preventDefault(); trace(timeline); } },
    field("trace-query", t("trace_query"), { type: "search" }),
    el("button", { type: "submit" }, t("search")));
  const rows = listed.sessions.map((s) => [
    s.group, s.agent, s.session, s.turn_count, s.last_turn_at,
    el("button", { type: "button", onclick: () => showSession(s, timeline) }, t("open")),
  ]);
  page(t("sessions"), form,
    table([t("group"), t("agent"), t("session"), t("turns"), t("last_turn"), ""], rows), timeline);
}

async function trace(timeline) {
  const text = document.getElementById("trace-query").value.trim();
  if (!text) return;
  const found = await api("/api/v1/trace", { query: text, limit: 20 });
  timeline.replaceChildren(el("h3", {}, t("trace_query")),
    ...(found.hits.length ? found.hits.map(turnCard) : [el("p", {}, t("no_results"))]));
}

async function showSession(s, timeline) {
  const base = `/api/v1/sessions/${encodeURIComponent(s.group)}/${encodeURIComponent(s.agent)}/` +
    `${encodeURIComponent(s.session)}/turns`;
  const list = el("div", { class: "turns" });
  const more = el("button", { type: "button", class: "plain" }, t("more"));
  timeline.replaceChildren(el("h3", {}, `${s.group}/${s.agent}/${s.session}`), list, more);
  let after = -1;
  async function next() {
    const data = await api(base + query({ after, limit: 50 }));
    list.append(...data.turns.map(turnCard));
    if (data.next === null) more.replaceWith(el("p", { class: "meta" }, t("end_of_session")));
    else after = data.next;
  }
  more.addEventListener("click", next);
  await next();
}

function turnCard(turn) {
  const folded = (name, items) => (items && items.length
    ? el("details", {}, el("summary", {}, `${t(name)} (${items.length})`),
      el("pre", { class: "text" }, JSON.stringify(items, null, 2)))
    : null);
  const links = (turn.artifacts || []).map((ref) =>
    el("a", { href: `/api/v1/artifacts/${encodeURIComponent(ref)}`, download: `artifact-${ref}`,
      class: "artifact" }, `${t("artifact")} ${ref}`));
  return el("article", { class: "card turn" },
    el("div", { class: "meta" }, el("span", { class: "role" }, turn.role),
      `#${turn.turn_index} · ${turn.timestamp}`, turn.session ? ` · ${turn.session}` : ""),
    el("div", { class: "text" }, turn.content || turn.text || ""),
    folded("tool_calls", turn.tool_calls), folded("tool_results", turn.tool_results), links);
}

// -- memories --------------------------------------------------------------------

async function memories() {
  const results = el("div", { id: "results" });
  const typeSelect = el("select", { id: "memory-type" }, el("option", { value: "" }, t("any")),
    TYPES.map((name) => el("option", { value: name }, name)));
  const layers = el("div", { id: "layers" });
  const form = el("form", { role: "search", onsubmit: (e) => {
    e.preventDefault();
    searchMemories(results);
    showLayers(layers);
  } },
    field("memory-query", t("query"), { type: "search" }),
    el("label", { for: "memory-type" }, t("type")), typeSelect,
    field("memory-group", t("group"), { type: "text", size: 10 }),
    field("memory-agent", t("agent"), { type: "text", size: 10 }),
    field("memory-tag", t("tag"), { type: "text", size: 10 }),
    el("span", {}, el("input", { id: "memory-inactive", type: "checkbox" }),
      el("label", { for: "memory-inactive" }, t("inactive"))),
    el("button", { type: "submit", id: "memory-search" }, t("search")));
  page(t("memories"), form, results, layers);
  await Promise.all([searchMemories(results), showLayers(layers)]);
}

const value = (id) => document.getElementById(id).value.trim();

async function searchMemories(results) {
  const text = value("memory-query");
  const filters = { type: value("memory-type"), group: value("memory-group"), agent: value("memory-agent") };
  let cards;
  if (text) {
    const found = await api("/api/v1/recall", { query: text, explain: true, channels: ["memories"],
      type: filters.type || null, group: filters.group || null, agent: filters.agent || null, limit: 20 });
    cards = found.hits.map((hit) => memoryCard(hit, hit.signals));
  } else {
    const listed = await api("/api/v1/memories" + query({ ...filters, tag: value("memory-tag"),
      inactive: document.getElementById("memory-inactive").checked ? "1" : "" }));
    cards = listed.memories.map((m) => memoryCard(m));
  }
  results.replaceChildren(...(cards.length ? cards : [el("p", {}, t("no_results"))]));
}

// The other layers of one group (and agent): working memory with each entry's time
// left, the scratchpad, and the episodes of past sessions.
async function showLayers(layers) {
  const where = { group: value("memory-group") || "default", agent: value("memory-agent") || "default" };
  const [working, pad, episodes] = await Promise.all([
    api("/api/v1/working" + query({ group: where.group })),
    api("/api/v1/scratchpad" + query(where)),
    api("/api/v1/episodes" + query({ group: value("memory-group"), agent: value("memory-agent") })),
  ]);
  const section = (id, title, ...children) =>
    el("section", { id, "aria-label": t(id) }, el("h3", {}, title), ...children);
  const none = (rows, content) => (rows.length ? content : el("p", {}, t("no_results")));
  layers.replaceChildren(
    section("working", `${t("working")} · ${where.group}`, none(working.entries,
      table([t("added"), t("expires_in"), t("source"), t("content")], working.entries.map((e) =>
        [e.created_at, timeLeft(e.expires_in_s), e.source, el("div", { class: "text" }, e.content)])))),
    section("scratchpad", `${t("scratchpad")} · ${pad.group}/${pad.agent}`,
      el("p", { class: "meta" }, pad.updated_at ? `${t("updated")} ${pad.updated_at}` : t("not_written")),
      el("pre", { class: "text" }, pad.content)),
    section("episodes", t("episodes"), none(episodes.episodes, episodes.episodes.map((e) =>
      el("article", { class: "card episode" },
        el("div", { class: "meta" }, `${e.ended_at} · ${e.group}/${e.agent}/${e.session} · ` +
          `${t("outcome")} ${e.outcome}`, e.tools_used.length ? ` · ${t("tools")} ${e.tools_used.join(", ")}` : ""),
        el("div", { class: "text" }, e.summary))))));
}

function timeLeft(seconds) {
  if (seconds <= 0) return t("expired");
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours ? `${hours} ${t("hours")} ${minutes} ${t("minutes")}` : `${minutes} ${t("minutes")}`;
}

function bars(signals) {
  const rows = Object.entries(signals.contributions).map(([name, value]) =>
    el("div", { class: "bar" }, el("span", { class: "name" }, name),
      el("span", { class: "fill", style: `width:${Math.round(Math.min(1, value) * 200)}px` }),
      value.toFixed(3)));
  return el("div", { class: "explain", "aria-label": "explain" }, rows);
}

function memoryCard(m, signals) {
  const card = el("article", { class: "card memory", "data-id": m.id });
  const extra = el("div");
  const forget = el("button", { type: "button", class: "danger forget", onclick: () => {
    forget.replaceWith(el("button", { type: "button", class: "danger confirm-forget", onclick: async () => {
      await api("/api/v1/forget", { ids: [m.id] });
      card.replaceChildren(el("p", { class: "meta" }, `${m.id} · ${t("forgot_done")}`));
      say(t("forgot_done"));
    } }, t("confirm_forget")));
  } }, t("forget"));
  const history = async () => {
    const data = await api(`/api/v1/memories/${encodeURIComponent(m.id)}/history`);
    extra.replaceChildren(table(["created_at", "content", "superseded_by"],
      data.versions.map((v) => [v.created_at, v.content, v.superseded_by || ""])));
  };
  const edit = () => {
    const box = el("textarea", { id: `edit-${m.id}`, rows: 3, cols: 60 });
    box.value = m.content;
    extra.replaceChildren(el("label", { for: `edit-${m.id}` }, t("new_content")), box,
      el("button", { type: "button", onclick: async () => {
        const saved = await api(`/api/v1/memories/${encodeURIComponent(m.id)}/edit`, { content: box.value });
        card.replaceWith(memoryCard(saved));
        say(t("saved"));
      } }, t("save")),
      el("button", { type: "button", class: "plain", onclick: () => extra.replaceChildren() }, t("cancel")));
  };
  const restore = async () => {
    const back = await api(`/api/v1/memories/${encodeURIComponent(m.id)}/restore`, {});
    card.replaceWith(memoryCard(back));
    say(t("restored"));
  };
  const parts = [
    el("div", { class: "meta" }, `${m.type || m.kind} · ${m.group}/${m.agent} · ${m.id}`,
      m.tags && m.tags.length ? ` · ${m.tags.join(", ")}` : "",
      m.archived_at ? ` · ${t("archived")} ${m.archived_at}` : "",
      m.superseded_by ? ` · ${t("superseded_by")} ${m.superseded_by}` : "",
      m.score !== undefined ? ` · ${t("score")} ${m.score.toFixed(3)}` : ""),
    el("div", { class: "text" }, m.content),
    signals ? bars(signals) : null,
    el("div", {},
      el("button", { type: "button", class: "plain", onclick: history }, t("history")),
      el("button", { type: "button", class: "plain", onclick: edit }, t("edit")),
      m.archived_at ? el("button", { type: "button", class: "plain", onclick: restore }, t("restore")) : null,
      forget),
    extra];
  card.append(...parts.filter(Boolean));
  return card;
}

// -- graph -----------------------------------------------------------------------

let cy = null;

async function graph() {
  const detail = el("div", { id: "node-detail", "aria-live": "polite" });
  const found = el("div", { id: "graph-found" });
  const drawForm = el("form", { onsubmit: (e) => { e.preventDefault(); draw(detail); } },
    field("graph-group", t("group"), { type: "text", value: "default", size: 10 }),
    field("graph-agent", t("agent"), { type: "text", value: "default", size: 10 }),
    el("button", { type: "submit", id: "graph-draw" }, t("draw")));
  const recallForm = el("form", { role: "search", onsubmit: (e) => { e.preventDefault(); graphRecall(found); } },
    field("graph-keywords", t("keywords"), { type: "search" }),
    el("button", { type: "submit" }, t("search")));
  page(t("graph"), drawForm, recallForm,
    el("div", { class: "columns" }, el("div", { id: "cy", role: "img", "aria-label": t("graph") }),
      el("div", {}, detail, found)));
  await draw(detail);
}

function scope() {
  return { group: document.getElementById("graph-group").value.trim() || "default",
    agent: document.getElementById("graph-agent").value.trim() || "default" };
}

async function draw(detail) {
  const data = await api("/api/v1/graph" + query(scope()));
  const known = new Set(data.nodes.map((n) => n.node_id));
  const elements = data.nodes.map((n) => ({ data: { id: n.node_id, label: n.phrase || n.content.slice(0, 24) },
    classes: n.focus ? "focus" : "" }));
  for (const link of data.links) {
    if (!known.has(link.to_id)) {  // a link to a forgotten node: drawn dashed to a ghost
      known.add(link.to_id);
      elements.push({ data: { id: link.to_id, label: t("forgotten") }, classes: "gone" });
    }
    elements.push({ data: { id: `${link.from_id}-${link.to_id}`, source: link.from_id,
      target: link.to_id, strength: link.strength }, classes: link.dangling ? "dangling" : "" });
  }
  if (cy) cy.destroy();
  cy = window.cytoscape({
    container: document.getElementById("cy"),
    elements,
    layout: { name: elements.length > 300 ? "grid" : "cose", animate: false },
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, color: "#1b1b1b",
        "background-color": "#5b7fa6", width: 18, height: 18 } },
      { selector: "node.focus", style: { "background-color": "#b35c00", "border-width": 3,
        "border-color": "#1b1b1b" } },
      { selector: "node.gone", style: { "background-color": "#c9ccd1" } },
      { selector: "node.found", style: { "border-width": 4, "border-color": "#0b5394" } },
      { selector: "edge", style: { width: "mapData(strength, 0, 1, 1, 8)", "line-color": "#8a9099",
        "target-arrow-shape": "triangle", "target-arrow-color": "#8a9099", "curve-style": "bezier" } },
      { selector: "edge.dangling", style: { "line-style": "dashed" } },
    ],
  });
  cy.on("tap", "node", (event) => showNode(event.target.id(), detail));
  document.getElementById("cy").dataset.nodes = String(data.nodes.length);
}

async function showNode(id, detail) {
  if (!/^\d+$/.test(id)) return;
  const n = await api(`/api/v1/graph/nodes/${id}`);
  const links = (items) => table([t("node"), "strength", "relation"], items.map((l) =>
    [l.dangling ? `${l.node_id} (${t("forgotten")})` : l.node_id, l.strength, l.relation || ""]));
  detail.replaceChildren(el("h3", {}, `${t("node")} ${n.node_id}${n.focus ? " · " + t("focus") : ""}`),
    el("div", { class: "text" }, n.content), el("p", { class: "meta" }, (n.keywords || []).join(", ")),
    el("h4", {}, t("links_out")), links(n.out), el("h4", {}, t("links_in")), links(n.in));
}

async function graphRecall(found) {
  const words = document.getElementById("graph-keywords").value.trim();
  if (!words) return;
  const data = await api("/api/v1/graph/recall", { keywords: words, ...scope() });
  if (cy) {
    cy.nodes().removeClass("found");
    for (const r of data.results) cy.getElementById(r.node_id).addClass("found");
  }
  found.replaceChildren(el("h3", {}, t("keywords")), ...(data.results.length
    ? data.results.map((r) => el("article", { class: "card" }, el("div", { class: "meta" }, r.node_id),
      el("div", { class: "text" }, r.content)))
    : [el("p", {}, t("no_results"))]));
}

// -- navigation ------------------------------------------------------------------

const PAGES = { overview, sessions, memories, graph };

async function route() {
  const name = location.hash.slice(1) in PAGES ? location.hash.slice(1) : "overview";
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.page === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  say("");
  document.body.dataset.ready = "";
  try {
    await PAGES[name]();
  } catch (error) {
    if (!document.getElementById("status").textContent) say("error: " + error.message, true);
  }
  document.body.dataset.ready = name;  // what the tests and the benchmark wait for
}

for (const link of document.querySelectorAll("[data-i18n]")) link.textContent = t(link.dataset.i18n);
window.addEventListener("hashchange", route);
route();
