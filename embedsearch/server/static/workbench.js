// The reading list on the page: star and dismiss buttons, the Library view (#/library:
// the current list's papers, the lists, import and export) and the Recommended view
// (#/recommended: papers like the starred ones and unlike the dismissed ones).
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el, status, show, enc } = ES;
  const lib = ES.library;
  const MAX_EXAMPLES = 20; // papers asked about one by one, without POST /similar
  const MAX_POSTED = 2000; // the most papers POST /similar takes in one list
  const NEGATIVE_WEIGHT = 0.5; // as the engine's `similar`: dismissed papers push half
  const records = new Map(); // full records fetched this session, by id

  // -- the buttons on each paper --------------------------------------------------------
  function paint(button) {
    const star = button.classList.contains("star");
    const on = star ? lib.isStarred(button.dataset.id) : lib.isDismissed(button.dataset.id);
    button.setAttribute("aria-pressed", String(on));
    button.textContent = star ? (on ? "★ Starred" : "☆ Star") : (on ? "Dismissed" : "Dismiss");
    button.title = star ? (on ? "remove from the reading list" : "add to the reading list")
      : (on ? "undo: recommend it again" : "not for me: recommend less like this");
    return button;
  }

  function buttons(paper) {
    return [
      paint(el("button", { type: "button", class: "star", "data-id": paper.id,
        onclick: () => lib.star(paper) })),
      paint(el("button", { type: "button", class: "dismiss", "data-id": paper.id,
        onclick: () => lib.dismiss(paper) }))];
  }

  function refreshButtons() {
    document.querySelectorAll("button.star, button.dismiss").forEach(paint);
    for (const item of document.querySelectorAll(".result")) {
      item.classList.toggle("dismissed", lib.isDismissed(item.dataset.id));
    }
  }

  // -- full records ---------------------------------------------------------------------
  async function fetchPapers(ids) {
    // Full records (BibTeX wants abstracts), six requests at a time; ids this index does
    // not hold come back as null.
    const out = new Array(ids.length).fill(null);
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const i = next++;
        if (!records.has(ids[i])) {
          try { records.set(ids[i], await ES.api(`/papers/${enc(ids[i])}`)); } catch (error) {
            if (error.status !== 404) throw error;
            records.set(ids[i], null);
          }
        }
        out[i] = records.get(ids[i]);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    return out;
  }

  // -- Library --------------------------------------------------------------------------
  function listControls() {
    const name = el("input", { id: "list-name", maxlength: "80", placeholder: "name for New or Rename",
      "aria-label": "A name, for a new list or for this one" });
    const note = el("span", { class: "list-note", role: "status" });
    const act = (action) => () => { note.textContent = action(name.value) || ""; };
    const pick = el("select", { id: "list-pick", "aria-label": "Current list",
      onchange: (event) => lib.use(event.target.value) },
    lib.names().map((n) => el("option", { value: n, selected: n === lib.currentName() }, n)));
    const file = el("input", { type: "file", id: "list-import", accept: ".txt,.ids,.bib,.bibtex,.ris,.json,.jsonl,text/plain",
      class: "visually-hidden", onchange: (event) => importFile(event.target, note) });
    return el("div", { class: "list-controls" },
      el("label", {}, "List ", pick),
      name,
      el("button", { type: "button", id: "list-new", onclick: act(lib.create) }, "New list"),
      el("button", { type: "button", id: "list-rename", onclick: act(lib.rename) }, "Rename"),
      el("button", { type: "button", id: "list-delete", onclick: () => {
        if (window.confirm(`Delete the list “${lib.currentName()}”?`)) lib.remove();
      } }, "Delete"),
      el("label", { class: "button import" }, "Import ids or a bibliography…", file), note);
  }

  const BIBLIOGRAPHY = /\.(bib|bibtex|ris|json|jsonl)$/i;
  const OUTSIDE_FIELDS = ["id", "title", "abstract", "authors", "keywords", "venue", "year",
    "url", "doi", "arxiv_id"];

  async function importFile(input, note) {
    const [file] = input.files;
    if (!file) return;
    const text = await file.text();
    if (BIBLIOGRAPHY.test(file.name)) {
      try {
        await importBibliography(file.name, text);
        return;
      } catch (error) {
        // A server from before POST /bibliography: read the keys as ids, as before.
        if (error.status !== 404 && error.status !== 405) { status(error.message, true); return; }
      }
    }
    const ids = ES.exporter.parseIds(text);
    if (!ids.length) { note.textContent = `${file.name}: no ids in it.`; return; }
    const name = lib.importIds(file.name.replace(/\.[^.]*$/, ""), ids);
    const found = (await fetchPapers(ids)).filter(Boolean);
    lib.remember(found);
    const missing = ids.length - found.length;
    status(`Imported ${ids.length} ids into “${name}”` +
      (missing ? `; ${missing} of them are not in this index.` : "."));
  }

  async function importBibliography(filename, text) {
    // The server reads the file as the command line does and matches each entry to the
    // index (id, DOI, arXiv id, title); the rest are kept as records for Recommended.
    const data = await ES.api("/bibliography", null, { name: filename, text });
    const matched = data.papers.filter((p) => p.match);
    const outside = data.papers.filter((p) => !p.match).map((p) =>
      Object.fromEntries(OUTSIDE_FIELDS.filter((f) => p[f] !== undefined).map((f) => [f, p[f]])));
    const name = lib.importIds(filename.replace(/\.[^.]*$/, ""), matched.map((p) => p.match),
      outside);
    lib.remember((await fetchPapers(matched.map((p) => p.match))).filter(Boolean));
    const titled = outside.filter((p) => !p.abstract).length;
    status(`Imported ${data.papers.length} entries into “${name}”: ${matched.length} in this ` +
      `index, ${outside.length} from outside it (${titled} known by title alone), used for ` +
      "Recommended" + (data.skipped.length ? `; ${data.skipped.length} skipped.` : "."));
  }

  async function showLibrary() {
    document.title = "Library · embedsearch";
    const ids = lib.starred();
    // Papers imported from a file have no title yet: fetch those once.
    const unknown = ids.filter((id) => !lib.known(id));
    if (unknown.length) {
      try { lib.remember((await fetchPapers(unknown)).filter(Boolean)); } catch (error) {
        status(error.message, true);
      }
    }
    const papers = ids.map((id) => lib.paper(id));
    const dismissed = lib.dismissed().map((id) => lib.paper(id));
    const outside = lib.outside();
    status(lib.saveError() || `${papers.length} starred papers in “${lib.currentName()}”`,
      Boolean(lib.saveError()));
    show(el("h1", { class: "page-title" }, "Library"), listControls(),
      ES.exporter.toolbar(async () => papers, lib.currentName()),
      papers.length ? ES.resultList(papers, null, { label: "Starred papers" })
        : el("p", { class: "empty" }, "No papers here yet: star papers (☆) in the results " +
          "or on a paper's page, or import a file of ids or your bibliography (.bib, .ris)."),
      dismissed.length > 0 && el("details", { class: "dismissed-list" },
        el("summary", {}, `Dismissed (${dismissed.length})`),
        ES.resultList(dismissed, null, { label: "Dismissed papers" })),
      outside.length > 0 && el("details", { class: "outside-list" },
        el("summary", {}, `From your bibliography, not in this index (${outside.length}): ` +
          "used for Recommended"),
        el("ul", {}, outside.map((p) => el("li", {}, p.title || p.id)))));
  }

  // -- Recommended ----------------------------------------------------------------------
  async function neighbours(ids, k) {
    const lists = await Promise.all(ids.slice(0, MAX_EXAMPLES).map((id) =>
      ES.api(`/papers/${enc(id)}/similar`, `k=${k}`).then((r) => r.hits).catch((error) => {
        if (error.status === 404) return [];
        throw error;
      })));
    return lists.map((hits, i) => ({ id: ids[i], hits }));
  }

  let serverRanks = true; // POST /similar exists until a server answers 404 or 405

  async function recommend(k) {
    const starred = lib.starred().slice(0, MAX_POSTED);
    const dismissed = lib.dismissed().slice(0, MAX_POSTED);
    if (serverRanks) {
      try {
        return await rankedByServer(starred, dismissed, k);
      } catch (error) {
        if (error.status !== 404 && error.status !== 405) throw error;
        serverRanks = false;
      }
    }
    return merged(starred, dismissed, k);
  }

  async function rankedByServer(starred, dismissed, k) {
    // One request: the server ranks by the starred papers' clusters in turns, unlike the
    // dismissed ones (its rule), and names each hit's nearest starred papers. A paper of
    // the index goes as its id, title and keywords, as this list keeps them: the server
    // uses its stored vector, so no record is fetched first, and a library of a thousand
    // papers is one request.
    const record = (id) => {
      const paper = lib.paper(id);
      return { id, title: paper.title || id, keywords: paper.keywords || [] };
    };
    // An imported bibliography's entries outside the index go as they are (a title alone
    // is enough: the server encodes it and weighs it half).
    const papers = [...starred.map(record), ...lib.outside()].slice(0, MAX_POSTED);
    if (!papers.length) return [];
    const data = await ES.api("/similar", null,
      { papers, negatives: dismissed.map(record), k });
    const exclude = new Set([...starred, ...dismissed]);
    return data.hits.filter((hit) => !exclude.has(hit.id));
  }

  async function merged(starred, dismissed, k) {
    // For a server without POST /similar: one similar query per starred and dismissed
    // paper, merged: a paper's score is its best closeness to a starred paper minus half
    // its best closeness to a dismissed one (when it is among that one's neighbours).
    const exclude = new Set([...starred, ...dismissed]);
    const depth = Math.min(100, k + exclude.size + 10);
    const [likes, unlikes] = await Promise.all([neighbours(starred, depth), neighbours(dismissed, depth)]);
    const against = new Map();
    for (const { hits } of unlikes) {
      for (const hit of hits) against.set(hit.id, Math.max(against.get(hit.id) ?? -1, hit.score));
    }
    const best = new Map();
    for (const { id, hits } of likes) {
      for (const hit of hits) {
        if (exclude.has(hit.id)) continue;
        const score = hit.score - NEGATIVE_WEIGHT * Math.max(0, against.get(hit.id) ?? 0);
        // The merged score is the one shown, so the list is ordered by what it shows.
        if (!best.has(hit.id) || best.get(hit.id).score < score) {
          best.set(hit.id, { ...hit, score, because: id });
        }
      }
    }
    return [...best.values()].sort((a, b) => b.score - a.score).slice(0, k)
      .map((hit, i) => ({ ...hit, rank: i + 1 }));
  }

  // "because you have …": the server names each hit's nearest examples (up to three);
  // the merged fallback knows the one starred paper that brought it.
  function reason(hit) {
    const named = Array.isArray(hit.because)
      ? hit.because.map((r) => r.title || lib.paper(r.id).title || r.id)
      : hit.because ? [lib.paper(hit.because).title || hit.because] : [];
    return named.length ? `because you have ${named.map((t) => `“${t}”`).join(", ")}` : null;
  }

  let generation = 0;
  async function showRecommended() {
    document.title = "Recommended · embedsearch";
    const mine = ++generation;
    const starred = lib.starred();
    if (!starred.length && !lib.outside().length) {
      status("");
      show(el("h1", { class: "page-title" }, "Recommended"), el("p", { class: "empty" },
        `Star papers in “${lib.currentName()}” and the papers most like them appear here.`));
      return;
    }
    status("Finding papers like your starred ones…");
    try {
      const hits = await recommend(Number(ES.$("#k").value) || 20);
      if (mine !== generation) return; // the list changed meanwhile: a newer run shows
      for (const hit of hits) hit.note = reason(hit);
      const outside = lib.outside().length ? ` and ${lib.outside().length} from your bibliography` : "";
      status(`${hits.length} papers like the ${starred.length} starred${outside} in “${lib.currentName()}”` +
        (lib.dismissed().length ? `, unlike the ${lib.dismissed().length} dismissed` : ""));
      show(el("h1", { class: "page-title" }, "Recommended"),
        ES.exporter.toolbar(async () => hits, `recommended for ${lib.currentName()}`),
        ES.resultList(hits, null, { label: "Recommended papers" }));
    } catch (error) {
      if (mine === generation) { status(error.message, true); show(); }
    }
  }

  let pending = null;
  lib.onChange(() => {
    refreshButtons();
    // The Library and Recommended views follow the list (debounced: a burst of clicks
    // is one refresh).
    clearTimeout(pending);
    pending = setTimeout(() => {
      const path = ES.route().path;
      if (path === "/library" || path === "/recommended") ES.render();
    }, 250);
  });

  ES.work = { buttons, refreshButtons, showLibrary, showRecommended, fetchPapers };
})();
