// The dashboard: reads /api/v1 every few seconds and sends the actions there.
// No framework, no build step. Every write carries the page's CSRF token.
"use strict";
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const main = document.querySelector("main");
  const refresh = Number(main.dataset.refresh) || 2000;
  const spider = main.dataset.spider || "";
  const quotes = main.dataset.kind === "quote";
  const $ = (id) => document.getElementById(id);
  const text = (value) => (value === null || value === undefined ? "" : String(value));
  const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en") : text(n));

  function showError(message) {
    const el = $("error");
    el.textContent = message || "";
    el.hidden = !message;
  }

  async function api(path, options = {}) {
    const headers = { "X-CSRF-Token": csrf, ...(options.headers || {}) };
    // every call is about the crawl of the page's spider
    if (spider) path += (path.includes("?") ? "&" : "?") + "spider=" + encodeURIComponent(spider);
    const response = await fetch("/api/v1" + path, { credentials: "same-origin", ...options, headers });
    if (response.status === 401) { window.location = "/login"; throw new Error("login required"); }
    const body = (response.headers.get("content-type") || "").includes("json") ? await response.json() : await response.text();
    if (!response.ok && response.status !== 422) {
      throw new Error(`${path}: ${response.status} ${body.detail || body}`);
    }
    return body;
  }

  function row(cells, classes = []) {
    const tr = document.createElement("tr");
    cells.forEach((cell, i) => {
      const td = document.createElement("td");
      if (cell instanceof Node) td.append(cell); else td.textContent = text(cell);
      if (classes[i]) td.className = classes[i];
      tr.append(td);
    });
    return tr;
  }

  function fill(tableId, rows) {
    const body = $(tableId).querySelector("tbody");
    body.replaceChildren(...rows);
  }

  function button(label, onclick) {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = label; b.addEventListener("click", onclick);
    return b;
  }

  // --- status, workers ------------------------------------------------------------
  const FIGURES = ["queued_requests", "pending_seeds", "in_flight", "seen_fingerprints", "live_workers",
    "pages_per_min", "items_stored", "listed_products", "items_invalid", "dead_letters",
    "browser_queued"];

  async function loadStatus() {
    const status = await api("/status");
    $("state").textContent = status.state;
    $("state").dataset.state = status.state;
    $("detail").textContent = status.detail;
    for (const name of FIGURES) $("f-" + name).textContent = fmt(status[name]);
    $("pause").disabled = status.state === "paused";
    $("resume").disabled = status.state !== "paused";
    await loadSites();
    return status;
  }

  // the sites: their figures and data checks (a badge, a table, the failing checks
  // with what they saw and example URLs), and what needs a browser
  async function loadSites() {
    const figures = await api("/sites");
    showChecks(figures);
    showBrowserSites(figures.browser);
  }

  function showChecks(figures) {
    const report = figures.checks || { failing: 0, sites: [] };
    const badge = $("checks-badge");
    badge.dataset.failing = String(report.failing);
    badge.textContent = report.failing ? `${report.failing} data check(s) failing` : "data checks ok";
    fill("sites", figures.sites.map((s) => {
      const failing = s.checks_failing;
      const cell = document.createElement("span");
      cell.className = "badge";
      cell.dataset.failing = failing && failing.length ? String(failing.length) : "0";
      cell.textContent = failing === null || failing === undefined ? "–" : (failing.length ? failing.join(", ") : "ok");
      return row([s.site, fmt(s.pages), fmt(s.products), cell], ["", "num", "num", ""]);
    }));
    const items = [];
    for (const site of report.sites) {
      for (const check of site.checks) {
        if (check.status !== "fail") continue;
        const li = document.createElement("li");
        const head = document.createElement("b");
        head.textContent = `${site.site}: ${check.check}`;
        li.append(head, ` ${check.message} (threshold ${check.threshold}, min ${check.min_rows} rows)`);
        const examples = document.createElement("ul");
        for (const url of check.examples) {
          const e = document.createElement("li");
          e.textContent = url;
          examples.append(e);
        }
        li.append(examples);
        items.push(li);
      }
    }
    $("checks-list").replaceChildren(...items);
  }

  // the sites (or sections) that need a browser, and the pages that wait for one
  function showBrowserSites(browser) {
    const note = $("browser-sites");
    const scopes = browser.scopes.map((s) => s.scope);
    note.hidden = !scopes.length && !browser.waiting;
    const by = browser.waiting_by_site || {};
    const waiting = Object.entries(by).map(([site, n]) => `${site} ${n}`).join(", ");
    note.textContent = `Need a browser: ${scopes.join(", ") || "(none known)"}; ` +
      `${browser.waiting} page(s) wait for a worker with one${waiting ? " (" + waiting + ")" : ""}.`;
  }

  async function loadWorkers() {
    const report = await api("/workers");
    const now = report.time;
    fill("workers", report.workers.map((w) => row([
      w.worker, w.host, workerState(w, now), fmt(w.pages), fmt(w.items),
      fmt(w.pages_per_min), w.updated_at ? `${Math.max(0, Math.round(now - w.updated_at))} s ago` : "",
    ], ["", "", w.stale ? "stale" : "", "num", "num", "num", ""])));
  }

  // a stale worker stopped beating without finishing (cut off from Redis, stalled, killed)
  function workerState(w, now) {
    if (w.live || !w.stale) return w.state;
    if (!w.stale_since) return `${w.state}, stale: no heartbeat`;
    const since = new Date(w.stale_since * 1000).toLocaleTimeString("en-GB");
    return `${w.state}, stale: no heartbeat since ${since} (${Math.max(0, Math.round(now - w.stale_since))} s ago)`;
  }

  // --- chart ----------------------------------------------------------------------
  async function loadSeries() {
    const series = await api("/series?minutes=60");
    const svg = $("chart");
    const W = Math.max(300, Math.round(svg.clientWidth || 720)), H = 180, pad = 34;
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const points = series.points;
    const top = Math.max(1, ...points.map((p) => Math.max(p.pages, p.items)));
    const y = (v) => H - 18 - (v * (H - 30)) / top;
    const slot = (W - pad - 8) / Math.max(1, points.length);
    const bar = Math.max(1, slot / 2 - 1);
    const bars = (key, offset, colour) => points.map((p, i) => p[key] > 0
      ? `<rect x="${(pad + i * slot + offset).toFixed(1)}" y="${y(p[key]).toFixed(1)}" width="${bar.toFixed(1)}" height="${(y(0) - y(p[key])).toFixed(1)}" fill="${colour}"><title>${p[key]} ${key}</title></rect>`
      : "").join("");
    svg.innerHTML = `
      <line x1="${pad}" y1="${y(0)}" x2="${W - 8}" y2="${y(0)}" stroke="#ccc"/>
      <line x1="${pad}" y1="${y(top)}" x2="${W - 8}" y2="${y(top)}" stroke="#eee"/>
      <text x="2" y="${y(top) + 4}" font-size="10" fill="#666">${top}</text>
      <text x="2" y="${y(0) + 4}" font-size="10" fill="#666">0</text>
      <text x="${pad}" y="${H - 4}" font-size="10" fill="#666">-60 min</text>
      <text x="${W - 30}" y="${H - 4}" font-size="10" fill="#666">now</text>
      ${bars("pages", 0, "#1a73e8")}${bars("items", bar + 1, "#e37400")}`;
    const last = points[points.length - 1] || { pages: 0, items: 0 };
    $("chart-now").textContent = `this minute: ${last.pages} pages, ${last.items} items`;
  }

  // --- dead letters, invalid items ------------------------------------------------
  async function loadDead() {
    const groups = await api("/dead/reasons");
    fill("dead", groups.reasons.map((g) => {
      const actions = document.createElement("span");
      actions.append(
        button("list", () => listDead(g.reason)),
        button("requeue", () => deadAction("requeue", g.reason)),
        button("clear", () => { if (confirm(`Delete the ${g.count} dead letters "${g.reason}"?`)) deadAction("clear", g.reason); }),
      );
      const tr = row([fmt(g.count), g.reason, actions], ["num", "", ""]);
      tr.dataset.reason = g.reason;
      return tr;
    }));
  }

  async function listDead(reason) {
    const listing = await api(`/dead?limit=20&reason=${encodeURIComponent(reason)}`);
    const list = document.createElement("ul");
    for (const r of listing.records) {
      const li = document.createElement("li");
      li.textContent = `${text(r.url)} (${text(r.worker)})`;
      list.append(li);
    }
    const title = document.createElement("p");
    title.textContent = `${listing.total} dead letters "${reason}"` + (listing.total > 20 ? ", first 20:" : ":");
    $("dead-list").replaceChildren(title, list);
  }

  async function deadAction(action, reason) {
    const answer = await api(`/dead/${action}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ reason }),
    });
    $("dead-list").textContent = action === "requeue"
      ? `requeued ${answer.requeued} (${answer.requests} requests, ${answer.seeds} seeds); ${answer.remaining} remain`
      : `cleared ${answer.cleared}`;
    await Promise.all([loadDead(), loadStatus()]);
  }

  function errorList(errors) {
    const ul = document.createElement("ul");
    ul.className = "errors";
    for (const e of Array.isArray(errors) ? errors : [errors]) {
      const li = document.createElement("li");
      li.textContent = e && typeof e === "object" ? `${e.field || "(item)"}: ${e.message || JSON.stringify(e)}` : text(e);
      ul.append(li);
    }
    return ul;
  }

  async function loadInvalid() {
    const listing = await api("/invalid?limit=20");
    fill("invalid", listing.records.map((r) => row([r.url || (r.item && r.item.url) || "", errorList(r.errors)])));
  }

  // --- seeds ----------------------------------------------------------------------
  function seedMeta() {
    const meta = {};
    for (const name of ["strategy", "allow", "deny", "category", "label"]) {
      const value = $("seed-" + name).value.trim();
      if (value) meta[name] = value;
    }
    for (const name of ["max_pages", "max_depth"]) {
      const value = $("seed-" + name).value.trim();
      if (value) meta[name] = Number(value);
    }
    return meta;
  }

  // plain URL lines get the form's meta as JSON lines; JSON lines and comments pass as they are
  function seedBody(raw, meta) {
    if (!Object.keys(meta).length) return { body: raw, type: "text/plain" };
    const lines = raw.split("\n").map((line) => {
      const t = line.trim();
      if (!t || t.startsWith("#") || t.startsWith("{")) return line;
      return JSON.stringify({ url: t, meta });
    });
    return { body: lines.join("\n"), type: "application/x-ndjson" };
  }

  $("seed-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = $("seed-file").files[0];
    const raw = file ? await file.text() : $("seed-text").value;
    const { body, type } = seedBody(raw, seedMeta());
    try {
      const answer = await api("/seeds", { method: "POST", headers: { "Content-Type": type }, body });
      const lines = [`accepted ${answer.accepted}, already seeded ${answer.already_seeded}, rejected ${answer.rejected}`];
      for (const r of answer.rejected_lines) lines.push(`line ${r.line}: ${r.reason}`);
      $("seed-answer").textContent = lines.join("\n");
      showError("");
      await loadStatus();
    } catch (error) { $("seed-answer").textContent = String(error.message); }
  });

  // --- pause, resume --------------------------------------------------------------
  for (const action of ["pause", "resume"]) {
    $(action).addEventListener("click", async () => {
      try { await api("/" + action, { method: "POST" }); await loadStatus(); } catch (error) { showError(error.message); }
    });
  }

  // --- products -------------------------------------------------------------------
  let nextPage = null;
  let onFirstPage = true;  // the first page follows the crawl; a later one stays put

  function productQuery() {
    const params = new URLSearchParams({ limit: "20" });
    for (const name of quotes ? ["q", "site"] : ["q", "site", "availability"]) {
      const value = $("p-" + name).value.trim();
      if (value) params.set(name, value);
    }
    return (quotes ? "/quotes?" : "/products?") + params;
  }

  function quoteRow(q) {
    const link = document.createElement("a");
    link.className = "product"; link.textContent = q.symbol; link.title = q.url;
    link.addEventListener("click", () => loadQuoteHistory(q));
    let site = ""; try { site = new URL(q.url).host; } catch (e) { site = ""; }
    return row([link, text(q.name), `${text(q.price)} ${text(q.currency)}`, text(q.change),
      fmt(q.volume), text(q.as_of).slice(0, 19).replace("T", " "), site],
    ["", "", "num", "num", "num", "", ""]);
  }

  async function loadQuoteHistory(quote) {
    const answer = await api("/quotes/history?url=" + encodeURIComponent(quote.url));
    $("history-title").textContent = `Observations: ${quote.symbol}`;
    $("history").querySelector("tbody").replaceChildren(...answer.history.map((h) =>
      row([h.as_of.slice(0, 19).replace("T", " "), text(h.price), text(h.currency), fmt(h.volume)])));
    $("history").hidden = false;
  }

  async function loadProducts(path) {
    let page;
    try { page = await api(path); } catch (error) {
      $("products-note").textContent = error.message; $("products-note").hidden = false;
      return;
    }
    $("products-note").hidden = true;
    if (quotes) { fill("products", page.items.map(quoteRow)); } else fill("products", page.items.map((p) => {
      const link = document.createElement("a");
      link.className = "product"; link.textContent = p.name; link.title = p.url;
      link.addEventListener("click", () => loadHistory(p));
      const price = p.price === null || p.price === undefined ? "" : `${p.price} ${text(p.currency)}`;
      let site = ""; try { site = new URL(p.url).host; } catch (e) { site = ""; }
      return row([link, price, text(p.availability), site, text(p.last_seen).slice(0, 19).replace("T", " ")]);
    }));
    if (page.next) {  // the API's own link, without the spider: api() adds it again
      const next = new URL(page.next);
      next.searchParams.delete("spider");
      nextPage = next.pathname.replace("/api/v1", "") + next.search;
    } else nextPage = null;
    $("p-next").disabled = !nextPage;
  }

  async function loadHistory(product) {
    const answer = await api("/products/history?url=" + encodeURIComponent(product.url));
    $("history-title").textContent = `Price history: ${product.name}`;
    $("history").querySelector("tbody").replaceChildren(...answer.history.map((h) =>
      row([h.seen_at.slice(0, 19).replace("T", " "), text(h.price), text(h.currency), text(h.availability)])));
    $("history").hidden = false;
  }

  $(quotes ? "quote-form" : "product-form").addEventListener("submit", (event) => { event.preventDefault(); onFirstPage = true; loadProducts(productQuery()); });
  $("p-first").addEventListener("click", () => { onFirstPage = true; loadProducts(productQuery()); });
  $("p-next").addEventListener("click", () => { if (nextPage) { onFirstPage = false; loadProducts(nextPage); } });

  // --- the loop -------------------------------------------------------------------
  let ticks = 0;
  async function tick() {
    try {
      const jobs = [loadStatus(), loadWorkers(), loadSeries()];
      if (ticks % 3 === 0) {  // the lists: every third tick
        jobs.push(loadDead(), loadInvalid());
        if (onFirstPage && ticks > 0) jobs.push(loadProducts(productQuery()));
      }
      await Promise.all(jobs);
      showError("");
    } catch (error) { showError(error.message); }
    ticks += 1;
    setTimeout(tick, refresh);
  }
  tick();
  loadProducts(productQuery());
})();
