// embedsearch page: "New since your last visit", from the index's saved searches
// (`embedsearch watch add`) and GET /digest. The last visit is this browser's: kept in
// localStorage when a tab first opens the page, so reloading the tab keeps showing what
// was new when it opened (sessionStorage holds that starting point).
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el } = ES;
  const LAST_VISIT = "embedsearch-last-visit";
  const THIS_VISIT_SINCE = "embedsearch-new-since";
  const FIRST_VISIT_SPAN = "7d"; // a first visit shows the last week

  function since() {
    // Where this tab's "new" starts, and whether this is the tab's first look.
    const start = sessionStorage.getItem(THIS_VISIT_SINCE);
    if (start !== null) return [start, false];
    return [localStorage.getItem(LAST_VISIT) || FIRST_VISIT_SPAN, true];
  }

  function section(part) {
    const feed = `/feeds/${encodeURIComponent(part.watch)}.atom`;
    return el("section", { class: "watch", "aria-label": `New for ${part.watch}` },
      el("h3", {}, part.watch, " ", el("small", {}, part.looks_for), " ",
        el("a", { href: feed, title: "this saved search as an Atom feed" }, "feed")),
      ES.resultList(part.hits, null, { label: `New for ${part.watch}` }));
  }

  async function newSince() {
    // The home page's section; nothing when the index has no saved searches.
    const watches = await ES.api("/watches").catch(() => []);
    if (!watches.length) return null;
    const [start, first] = since();
    const data = await ES.api("/digest", new URLSearchParams({ since: start }));
    if (first) { // the server's clock, not this browser's, marks the visit
      sessionStorage.setItem(THIS_VISIT_SINCE, start);
      localStorage.setItem(LAST_VISIT, data.until);
    }
    const found = data.watches.filter((part) => part.hits.length);
    const when = start === FIRST_VISIT_SPAN ? "in the last week" : "since your last visit";
    return el("section", { id: "new-since", class: "new-since" },
      el("h2", {}, `New ${when}`),
      found.length ? found.map(section)
        : el("p", {}, `Nothing new for your ${watches.length} saved searches ${when}.`));
  }

  ES.watches = { newSince };
})();
