// Taking papers away: BibTeX (citation key = a BibTeX-safe form of the paper id, so the
// same paper gets the same key every time) and id files (one id per line, `#` comments:
// what `embedsearch similar --ids-file` reads), copied or downloaded in the browser.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el } = ES;

  // SHA-256 of a string's UTF-8 bytes, as hex: the short hash in a made-safe key. Ours,
  // because crypto.subtle exists only on secure origins (not a server on a LAN address).
  const K = Uint32Array.from([...Array(64)].map((_, i) => primeRoot(i, 3)));
  const H0 = Uint32Array.from([...Array(8)].map((_, i) => primeRoot(i, 2)));
  function primeRoot(n, root) {
    // The fraction bits of the square (root 2) or cube (root 3) root of the n-th prime.
    const primes = [];
    for (let c = 2; primes.length <= n; c++) if (primes.every((p) => c % p)) primes.push(c);
    const value = primes[n] ** (1 / root);
    return Math.floor((value - Math.floor(value)) * 2 ** 32) >>> 0;
  }

  function sha256(text) {
    const bytes = new TextEncoder().encode(text);
    const blocks = Math.ceil((bytes.length + 9) / 64);
    const data = new Uint8Array(blocks * 64);
    data.set(bytes);
    data[bytes.length] = 0x80;
    const view = new DataView(data.buffer);
    view.setUint32(data.length - 8, Math.floor(bytes.length / 2 ** 29));
    view.setUint32(data.length - 4, (bytes.length * 8) >>> 0);
    const h = H0.slice();
    const w = new Uint32Array(64);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    for (let block = 0; block < blocks; block++) {
      for (let t = 0; t < 64; t++) {
        if (t < 16) { w[t] = view.getUint32(block * 64 + t * 4); continue; }
        const s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >>> 3);
        const s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >>> 10);
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) >>> 0;
      }
      let [a, b, c, d, e, f, g, hh] = h;
      for (let t = 0; t < 64; t++) {
        const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t]) >>> 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
      }
      [a, b, c, d, e, f, g, hh].forEach((x, i) => { h[i] = (h[i] + x) >>> 0; });
    }
    return [...h].map((x) => x.toString(16).padStart(8, "0")).join("");
  }

  function citeKey(id) {
    // As embedsearch.export.citation_key: the id itself when BibTeX takes it as a key
    // (re-reading the file gives the ids back), else the id made safe plus a short hash.
    const safe = String(id).replace(/[^A-Za-z0-9_:./+-]/gu, "_");
    if (safe === id && safe) return safe;
    return `${safe.replace(/^_+|_+$/g, "") || "paper"}_${sha256(String(id)).slice(0, 8)}`;
  }

  // A venue named like a journal is cited as one (as the command line's export does),
  // for a paper whose source gave no entry type.
  const JOURNAL = /journal|transactions|letters|review|magazine|arxiv/i;
  // Entry types whose venue is the book they are in (booktitle), not a journal.
  const IN_BOOK = ["inproceedings", "incollection", "inbook", "proceedings"];
  const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
    "dec"];

  function bibValue(text) {
    // LaTeX's specials escaped outside math; braces kept only when they balance.
    const flat = String(text).replace(/\s+/g, " ").trim();
    let value = "";
    let last = 0;
    const escape = (part) => part.replace(/(^|[^\\])([&%#_])/g, "$1\\$2");
    for (const span of ES.rich.mathSpans(flat)) {
      value += escape(flat.slice(last, span.start)) + flat.slice(span.start, span.end);
      last = span.end;
    }
    value += escape(flat.slice(last));
    let depth = 0;
    for (const c of value) {
      depth += c === "{" ? 1 : c === "}" ? -1 : 0;
      if (depth < 0) break;
    }
    if (depth !== 0) value = value.replace(/[{}]/g, (c) => `\\${c}`);
    return `{${value}}`;
  }

  function names(list) {
    // " and "-joined; a name with " and " in it (a company) braced so that it stays one.
    return list.map((name) => String(name).replace(/\s+/g, " ").trim()).filter(Boolean)
      .map((name) => (/\sand\s/i.test(name) ? `{${name}}` : name)).join(" and ");
  }

  function bibEntry(paper, key) {
    // As embedsearch.export: the paper's own entry type and every standard field it keeps
    // (bib_fields), in Unicode; the venue where the reader takes it from.
    const kept = paper.bib_fields || {};
    const kind = paper.entry_type
      || (!paper.venue ? "misc" : JOURNAL.test(paper.venue) ? "article" : "inproceedings");
    const venue = "booktitle" in kept || !IN_BOOK.includes(kind) ? "journal" : "booktitle";
    const fields = [["title", paper.title], ["author", names(paper.authors || [])],
      [venue, paper.venue], ["year", paper.year], ["abstract", paper.abstract],
      ["keywords", (paper.keywords || []).join(", ")], ["url", paper.url], ["doi", paper.doi],
      ["eprint", paper.arxiv_id], ["archiveprefix", paper.arxiv_id ? "arXiv" : ""],
      ...Object.entries(kept).map(([name, value]) => [name, name === "editor"
        ? names(String(value).split(" and ")) : value])];
    const lines = fields.filter(([, value]) => value !== undefined && value !== null
      && String(value).trim()).map(([name, value]) => `  ${name} = ${
      name === "url" || name === "doi"
        // URLs are verbatim in biblatex: only braces are quoted.
        ? `{${String(value).replace(/[{}]/g, encodeURIComponent)}}`
        : name === "month" && MONTHS.includes(String(value).toLowerCase())
          ? String(value).toLowerCase() : bibValue(value)},`);
    return `@${kind}{${key},\n${lines.join("\n")}\n}\n`;
  }

  function toBibtex(papers) {
    return papers.map((paper) => bibEntry(paper, citeKey(paper.id))).join("\n");
  }

  function toIds(papers, heading) {
    const lines = [`# ${heading}`, `# ${papers.length} papers, one id per line; ` +
      "read by: embedsearch similar --ids-file FILE"];
    return [...lines, ...papers.map((p) => p.id)].join("\n") + "\n";
  }

  function parseIds(text) {
    // Ids files: one id per line, blank lines and `#` comment lines skipped. BibTeX:
    // the citation keys, which are the ids of papers this page exported.
    const entries = [...text.matchAll(/@(\w+)\s*[{(]\s*([^,\s]+)\s*,/g)]
      .filter((m) => !/^(comment|string|preamble)$/i.test(m[1])).map((m) => m[2]);
    const ids = entries.length ? entries : text.split(/\r?\n/).map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#"));
    return [...new Set(ids)];
  }

  function download(filename, text, type) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = el("a", { href: url, download: filename, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  async function copy(text) {
    // The clipboard API needs a secure context (localhost is one; a LAN address is not).
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const area = el("textarea", { class: "visually-hidden", readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    if (!done) throw new Error("the browser refused to copy; use Download instead");
  }

  function fileStem(name) {
    return String(name).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "papers";
  }

  // Copy BibTeX / Download BibTeX / Download ids for the papers `getPapers` resolves to
  // (full records: BibTeX wants abstracts); `name` names the files.
  function toolbar(getPapers, name) {
    const note = el("span", { class: "export-note", role: "status" });
    const run = (action) => async () => {
      try {
        const papers = await getPapers();
        if (!papers.length) { note.textContent = "Nothing to export yet."; return; }
        note.textContent = await action(papers);
      } catch (error) {
        note.textContent = `Export failed: ${error.message}`;
      }
    };
    const stem = fileStem(name);
    return el("div", { class: "export", role: "group", "aria-label": "Export these papers" },
      el("button", { type: "button", class: "copy-bibtex", onclick: run(async (papers) => {
        await copy(toBibtex(papers));
        return `Copied ${papers.length} BibTeX entries.`;
      }) }, "Copy BibTeX"),
      el("button", { type: "button", class: "download-bibtex", onclick: run((papers) => {
        download(`${stem}.bib`, toBibtex(papers), "application/x-bibtex");
        return `Saved ${stem}.bib.`;
      }) }, "Download BibTeX"),
      el("button", { type: "button", class: "download-ids", onclick: run((papers) => {
        download(`${stem}.txt`, toIds(papers, name), "text/plain");
        return `Saved ${stem}.txt.`;
      }) }, "Download ids"),
      note);
  }

  ES.exporter = { citeKey, toBibtex, toIds, parseIds, toolbar, download };
})();
