// embedsearch page: search, paper pages with similar papers, and the corpus map.
// Views are hash routes (#/search?q=…, #/paper/ID, #/similar/ID, #/map?q=…) so every
// view has a link and the back button works; all data comes from the JSON API.
"use strict";

(() => {
  const $ = (selector) => document.querySelector(selector);
  const SNIPPET_CHARS = 220;
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
    "#9c755f", "#ff9da7", "#86bcb6", "#d37295", "#8cd17d", "#a0cbe8", "#ffbe7d", "#499894",
    "#b6992d", "#f1ce63", "#79706e", "#d4a6c8", "#bab0ac", "#fabfd2", "#5778a4", "#e49444",
    "#6a9f58", "#967662", "#a87c9f", "#85b6b2", "#e7ca60", "#5f8f56", "#c85200", "#7b848f"];
  const state = { map: null, chart: null, extent: null, active: -1, poll: null };

  // -- small helpers ------------------------------------------------------------------
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child !== undefined && child !== null && child !== false) {
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
    }
    return node;
  }
  const enc = encodeURIComponent;
  const paperHref = (id) => `#/paper/${enc(id)}`;
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

  function snippet(text, limit = SNIPPET_CHARS) {
    const flat = String(text || "").split(/\s+/).join(" ").trim();
    if (flat.length <= limit) return flat;
    const cut = flat.slice(0, limit - 1);
    return cut.slice(0, cut.lastIndexOf(" ")).replace(/[,;:.]+$/, "") + "…";
  }

  function status(message, isError = false) {
    const node = $("#status");
    node.textContent = message;
    node.classList.toggle("error", isError);
  }

  // -- the access token, when the server wants one (serve --read-token) -----------------
  // Asked for once, kept for this tab only (sessionStorage), sent as a bearer header.
  const TOKEN_KEY = "embedsearch-token";
  let asking = null; // one prompt for the requests refused together
  let declined = false; // cancelled: do not ask again until the page is reloaded

  function askToken(refused) {
    if (declined) return Promise.resolve("");
    asking = asking || Promise.resolve().then(() => {
      const token = (window.prompt(refused ? "That token was refused. Access token:"
        : "This server needs an access token:") || "").trim();
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      else { sessionStorage.removeItem(TOKEN_KEY); declined = true; }
      asking = null;
      return token;
    });
    return asking;
  }

  async function authorizedFetch(url, options = {}) {
    const send = (token) => fetch(url, { ...options, headers: { ...options.headers,
      ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
    const used = sessionStorage.getItem(TOKEN_KEY);
    const response = await send(used);
    if (response.status !== 401) return response;
    // Another request may have asked already while this one was on its way.
    const current = sessionStorage.getItem(TOKEN_KEY);
    const token = current && current !== used ? current : await askToken(Boolean(used));
    return token ? send(token) : response;
  }

  async function api(path, params) {
    const url = params ? `${path}?${params}` : path;
    const response = await authorizedFetch(url, { headers: { Accept: "application/json" } });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.detail || `${response.status} ${response.statusText}`);
    return data;
  }

  // -- the search form <-> the route's parameters ----------------------------------------
  const LIST_FIELDS = ["venue", "keyword"];

  function formParams() {
    const params = new URLSearchParams();
    params.set("q", $("#q").value.trim());
    const year = $("#year").value.trim();
    if (year) params.set("year", year);
    for (const name of LIST_FIELDS) {
      for (const value of $(`#${name}`).value.split(",")) {
        if (value.trim()) params.append(name, value.trim());
      }
    }
    params.set("k", $("#k").value);
    if ($("#mode").value !== "hybrid") params.set("mode", $("#mode").value);
    return params;
  }

  function fillForm(params) {
    $("#q").value = params.get("q") || "";
    $("#year").value = params.get("year") || "";
    for (const name of LIST_FIELDS) $(`#${name}`).value = params.getAll(name).join(", ");
    if (params.get("k")) $("#k").value = params.get("k");
    $("#mode").value = params.get("mode") || "hybrid";
    if (params.get("year") || params.getAll("venue").length || params.getAll("keyword").length) {
      $("#filters").open = true;
    }
  }

  function searchParams(params) {
    // Only what GET /search takes, from a route's parameters.
    const out = new URLSearchParams();
    for (const name of ["q", "k", "mode", "year", "venue", "keyword"]) {
      for (const value of params.getAll(name)) out.append(name, value);
    }
    return out;
  }

  // -- results ---------------------------------------------------------------------------
  function resultItem(hit, query) {
    const where = [hit.venue, hit.year].filter(Boolean).join(" ");
    // The bar shows closeness in meaning (cosine), comparable across modes.
    const closeness = hit.dense_score ?? hit.score;
    const width = Math.max(0, Math.min(1, closeness)) * 100;
    const mapHref = `#/map?${new URLSearchParams({ ...(query ? { q: query } : {}), focus: hit.id })}`;
    return el("li", { class: "result", "data-id": hit.id },
      el("span", { class: "rank", "aria-hidden": "true" }, hit.rank),
      el("a", { class: "title", href: paperHref(hit.id) }, hit.title),
      el("div", { class: "meta" },
        where && el("span", {}, where),
        el("span", { class: "score", title: "ranking score; the bar: cosine similarity to the query" },
          el("span", { class: "score-bar", "aria-hidden": "true" },
            el("i", { style: `width:${width.toFixed(0)}%` })),
          `score ${hit.score.toFixed(3)}`)),
      hit.evidence
        ? el("p", { class: "snippet evidence", title: "the sentence that best matches" },
          ...highlight(hit.evidence, hit.evidence_terms || []))
        : el("p", { class: "snippet" }, snippet(hit.abstract)),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "more", onclick: () => { location.hash = `#/similar/${enc(hit.id)}`; } },
          "More like this"),
        el("a", { class: "button", href: mapHref }, "On the map")));
  }

  function highlight(text, terms) {
    // The sentence as text nodes, the matching words in <mark>; never as HTML.
    if (!terms.length) return [text];
    const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const parts = text.split(new RegExp(`\\b(${escaped.join("|")})\\b`, "g"));
    return parts.map((part, i) => (i % 2 ? el("mark", {}, part) : part));
  }

  function resultList(hits, query) {
    state.active = -1;
    if (!hits.length) return el("p", {}, "No papers match. Loosen the filters or rephrase.");
    return el("ol", { class: "results", "aria-label": "Results" },
      hits.map((hit) => resultItem(hit, query)));
  }

  function show(...nodes) {
    const view = $("#view");
    view.replaceChildren(...nodes.filter(Boolean));
  }

  // -- views -----------------------------------------------------------------------------
  function showHome() {
    document.title = "embedsearch";
    status("");
    show(el("div", { class: "paper" },
      el("h1", { class: "page-title" }, "Find papers by meaning"),
      el("p", {}, "Describe a problem, a method or an idea in your own words: the closest " +
        "abstracts come first, whether or not they share your words."),
      el("p", {}, "Open a paper to see the papers most like it, or look at the ",
        el("a", { href: "#/map" }, "map of the whole corpus"), ".")));
    $("#q").focus();
  }

  async function showSearch(params) {
    fillForm(params);
    const query = params.get("q");
    document.title = `${query} · embedsearch`;
    status("Searching…");
    try {
      const data = await api("/search", searchParams(params));
      status(`${data.hits.length} papers closest to “${query}”`);
      show(resultList(data.hits, query));
    } catch (error) {
      status(error.message, true);
      show();
    }
  }

  function paperCard(paper, id) {
    const where = [paper.venue, paper.year].filter(Boolean).join(" ");
    const fields = [["Venue", where], ["Authors", paper.authors.join(", ")],
      ["Area", paper.primary_area], ["TL;DR", paper.tldr], ["Id", id]];
    return el("article", { class: "paper" },
      el("h1", { class: "page-title" }, paper.title),
      el("dl", { class: "fields" }, fields.filter(([, value]) => value).map(
        ([label, value]) => [el("dt", {}, label), el("dd", {}, value)])),
      paper.keywords.length > 0 && el("ul", { class: "chips", "aria-label": "Keywords" },
        paper.keywords.map((word) => el("li", {}, el("a", {
          href: `#/search?${new URLSearchParams({ q: word, keyword: word })}` }, word)))),
      el("p", { class: "abstract" }, paper.abstract),
      el("div", { class: "actions" },
        el("a", { class: "button", href: `#/similar/${enc(id)}` }, "More like this"),
        el("a", { class: "button", href: `#/map?${new URLSearchParams({ focus: id })}` }, "On the map"),
        /^https?:\/\//.test(paper.url) && el("a", { class: "button", href: paper.url, rel: "noopener" },
          "Paper's page ↗")));
  }

  async function showPaper(id) {
    status("Loading…");
    try {
      const [paper, similar] = await Promise.all([
        api(`/papers/${enc(id)}`), api(`/papers/${enc(id)}/similar`, "k=10")]);
      document.title = `${paper.title} · embedsearch`;
      status("");
      show(paperCard(paper, id), el("h2", { id: "similar-heading" }, "Similar papers"),
        resultList(similar.hits, null));
    } catch (error) {
      status(error.message, true);
      show();
    }
  }

  async function showSimilar(id) {
    status("Finding similar papers…");
    try {
      const [paper, similar] = await Promise.all([
        api(`/papers/${enc(id)}`), api(`/papers/${enc(id)}/similar`, `k=${$("#k").value}`)]);
      document.title = `Like “${paper.title}” · embedsearch`;
      status(`${similar.hits.length} papers most like “${paper.title}”`);
      show(el("p", {}, el("a", { href: paperHref(id) }, "← back to the paper")),
        resultList(similar.hits, null));
    } catch (error) {
      status(error.message, true);
      show();
    }
  }

  // -- the map ---------------------------------------------------------------------------
  async function loadMap() {
    if (state.map && state.map.status === "ready") return state.map;
    state.map = await api("/map");
    return state.map;
  }

  function pointSize(count) {
    return count > 40000 ? 2 : count > 10000 ? 3 : count > 2000 ? 4.5 : 9;
  }

  function mapSeries(map, highlights, focusIndex) {
    const byCluster = map.clusters.map(() => []);
    for (let i = 0; i < map.count; i++) byCluster[map.cluster[i]].push([map.x[i], map.y[i], i]);
    const large = map.count > 5000;
    const series = map.clusters.map((cluster, c) => ({
      type: "scatter", name: cluster.label, data: byCluster[c], symbolSize: pointSize(map.count),
      large, largeThreshold: 2000, itemStyle: { color: PALETTE[c % PALETTE.length], opacity: 0.75 },
      emphasis: { scale: 2 },
    }));
    series.push({
      type: "scatter", name: "labels", silent: true, z: 10, symbolSize: 0,
      labelLayout: { hideOverlap: true },
      data: map.clusters.map((cluster) => ({ value: [cluster.x, cluster.y], name: cluster.label })),
      label: { show: true, formatter: "{b}", color: "#1d2330", fontWeight: 600, fontSize: 12,
        backgroundColor: "rgba(255,255,255,0.8)", padding: [2, 5], borderRadius: 4 },
    });
    series.push({
      type: "scatter", name: "results", z: 20, symbolSize: 13,
      data: highlights.map(([i, rank]) => [map.x[i], map.y[i], i, rank]),
      itemStyle: { color: "#e4572e", borderColor: "#fff", borderWidth: 1.5 },
      label: { show: true, formatter: (p) => (p.value[3] <= 10 ? String(p.value[3]) : ""), position: "right",
        color: "#b7411f", fontWeight: 700 },
    });
    if (focusIndex !== undefined) {
      series.push({
        type: "effectScatter", name: "focus", z: 30, symbolSize: 16,
        data: [[map.x[focusIndex], map.y[focusIndex], focusIndex]],
        itemStyle: { color: "#1d2330" }, rippleEffect: { scale: 2.5, brushType: "stroke" },
      });
    }
    return series;
  }

  function clusterBounds(map) {
    // The box holding the middle 90% of each cluster's points, on each axis.
    const coords = map.clusters.map(() => ({ x: [], y: [] }));
    for (let i = 0; i < map.count; i++) {
      coords[map.cluster[i]].x.push(map.x[i]);
      coords[map.cluster[i]].y.push(map.y[i]);
    }
    const spread = (values) => {
      values.sort((a, b) => a - b);
      const at = (q) => values[Math.min(values.length - 1, Math.floor(q * values.length))];
      return [at(0.05), at(0.95)];
    };
    return coords.map(({ x, y }) => (x.length ? { x: spread(x), y: spread(y) } : null));
  }

  function zoomTo(bounds) {
    // Axes run from -0.02 to extent + 0.02; dataZoom takes percentages of that span.
    const percent = (value, top) => Math.max(0, Math.min(100, ((value + 0.02) / (top + 0.04)) * 100));
    const [x0, x1] = bounds.x;
    const [y0, y1] = bounds.y;
    const padX = Math.max(0.03, (x1 - x0) * 0.15);
    const padY = Math.max(0.03, (y1 - y0) * 0.15);
    const { x: tx, y: ty } = state.extent;
    state.chart.dispatchAction({ type: "dataZoom", dataZoomIndex: 0, start: percent(x0 - padX, tx), end: percent(x1 + padX, tx) });
    state.chart.dispatchAction({ type: "dataZoom", dataZoomIndex: 1, start: percent(y0 - padY, ty), end: percent(y1 + padY, ty) });
  }

  function wholeMap() {
    for (const index of [0, 1]) {
      state.chart.dispatchAction({ type: "dataZoom", dataZoomIndex: index, start: 0, end: 100 });
    }
  }

  function drawMap(map, highlights, focusIndex) {
    const box = el("div", { id: "map", role: "img",
      "aria-label": `Map of ${map.count} papers in ${map.clusters.length} clusters` });
    const bounds = clusterBounds(map);
    const reset = el("button", { type: "button", onclick: wholeMap }, "Whole map");
    const clusters = el("ul", { class: "cluster-list", "aria-label": "Clusters: zoom to one" },
      el("li", {}, reset),
      [...map.clusters].sort((a, b) => b.size - a.size).map((cluster) => el("li", {},
        el("button", { type: "button", disabled: !bounds[cluster.id], onclick: () => zoomTo(bounds[cluster.id]) },
          el("i", { style: `background:${PALETTE[cluster.id % PALETTE.length]}` }),
          `${cluster.label} (${cluster.size})`))));
    show(el("div", { class: "map-wrap" }, box,
      el("p", { class: "map-note" }, `${map.count} papers laid out by ${map.method.toUpperCase()}: ` +
        "nearby points are papers of similar meaning. Scroll to zoom, drag to pan, hover for a " +
        "title, click to open it.")), clusters);
    // Coordinates start at 0 and the longer side reaches 1: fit the axes to the points.
    const top = (values) => values.reduce((a, b) => (b > a ? b : a), 0.01);
    const extent = { x: top(map.x), y: top(map.y) };
    state.extent = extent;
    const chart = echarts.init(box, null, { renderer: "canvas" });
    state.chart = chart;
    chart.setOption({
      animation: false,
      grid: { left: 4, right: 4, top: 4, bottom: 4 },
      xAxis: { type: "value", show: false, min: -0.02, max: extent.x + 0.02 },
      yAxis: { type: "value", show: false, min: -0.02, max: extent.y + 0.02 },
      dataZoom: [{ type: "inside", xAxisIndex: 0, filterMode: "none" },
        { type: "inside", yAxisIndex: 0, filterMode: "none" }],
      tooltip: { trigger: "item", confine: true, formatter: (p) => {
        if (!Array.isArray(p.value) || p.value.length < 3) return "";
        const i = p.value[2];
        const cluster = map.clusters[map.cluster[i]];
        const rank = p.value.length > 3 ? `#${p.value[3]} · ` : "";
        return `<b>${escapeHtml(rank + map.titles[i])}</b><br><span style="color:#5b6475">` +
          `${escapeHtml(cluster ? cluster.label : "")}</span>`;
      } },
      series: mapSeries(map, highlights, focusIndex),
    });
    chart.on("click", (p) => {
      if (Array.isArray(p.value) && p.value.length >= 3) location.hash = paperHref(map.ids[p.value[2]]);
    });
  }

  async function showMap(params) {
    document.title = "Map · embedsearch";
    fillForm(params);
    status("Loading the map…");
    let map;
    try {
      map = await loadMap();
    } catch (error) {
      status(error.message, true);
      return;
    }
    if (map.status !== "ready") {
      status(map.status === "computing" ? "The map of this index is being computed; this page " +
        "will show it when it is ready." : `No map: ${map.detail}`, map.status === "failed");
      show();
      if (map.status === "computing") state.poll = setTimeout(render, 4000);
      return;
    }
    const index = new Map(map.ids.map((id, i) => [id, i]));
    let highlights = [];
    const query = params.get("q");
    if (query) {
      try {
        const data = await api("/search", searchParams(params));
        highlights = data.hits.filter((hit) => index.has(hit.id)).map((hit) => [index.get(hit.id), hit.rank]);
      } catch (error) {
        status(error.message, true);
      }
    }
    const focusIndex = index.get(params.get("focus") || "");
    const what = query ? ` · ${highlights.length} results for “${query}” in red` : "";
    const focus = focusIndex !== undefined ? ` · ◉ ${map.titles[focusIndex]}` : "";
    status(`${map.count} papers, ${map.clusters.length} clusters${what}${focus}`);
    drawMap(map, highlights, focusIndex);
  }

  // -- routing ---------------------------------------------------------------------------
  function route() {
    const hash = location.hash.slice(1) || "/";
    const cut = hash.indexOf("?");
    const path = cut < 0 ? hash : hash.slice(0, cut);
    return { path, params: new URLSearchParams(cut < 0 ? "" : hash.slice(cut + 1)) };
  }

  async function render() {
    clearTimeout(state.poll);
    if (state.chart) { state.chart.dispose(); state.chart = null; }
    const { path, params } = route();
    const onMap = path === "/map";
    $(onMap ? "#tab-map" : "#tab-search").setAttribute("aria-current", "page");
    $(onMap ? "#tab-search" : "#tab-map").removeAttribute("aria-current");
    if (path.startsWith("/paper/")) return showPaper(decodeURIComponent(path.slice(7)));
    if (path.startsWith("/similar/")) return showSimilar(decodeURIComponent(path.slice(9)));
    if (onMap) return showMap(params);
    if (params.get("q")) return showSearch(params);
    return showHome();
  }

  // -- keyboard --------------------------------------------------------------------------
  function moveActive(step) {
    const items = [...document.querySelectorAll(".result")];
    if (!items.length) return;
    items.forEach((item) => item.classList.remove("active"));
    state.active = Math.max(0, Math.min(items.length - 1, state.active + step));
    const item = items[state.active];
    item.classList.add("active");
    item.querySelector("a.title").focus();
    item.scrollIntoView({ block: "nearest" });
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName);
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      // From the search box, the down arrow goes on to the results.
      if (event.key === "ArrowDown" && event.target.id === "q" && $(".result")) {
        event.preventDefault();
        moveActive(1);
      }
      return;
    }
    const active = document.querySelectorAll(".result")[state.active];
    if (event.key === "/") { event.preventDefault(); $("#q").focus(); $("#q").select(); }
    else if (event.key === "j") moveActive(1);
    else if (event.key === "k") moveActive(-1);
    else if (event.key === "s" && active) location.hash = `#/similar/${enc(active.dataset.id)}`;
    else if (event.key === "m") {
      const q = $("#q").value.trim();
      location.hash = q ? `#/map?${searchParams(formParams())}` : "#/map";
    }
  }

  function onSubmit(event) {
    event.preventDefault();
    if (!$("#q").value.trim()) { $("#q").focus(); return; }
    const onMap = route().path === "/map";
    location.hash = `${onMap ? "#/map" : "#/search"}?${formParams()}`;
  }

  async function showInfo() {
    try {
      const info = await api("/info");
      const model = info.model.split("/").pop();
      $("#index-info").textContent = `${info.count.toLocaleString()} papers · ${model} · ${info.index_type}`;
    } catch (error) {
      $("#index-info").textContent = "";
    }
  }

  $("#search-form").addEventListener("submit", onSubmit);
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", render);
  window.addEventListener("resize", () => state.chart && state.chart.resize());
  showInfo();
  render();
})();
