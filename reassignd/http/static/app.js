// The status page: reads the HTTP API with the token kept in sessionStorage, follows
// GET /v1/events (server-sent events, read with fetch so the token can be sent) and re-reads
// what a record changed; a light poll keeps the byte counters moving between records.
"use strict";

const TOKEN_KEY = "reassignd.token";
// "0-0": the first connection replays the controller's recent history into the events list
const state = { role: null, events: [], lastId: "0-0", streaming: false };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function headers() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function api(path, options = {}) {
  const resp = await fetch(path, { ...options, headers: { ...headers(), ...(options.headers || {}) } });
  if (resp.status === 401) {
    document.getElementById("login").hidden = false;
    throw new Error("a token is needed (401)");
  }
  const body = resp.headers.get("Content-Type")?.includes("json") ? await resp.json() : null;
  if (!resp.ok) {
    const why = body && body.error_message ? body.error_message : resp.statusText;
    const error = new Error(`${options.method || "GET"} ${path}: ${resp.status} ${why}`);
    error.status = resp.status;
    throw error;
  }
  return body;
}

function bytes(n) {
  if (n == null) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function bar(done, total, stuck) {
  const pct = total > 0 ? Math.min(100, Math.floor((100 * done) / total)) : 0;
  const fill = el("span");
  fill.style.width = `${pct}%`;
  const b = el("span", { class: stuck ? "bar stuck" : "bar", "data-pct": String(pct) }, fill);
  return el("span", {}, b, el("span", { class: "pct" }, `${pct}%  ${bytes(done)} / ${bytes(total)}`));
}

function showError(message) {
  const p = document.getElementById("error");
  p.textContent = message || "";
  p.hidden = !message;
}

function fill(tableId, emptyId, rows) {
  const body = document.querySelector(`#${tableId} tbody`);
  body.replaceChildren(...rows);
  if (emptyId) document.getElementById(emptyId).hidden = rows.length > 0;
}

async function act(label, method, path) {
  try {
    await api(path, { method, headers: { "Content-Type": "application/json" }, body: method === "POST" ? "{}" : undefined });
    showError("");
  } catch (e) {
    showError(`${label}: ${e.message}`);
  }
  refresh();
}

function renderMoves(topics, stuck) {
  const rows = [];
  for (const t of topics) {
    for (const p of t.partitions) {
      const name = `${t.name}-${p.partition}`;
      const prog = p.progress || {};
      const cells = [
        el("td", {}, name),
        el("td", {}, `${p.original_replicas.join(",")} → ${p.target_replicas.join(",")}`),
        el("td", {}, bar(prog.bytes_done || 0, prog.bytes_total || 0, stuck.has(name))),
        el("td", {}, prog.bytes_per_s != null ? `${bytes(prog.bytes_per_s)}/s` : ""),
        el("td", {}, prog.eta_s != null ? `${prog.eta_s} s` : ""),
        el("td", {}),
      ];
      if (state.role === "admin") {
        const path = `/v1/reassignments/${encodeURIComponent(t.name)}/${p.partition}`;
        cells[5].append(el("button", { class: "danger", onclick: () => act(`cancel ${name}`, "DELETE", path) }, "Cancel"));
      }
      rows.push(el("tr", { "data-tp": name }, ...cells));
    }
  }
  document.getElementById("moving-count").textContent = rows.length ? `(${rows.length})` : "";
  fill("moves", "no-moves", rows);
}

function renderBatches(batches) {
  const rows = batches.map((b) => {
    const done = (b.counts && b.counts.completed) || 0;
    const all = Object.values(b.counts || {}).reduce((x, y) => x + y, 0);
    const cells = [
      el("td", {}, b.batch_id),
      el("td", {}, b.plan_id || ""),
      el("td", {}, b.state),
      el("td", {}, bar(b.bytes_done || 0, b.bytes_total || 0, (b.stuck || []).length > 0)),
      el("td", {}, `${done} / ${all}`),
      el("td", { class: (b.stuck || []).length ? "stuck" : "" }, String((b.stuck || []).length)),
      el("td", {}),
    ];
    const unfinished = ["pending", "running", "paused"].includes(b.state);
    if (state.role === "admin" && unfinished) {
      const path = `/v1/batches/${encodeURIComponent(b.batch_id)}/stop`;
      cells[6].append(el("button", { class: "danger", onclick: () => act(`stop ${b.batch_id}`, "POST", path) }, "Stop"));
    }
    return el("tr", { "data-batch": b.batch_id }, ...cells);
  });
  fill("batches", "no-batches", rows);
  const stuck = new Set();
  for (const b of batches) for (const s of b.stuck || []) stuck.add(`${s.topic}-${s.partition}`);
  return stuck;
}

async function renderBrokers(status, brokers) {
  const counts = new Map();
  const topics = (await api("/v1/topics")).topics || [];
  if (topics.length <= 200) {
    const details = await Promise.all(topics.map((t) => api(`/v1/topics/${encodeURIComponent(t.name || t)}`)));
    for (const d of details) {
      for (const p of d.partitions || []) {
        for (const r of p.replicas) {
          const c = counts.get(r) || { replicas: 0, leaders: 0 };
          c.replicas += 1;
          if (r === p.leader) c.leaders += 1;
          counts.set(r, c);
        }
      }
    }
  }
  const live = new Set((status.brokers && status.brokers.live) || []);
  const ids = new Set([...brokers.map((b) => b.id), ...counts.keys()]);
  const byId = new Map(brokers.map((b) => [b.id, b]));
  const rows = [...ids].sort((a, b) => a - b).map((id) => {
    const c = counts.get(id) || { replicas: 0, leaders: 0 };
    const up = live.has(id);
    return el("tr", { "data-broker": String(id) },
      el("td", {}, id), el("td", {}, (byId.get(id) || {}).rack || ""),
      el("td", { class: up ? "" : "dead" }, up ? "live" : "dead"),
      el("td", {}, c.replicas), el("td", {}, c.leaders));
  });
  fill("brokers", null, rows);
}

let refreshing = null;
async function refresh() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    try {
      const status = await api("/v1/status");
      const who = status.active_controller;
      document.getElementById("controller").textContent =
        `controller ${status.controller_id} (${status.active ? "active" : "standby"}), epoch ${status.controller_epoch}` +
        (who && !status.active ? `, active: ${who.id}` : "");
      if (!status.active) {
        showError(who ? `this instance is a standby; the active one is at ${who.http}` : "no active controller");
        return;
      }
      const [brokers, moving, batches] = await Promise.all([
        api("/v1/brokers"), api("/v1/reassignments"), api("/v1/batches"),
      ]);
      const stuck = renderBatches(batches.batches || []);
      renderMoves(moving.topics || [], stuck);
      await renderBrokers(status, brokers.brokers || []);
      showError("");
    } catch (e) {
      showError(e.message);
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

function addEvent(record) {
  let what = [record.topic != null && record.partition != null ? `${record.topic}-${record.partition}` : record.topic,
    record.batch_id, record.broker_id != null ? `broker ${record.broker_id}` : null].filter(Boolean).join(" ");
  if (record.type === "audit") {  // who changed what, and how it ended
    const result = record.result || {};
    what = `${record.action} ${what} by ${record.user ?? "(no token)"}: ${result.status ?? ""} ${result.error_name ?? ""}`;
  }
  const li = el("li", { "data-type": record.type }, `${record.time.slice(11, 19)}  ${record.type}  ${what}`);
  const list = document.getElementById("events");
  list.prepend(li);
  while (list.children.length > 100) list.lastChild.remove();
}

async function follow() {
  for (;;) {
    try {
      const h = headers();
      if (state.lastId) h["Last-Event-ID"] = state.lastId;
      const resp = await fetch("/v1/events", { headers: h });
      if (!resp.ok) throw new Error(`GET /v1/events: ${resp.status}`);
      setStream(true);
      const reader = resp.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          onFrame(frame);
        }
      }
    } catch (e) {
      // fall through: reconnect below
    }
    setStream(false);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

let pending = null;
function onFrame(frame) {
  let id = null, data = null;
  for (const line of frame.split("\n")) {
    if (line.startsWith("id: ")) id = line.slice(4);
    else if (line.startsWith("data: ")) data = line.slice(6);
  }
  if (!data) return;
  const record = JSON.parse(data);
  if (id) state.lastId = id;
  if (record.type === "gap") return;  // older records than the history holds: nothing to show
  if (record.type !== "reassignment_progress") addEvent(record);
  if (!pending) pending = setTimeout(() => { pending = null; refresh(); }, 250);
}

function setStream(on) {
  const s = document.getElementById("stream");
  s.textContent = on ? "events: live" : "events: reconnecting";
  s.className = on ? "pill on" : "pill off";
}

async function start() {
  document.getElementById("login").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value.trim());
    document.getElementById("login").hidden = true;
    whoami().then(refresh);
  });
  await whoami();
  await refresh();
  follow();
  setInterval(refresh, 2000);  // byte counters between records
}

async function whoami() {
  try {
    state.role = (await api("/v1/whoami")).role;
  } catch (e) {
    state.role = null;
  }
}

start();
