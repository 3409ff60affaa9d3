// embedsearch page: search, paper pages with similar papers, the reading list, the map.
// Views are hash routes (#/search?q=…, #/paper/ID, #/similar/ID, #/library,
// #/recommended, #/map?q=…) so every view has a link and the back button works; all data
// comes from the JSON API. The other scripts (index.html loads them first) put their
// parts on the shared `ES` object; this one routes and starts the page.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { $, el, enc, status, show, paperHref } = ES;
  // queryChars: the server's limit on a query (GET /info), checked before a search.
  const state = { active: -1, queryChars: null };
  // A GET /search URL longer than this goes as POST /search instead: 8 KB is a common
  // limit on a request line (nginx's buffers, Apache's LimitRequestLine, 8,190 bytes),
  // and a pasted abstract of 2,000 characters in Greek or math is already over it.
  const MAX_GET_URL = 8000;
  // A query longer than this is echoed folded to one line above its results.
  const LONG_QUERY = 120;

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

  async function api(path, params, body, answer = "json") {
    // GET with query parameters, or POST `body` as JSON; the answer as JSON, or as text
    // (`answer` "text": a file POST /export wrote). Errors are JSON either way.
    const url = params ? `${path}?${params}` : path;
    const headers = { Accept: answer === "json" ? "application/json" : "*/*" };
    const options = body === undefined ? { headers } : { method: "POST", body: JSON.stringify(body),
      headers: { ...headers, "Content-Type": "application/json" } };
    const response = await authorizedFetch(url, options);
    if (response.ok && answer === "text") return response.text();
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw Object.assign(new Error(data.detail || `${response.status} ${response.statusText}`),
        { status: response.status });
    }
    return data;
  }

  // -- the search form <-> the route's parameters ----------------------------------------
  const LIST_FIELDS = ["venue", "keyword", "collection"];

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
    if (params.get("year") || LIST_FIELDS.some((name) => params.getAll(name).length)) {
      $("#filters").open = true;
    }
    checkLength();
  }

  function searchParams(params) {
    // Only what GET /search takes, from a route's parameters.
    const out = new URLSearchParams();
    for (const name of ["q", "k", "mode", "year", "venue", "keyword", "collection", "library"]) {
      for (const value of params.getAll(name)) out.append(name, value);
    }
    return out;
  }

  // -- the query's length, and a long one sent and echoed --------------------------------
  const length = (text) => [...text].length; // characters as the server counts them

  function checkLength() {
    // Over the limit: say so beside the box (never a silent cut) and do not search.
    const input = $("#q");
    const chars = length(input.value.trim());
    const over = state.queryChars !== null && chars > state.queryChars;
    const message = $("#q-message");
    message.hidden = !over;
    message.textContent = over ? `The query is ${chars.toLocaleString("en")} characters long; ` +
      `the limit is ${state.queryChars.toLocaleString("en")}. Shorten it to search.` : "";
    if (over) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
    return !over;
  }

  async function findHits(params) {
    // GET /search, or for a query too long for a URL the one-query POST /search batch.
    const query = searchParams(params);
    if (`/search?${query}`.length <= MAX_GET_URL) return api("/search", query);
    const list = (name) => query.getAll(name);
    const body = { queries: [query.get("q")], k: Number(query.get("k") || 10),
      mode: query.get("mode") || "hybrid", venue: list("venue"), keyword: list("keyword"),
      collection: list("collection"), library: list("library"),
      ...(query.get("year") ? { year: query.get("year") } : {}) };
    const data = await api("/search", null, body);
    // The hits as GET answers them: a batch's also repeat their query.
    const hits = data.results[0].hits.map(({ query_index: _, query: __, ...hit }) => hit);
    return { ...data, query: body.queries[0], hits };
  }

  function quoted(query, limit = 80) {
    // “a query”, cut at a word with an ellipsis past `limit` characters.
    const line = query.replace(/\s+/g, " ").trim();
    if (line.length <= limit) return `“${line}”`;
    return `“${line.slice(0, limit - 1).replace(/\s+\S*$/, "")}…”`;
  }

  function queryEcho(query) {
    // A long query (a pasted abstract) folded to its first line, opened on a click.
    if (length(query) <= LONG_QUERY) return null;
    return el("details", { class: "query-echo" },
      el("summary", {}, el("span", { class: "query-label" },
        `Your query, ${length(query).toLocaleString("en")} characters:`),
      el("span", { class: "query-opening" }, query.slice(0, 300))),
      el("p", { class: "query-full" }, ES.rich.render(query, { inline: true })));
  }

  function applyFilter(change) {
    // A facet's click: this year or venue only (null: any), the rest of the search kept.
    const { params } = route();
    for (const [name, value] of Object.entries(change)) {
      params.delete(name);
      if (value) params.set(name, value);
    }
    location.hash = `#/search?${params}`;
  }

  // -- results ---------------------------------------------------------------------------
  function scoreMeta(hit) {
    if (typeof hit.score !== "number") return null;
    // The score is what the results are ordered by, on the cosine scale (so it never
    // rises down the list); the cosine of query and paper itself is in the tooltip.
    const bar = el("i");
    bar.style.width = `${(Math.max(0, Math.min(1, hit.score)) * 100).toFixed(0)}%`;
    const cosine = typeof hit.similarity === "number"
      ? `; cosine similarity ${hit.similarity.toFixed(3)}` : "";
    return el("span", { class: "score", title: `ranking score on the cosine scale${cosine}` },
      el("span", { class: "score-bar", "aria-hidden": "true" }, bar),
      `score ${hit.score.toFixed(2)}`);
  }

  function resultItem(hit, rank, query) {
    const { render, snippet } = ES.rich;
    const mapHref = `#/map?${new URLSearchParams({ ...(query ? { q: query } : {}), focus: hit.id })}`;
    let text = null;
    if (hit.passage) {
      text = ES.passage.view(hit); // a paper read in full: the passage, its page, the PDF
    } else if (hit.evidence) {
      text = el("p", { class: "snippet evidence", title: "the sentence that best matches" },
        render(hit.evidence, { terms: hit.evidence_terms || [], inline: true }));
    } else if (hit.abstract) {
      text = el("p", { class: "snippet" }, render(snippet(hit.abstract), { inline: true }));
    } else if (hit.authors && hit.authors.length) {
      text = el("p", { class: "snippet authors" }, hit.authors.join(", "));
    }
    return el("li", { class: ES.library.isDismissed(hit.id) ? "result dismissed" : "result",
      "data-id": hit.id },
      el("span", { class: "rank", "aria-hidden": "true" }, hit.rank ?? rank),
      el("a", { class: hit.title_derived ? "title derived" : "title", href: paperHref(hit.id) },
        ES.rich.title(hit, { inline: true })),
      el("div", { class: "meta" }, ES.where(hit) && el("span", {}, ES.where(hit)), scoreMeta(hit),
        hit.note && el("span", { class: "note" }, hit.note)),
      text,
      el("div", { class: "actions" }, ES.work.buttons(hit),
        el("button", { type: "button", class: "more", onclick: () => { location.hash = `#/similar/${enc(hit.id)}`; } },
          "More like this"),
        el("a", { class: "button", href: mapHref }, "On the map")));
  }

  function resultList(hits, query, { label = "Results" } = {}) {
    state.active = -1;
    if (!hits.length) return el("p", {}, "No papers match. Loosen the filters or rephrase.");
    return el("ol", { class: "results", "aria-label": label },
      hits.map((hit, i) => resultItem(hit, i + 1, query)));
  }

  // -- views -----------------------------------------------------------------------------
  function showHome() {
    document.title = "embedsearch";
    status("");
    show(el("div", { class: "paper" },
      el("h1", { class: "page-title" }, "Find papers by meaning"),
      el("p", {}, "Describe a problem, a method or an idea in your own words: the closest " +
        "abstracts come first, whether or not they share your words."),
      el("p", {}, "Open a paper to see the papers most like it, star the ones you want to " +
        "read (they go to your ", el("a", { href: "#/library" }, "library"), " and shape your ",
      el("a", { href: "#/recommended" }, "recommendations"), "), or look at the ",
      el("a", { href: "#/map" }, "map of the whole corpus"), ".")));
    $("#q").focus();
    ES.watches.newSince().then((part) => {
      if (part && route().path === "/" && !route().params.get("q")) $("#view").append(part);
    }).catch((error) => status(error.message, true));
  }

  async function showSearch(params) {
    fillForm(params);
    const query = params.get("q");
    const echo = queryEcho(query);
    document.title = `${quoted(query, 60)} · embedsearch`;
    status("Searching…");
    try {
      const data = await findHits(params);
      const count = `${data.hits.length} ${data.hits.length === 1 ? "paper" : "papers"}`;
      status(`${count} closest to ${echo ? "your query" : quoted(query, Infinity)}`);
      const [aside, draw] = ES.facets.facets(data.hits, params, applyFilter);
      show(echo, el("div", { class: aside ? "with-facets" : "" },
        el("div", { class: "results-column" },
          data.hits.length > 0 && ES.exporter.toolbar(async () => data.hits,
            `search ${quoted(query).slice(1, -1)}`),
          resultList(data.hits, query)), aside));
      draw();
    } catch (error) {
      status(error.message, true);
      show();
    }
  }

  function paperCard(paper, id) {
    const { render } = ES.rich;
    const fields = [["Venue", ES.where(paper)], ["Authors", paper.authors.join(", ")],
      ["Area", paper.primary_area], ["TL;DR", paper.tldr], ["Id", id]];
    return el("article", { class: "paper" },
      el("h1", { class: paper.title_derived ? "page-title derived" : "page-title" },
        ES.rich.title(paper)),
      el("dl", { class: "fields" }, fields.filter(([, value]) => value).map(
        ([label, value]) => [el("dt", {}, label), el("dd", {}, label === "TL;DR" ? render(value) : value)])),
      paper.keywords.length > 0 && el("ul", { class: "chips", "aria-label": "Keywords" },
        paper.keywords.map((word) => el("li", {}, el("a", {
          href: `#/search?${new URLSearchParams({ q: word, keyword: word })}` }, word)))),
      el("p", { class: "abstract" }, render(paper.abstract)),
      el("div", { class: "actions" }, ES.work.buttons(paper),
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
        resultList(similar.hits, null, { label: "Similar papers" }));
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
        similar.hits.length > 0 && ES.exporter.toolbar(async () => similar.hits, `like ${id}`),
        resultList(similar.hits, null, { label: "Similar papers" }));
    } catch (error) {
      status(error.message, true);
      show();
    }
  }

  // -- routing ---------------------------------------------------------------------------
  const TABS = { "/map": "#tab-map", "/library": "#tab-library", "/recommended": "#tab-recommended" };

  function route() {
    const hash = location.hash.slice(1) || "/";
    const cut = hash.indexOf("?");
    const path = cut < 0 ? hash : hash.slice(0, cut);
    return { path, params: new URLSearchParams(cut < 0 ? "" : hash.slice(cut + 1)) };
  }

  async function render() {
    ES.map.dispose();
    ES.facets.dispose();
    const { path, params } = route();
    const tab = TABS[path] || "#tab-search";
    for (const link of document.querySelectorAll(".tabs a")) {
      if (`#${link.id}` === tab) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (path.startsWith("/paper/")) return showPaper(decodeURIComponent(path.slice(7)));
    if (path.startsWith("/similar/")) return showSimilar(decodeURIComponent(path.slice(9)));
    if (path === "/map") return ES.map.show(params);
    if (path === "/library") return ES.work.showLibrary();
    if (path === "/recommended") return ES.work.showRecommended();
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
    else if (event.key === "f" && active) active.querySelector("button.star").click();
    else if (event.key === "x" && active) active.querySelector("button.dismiss").click();
    else if (event.key === "m") {
      const q = $("#q").value.trim();
      location.hash = q ? `#/map?${searchParams(formParams())}` : "#/map";
    }
  }

  function onSubmit(event) {
    event.preventDefault();
    if (!$("#q").value.trim() || !checkLength()) { $("#q").focus(); return; }
    const onMap = route().path === "/map";
    location.hash = `${onMap ? "#/map" : "#/search"}?${formParams()}`;
  }

  async function showInfo() {
    try {
      const info = await api("/info");
      state.queryChars = info.limits.query_chars;
      checkLength();
      const model = info.model.split("/").pop();
      $("#index-info").textContent = `${info.count.toLocaleString()} papers · ${model} · ${info.index_type}`;
    } catch (error) {
      $("#index-info").textContent = "";
    }
  }

  Object.assign(ES, { api, authorizedFetch, TOKEN_KEY, fillForm, searchParams, findHits, quoted, route, render, resultList });
  $("#search-form").addEventListener("submit", onSubmit);
  $("#q").addEventListener("input", checkLength);
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", render);
  showInfo();
  render();
})();
