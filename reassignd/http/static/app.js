// The status page: reads the HTTP API with the token kept in sessionStorage, follows
// GET /v1/events (server-sent events, read with fetch so the token can be sent) and re-reads
// what a record changed; a light poll keeps the byte counters moving between records.
"use strict";

const TOKEN_KEY = "reassignd.token";
// "0-0": the first connection replays the controller's recent history into the events list.
// auth: "unknown" until the first answer, "ok", "needed" (401, no token sent) or "rejected"
// (401 to the token sent): until it is "ok" the tables show nothing as if it were the data.
const state = { role: null, user: null, events: [], lastId: "0-0", streaming: false, auth: "unknown" };
// the batch whose picture is shown: the one chosen with its row's button, else the oldest unfinished
const picture = { chosen: null, shown: null, key: null, fetchedAt: 0, loading: false };
const PICTURE_EVERY_MS = 10000;  // sizes grow while a batch runs: redrawn at most this often
const PLACEHOLDERS = ["no-moves", "no-batches", "no-brokers", "no-events"];

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

// a 401 to the headers sent: "rejected" when they carried a token, "needed" when not; nothing
// when the token changed meanwhile (an answer to the previous token says nothing of this one)
function unauthorized(sent) {
  if ((sent.Authorization || "") !== (headers().Authorization || "")) return;
  setAuth("Authorization" in sent ? "rejected" : "needed");
}

function setAuth(auth) {
  state.auth = auth;
  const who = document.getElementById("auth");
  who.dataset.auth = auth;
  who.className = auth === "rejected" ? "error-inline" : "muted";
  const signedInAs = state.user ? `${state.user} (${state.role})` : "";
  who.textContent = { ok: signedInAs, unknown: "", needed: "not signed in", rejected: "token rejected" }[auth];
  document.getElementById("login").hidden = auth === "unknown" || auth === "ok";
  if (auth === "ok") return;
  // nothing read: say so instead of showing empty tables as if nothing moved
  for (const id of ["moves", "batches", "brokers"]) document.querySelector(`#${id} tbody`).replaceChildren();
  document.getElementById("events").replaceChildren();
  document.getElementById("moving-count").textContent = "";
  clearPicture();
  for (const id of PLACEHOLDERS) {
    const p = document.getElementById(id);
    p.textContent = p.dataset.signedOut;
    p.hidden = false;
  }
}

function signedIn() {
  if (state.auth === "ok") return;
  setAuth("ok");
  document.getElementById("no-events").hidden = true;
}

async function api(path, options = {}) {
  const sent = headers();
  const resp = await fetch(path, { ...options, headers: { ...sent, ...(options.headers || {}) } });
  if (resp.status === 401) {
    const rejected = "Authorization" in sent;
    unauthorized(sent);
    const error = new Error(rejected
      ? "token rejected (401): this controller does not know the token given; enter another"
      : "sign in: this controller needs a token (401)");
    error.status = 401;
    throw error;
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

// a row's key: its data-* attribute (data-tp, data-batch, data-broker)
function rowKey(row) {
  const entry = Object.entries(row.dataset)[0];
  return entry === undefined ? null : entry.join("=");
}

// The rows drawn again in place: a row whose key comes again keeps its element and its unchanged
// cells (only a changed cell is replaced), and the body is rebuilt only when the rows or their
// order change. A refresh that redrew the whole table between a button's press and release lost
// the click (the press on one button, the release on its replacement).
function fill(tableId, emptyId, rows) {
  const body = document.querySelector(`#${tableId} tbody`);
  const shown = new Map();
  for (const row of body.children) {
    const key = rowKey(row);
    if (key !== null) shown.set(key, row);
  }
  const next = rows.map((row) => {
    const key = rowKey(row);
    const prev = key === null ? undefined : shown.get(key);
    if (prev === undefined || prev.cells.length !== row.cells.length || prev.className !== row.className) {
      return row;
    }
    const fresh = [...row.cells];
    [...prev.cells].forEach((cell, i) => {
      if (cell.outerHTML !== fresh[i].outerHTML) prev.replaceChild(fresh[i], cell);
    });
    return prev;
  });
  const current = [...body.children];
  if (next.length !== current.length || next.some((row, i) => row !== current[i])) {
    body.replaceChildren(...next);
  }
  const empty = document.getElementById(emptyId);
  empty.textContent = empty.dataset.empty;
  empty.hidden = rows.length > 0;
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
    cells[6].append(el("button", { class: "picture", onclick: () => { picture.chosen = b.batch_id; renderPicture(batches); } }, "Picture"));
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

function clearPicture() {
  picture.shown = null;
  picture.key = null;
  const box = document.getElementById("picture");
  box.replaceChildren();
  box.dataset.batch = "";
  document.getElementById("picture-batch").textContent = "";
  document.getElementById("picture-section").hidden = true;
}

// the batch's before/after picture, drawn by the controller (GET /v1/batches/{id}/picture.svg),
// parsed as SVG (never as HTML) and put in the page; fetched again when the batch changes state,
// another is chosen, or PICTURE_EVERY_MS passed
async function renderPicture(batches) {
  const unfinished = batches.filter((b) => ["running", "paused", "pending"].includes(b.state));
  const batch = batches.find((b) => b.batch_id === picture.chosen) ||
    unfinished.find((b) => b.state === "running") || unfinished[0];
  if (!batch) { clearPicture(); return; }
  const key = `${batch.batch_id} ${batch.state}`;
  if (picture.loading || (key === picture.key && Date.now() - picture.fetchedAt < PICTURE_EVERY_MS)) return;
  picture.loading = true;
  try {
    const sent = headers();
    const path = `/v1/batches/${encodeURIComponent(batch.batch_id)}/picture.svg`;
    const resp = await fetch(path, { headers: sent });
    if (resp.status === 401) { unauthorized(sent); return; }
    if (!resp.ok) throw new Error(`GET ${path}: ${resp.status}`);
    const doc = new DOMParser().parseFromString(await resp.text(), "image/svg+xml");
    if (doc.documentElement.localName !== "svg" || doc.querySelector("parsererror")) {
      throw new Error(`GET ${path}: not an SVG document`);
    }
    const box = document.getElementById("picture");
    box.replaceChildren(document.importNode(doc.documentElement, true));
    box.dataset.batch = batch.batch_id;
    document.getElementById("picture-batch").textContent = `(batch ${batch.batch_id}, ${batch.state})`;
    document.getElementById("picture-section").hidden = false;
    picture.shown = batch.batch_id;
    picture.key = key;
    picture.fetchedAt = Date.now();
  } catch (e) {
    showError(e.message);
  } finally {
    picture.loading = false;
  }
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
  fill("brokers", "no-brokers", rows);
}

let refreshing = null;
async function refresh() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    try {
      const status = await api("/v1/status");
      signedIn();
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
      renderPicture(batches.batches || []);  // not awaited: the tables do not wait for the picture
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
    const named = record.topics || record.partitions || [];
    if (!what && named.length) what = named.slice(0, 3).join(" ") + (named.length > 3 ? " …" : "");
    what = `${record.action} ${what} by ${record.user ?? "(no token)"}: ${auditOutcome(result)}`;
  }
  const refused = record.type === "audit" && Object.keys(record.result?.errors || {}).length > 0;
  const li = el("li", { "data-type": record.type, class: refused ? "refused" : "" },
    `${record.time.slice(11, 19)}  ${record.type}  ${what}`);
  const list = document.getElementById("events");
  list.prepend(li);
  while (list.children.length > 100) list.lastChild.remove();
}

// an audited request's outcome: its status and top-level error, and the items refused one by one
// (a CreateTopics whose every topic was refused answers NONE at the top: the items say why)
function auditOutcome(result) {
  const items = Object.entries(result.errors || {});
  const top = [result.status, result.error_name].filter((x) => x != null);
  if (!items.length) return top.join(" ");
  const names = result.error_names || {};
  const shown = items.slice(0, 5).map(([item, code]) => `${item} ${names[code] || `error ${code}`}`);
  const all = result.errors_count || items.length;
  const more = all > shown.length ? `, … ${all - shown.length} more` : "";
  const head = result.error_name && result.error_name !== "NONE" ? `${top.join(" ")}; ` : `${result.status != null ? `${result.status} ` : ""}`;
  return `${head}refused: ${shown.join(", ")}${more}`;
}

async function follow() {
  for (;;) {
    try {
      const h = headers();
      if (state.lastId) h["Last-Event-ID"] = state.lastId;
      const resp = await fetch("/v1/events", { headers: h });
      if (resp.status === 401) unauthorized(h);
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
    setAuth("unknown");
    whoami().then(refresh);
  });
  await whoami();
  await refresh();
  follow();
  setInterval(refresh, 2000);  // byte counters between records
}

async function whoami() {
  try {
    const caller = await api("/v1/whoami");
    state.role = caller.role;
    state.user = caller.user;
  } catch (e) {
    state.role = null;
    state.user = null;
  }
}

start();
