// embedsearch page: a hit's passage, for a paper read in full: where it is ("p. 6
// (§4.1 Results)"), its text with the evidence terms marked, and a link that opens the
// PDF at its page (GET /papers/ID/file#page=N, N the PDF's own 1-based page, which a
// printed label need not be). Everything shown is text nodes: nothing is parsed as HTML.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el, enc } = ES;

  function where(passage) {
    // As a citation says it, the printed label first: the Python Passage.where.
    const page = passage.page_label || (passage.page ? String(passage.page) : "");
    return [page && `p. ${page}`, passage.section && `(§${passage.section})`]
      .filter(Boolean).join(" ");
  }

  async function openWithToken(event, path, page) {
    // A link sends no Authorization header, so under a read token the file is fetched
    // with it and shown from a blob; without one the link opens the file itself.
    if (!sessionStorage.getItem(ES.TOKEN_KEY)) return;
    event.preventDefault();
    const tab = window.open("", "_blank"); // opened within the click: no popup block
    try {
      const response = await ES.authorizedFetch(path);
      if (!response.ok) {
        const data = await response.json().catch(() => ({}));
        throw new Error(data.detail || `${response.status} ${response.statusText}`);
      }
      const url = URL.createObjectURL(await response.blob());
      if (tab) tab.location.href = `${url}#page=${page}`;
    } catch (error) {
      if (tab) tab.close();
      ES.status(error.message, true);
    }
  }

  function view(hit) {
    const { passage } = hit;
    const page = Number.isInteger(passage.page) && passage.page > 0 ? passage.page : null;
    const path = `/papers/${enc(hit.id)}/file`;
    const shown = passage.page_label || page;
    return el("div", { class: "passage" },
      el("p", { class: "passage-where" },
        where(passage) && el("span", { class: "passage-at" }, where(passage)),
        page && el("a", { class: "pdf-link", href: `${path}#page=${page}`, target: "_blank",
          rel: "noopener", onclick: (event) => openWithToken(event, path, page) },
        `open PDF at p. ${shown}`)),
      el("p", { class: "snippet evidence", title: "the passage that best matches" },
        ES.rich.render(passage.text, { terms: hit.evidence_terms || [], inline: true })));
  }

  ES.passage = { view, where };
})();
