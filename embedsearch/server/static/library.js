// The reader's named lists of starred and dismissed papers, kept in this browser's
// localStorage: the server stays read-only and shared, each reader keeps their own.
// Stored as { version, current, lists: [{ name, starred: [id], dismissed: [id],
// outside?: [record] }], papers: { id: metadata } }: a paper's metadata once, however
// many lists hold it. `outside` holds the entries of an imported bibliography that the
// index does not hold (title-only ones too): examples for Recommended, sent as records.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const KEY = "embedsearch.library";
  const DEFAULT = "Reading list";
  const FIELDS = ["title", "authors", "venue", "year", "url", "keywords"];
  const listeners = [];
  let data = load();
  let saveError = "";

  function fresh() {
    return { version: 1, current: DEFAULT, lists: [{ name: DEFAULT, starred: [], dismissed: [] }],
      papers: {} };
  }

  function valid(value) {
    return value && value.version === 1 && Array.isArray(value.lists) && value.lists.length > 0
      && value.lists.every((l) => typeof l.name === "string" && Array.isArray(l.starred)
        && Array.isArray(l.dismissed)) && typeof value.papers === "object";
  }

  function load() {
    try {
      const stored = JSON.parse(localStorage.getItem(KEY) || "null");
      if (valid(stored)) return stored;
    } catch (error) { /* unreadable or blocked storage: start afresh, in memory */ }
    return fresh();
  }

  function save() {
    const kept = new Set(data.lists.flatMap((l) => [...l.starred, ...l.dismissed]));
    for (const id of Object.keys(data.papers)) if (!kept.has(id)) delete data.papers[id];
    try {
      localStorage.setItem(KEY, JSON.stringify(data));
      saveError = "";
    } catch (error) {
      saveError = "This browser does not keep the library (storage is full or blocked): " +
        "export it to keep it.";
    }
    for (const listener of listeners) listener();
  }

  const find = (name) => data.lists.find((l) => l.name === name);
  const current = () => find(data.current) || data.lists[0];

  function checkName(name, except) {
    const clean = String(name || "").trim();
    if (!clean) return [null, "A list needs a name."];
    if (clean.length > 80) return [null, "A list's name is at most 80 characters."];
    if (clean !== except && find(clean)) return [null, `There is already a list “${clean}”.`];
    return [clean, ""];
  }

  function uniqueName(base) {
    let name = base.trim().slice(0, 70) || "Imported";
    for (let n = 2; find(name); n++) name = `${base.trim().slice(0, 70)} (${n})`;
    return name;
  }

  function remember(paper) {
    const meta = {};
    for (const field of FIELDS) if (paper[field] !== undefined) meta[field] = paper[field];
    data.papers[paper.id] = { ...(data.papers[paper.id] || {}), ...meta };
  }

  function toggle(paper, into, outOf) {
    const list = current();
    const had = list[into].includes(paper.id);
    list[into] = list[into].filter((id) => id !== paper.id);
    list[outOf] = list[outOf].filter((id) => id !== paper.id);
    if (!had) { list[into].unshift(paper.id); remember(paper); }
    save();
    return !had;
  }

  window.addEventListener("storage", (event) => {
    // Another tab changed the library: follow it.
    if (event.key !== KEY) return;
    data = load();
    for (const listener of listeners) listener();
  });

  ES.library = {
    names: () => data.lists.map((l) => l.name),
    currentName: () => current().name,
    starred: () => [...current().starred],
    dismissed: () => [...current().dismissed],
    isStarred: (id) => current().starred.includes(id),
    isDismissed: (id) => current().dismissed.includes(id),
    paper: (id) => ({ id, ...(data.papers[id] || {}) }),
    known: (id) => Boolean(data.papers[id] && data.papers[id].title),
    saveError: () => saveError,
    onChange: (listener) => listeners.push(listener),
    star: (paper) => toggle(paper, "starred", "dismissed"),
    dismiss: (paper) => toggle(paper, "dismissed", "starred"),
    remember(papers) { papers.forEach(remember); save(); },
    use(name) { if (find(name)) { data.current = name; save(); } },
    create(name) {
      const [clean, error] = checkName(name);
      if (clean) { data.lists.push({ name: clean, starred: [], dismissed: [] }); data.current = clean; save(); }
      return error;
    },
    rename(name) {
      const list = current();
      const [clean, error] = checkName(name, list.name);
      if (clean) { list.name = clean; data.current = clean; save(); }
      return error;
    },
    remove() {
      data.lists = data.lists.filter((l) => l !== current());
      if (!data.lists.length) data.lists = fresh().lists;
      data.current = data.lists[0].name;
      save();
    },
    outside: () => [...(current().outside || [])],
    importIds(name, ids, outside = []) {
      // A new list holding `ids` (starred, in file order) and, from a bibliography, the
      // records of its entries outside the index; returns its name.
      const list = { name: uniqueName(name), starred: [...new Set(ids)], dismissed: [] };
      if (outside.length) list.outside = outside;
      data.lists.push(list);
      data.current = list.name;
      save();
      return list.name;
    },
  };
})();
