// Taking papers away: BibTeX, RIS, CSL-JSON and CSV as the command line writes them (POST
// /export), and id files (one id per line, `#` comments: what `embedsearch similar
// --ids-file` reads), copied or downloaded in the browser.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el } = ES;

  // The formats the page offers: the server writes the bibliographies and tables with
  // the command line's own writers (POST /export); an ids file is made here.
  const FORMATS = [
    { name: "bibtex", label: "BibTeX", suffix: ".bib", type: "application/x-bibtex" },
    { name: "ris", label: "RIS", suffix: ".ris", type: "application/x-research-info-systems" },
    { name: "csl-json", label: "CSL-JSON", suffix: ".json",
      type: "application/vnd.citationstyles.csl+json" },
    { name: "csv", label: "CSV", suffix: ".csv", type: "text/csv" },
    { name: "ids", label: "ids", suffix: ".txt", type: "text/plain" },
  ];

  async function exported(papers, format, heading) {
    if (format === "ids") return toIds(papers, heading);
    return ES.api("/export", null, { format, papers }, "text");
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

  // A format to choose, then Copy or Download, for the papers `getPapers` resolves to
  // (records the index fills in: the library's own hold a title alone); `name` names
  // the files.
  function toolbar(getPapers, name) {
    const note = el("span", { class: "export-note", role: "status" });
    const select = el("select", { class: "export-format" },
      ...FORMATS.map((f) => el("option", { value: f.name }, f.label)));
    const chosen = () => FORMATS.find((f) => f.name === select.value);
    const run = (action) => async () => {
      try {
        const papers = await getPapers();
        if (!papers.length) { note.textContent = "Nothing to export yet."; return; }
        const format = chosen();
        note.textContent = await action(await exported(papers, format.name, name), format,
          papers.length);
      } catch (error) {
        note.textContent = `Export failed: ${error.message}`;
      }
    };
    const stem = fileStem(name);
    return el("div", { class: "export", role: "group", "aria-label": "Export these papers" },
      el("label", {}, "Export as", select),
      el("button", { type: "button", class: "export-copy", onclick: run(async (text, f, n) => {
        await copy(text);
        return `Copied ${n} ${n === 1 ? "paper" : "papers"} as ${f.label}.`;
      }) }, "Copy"),
      el("button", { type: "button", class: "export-download", onclick: run((text, f) => {
        download(`${stem}${f.suffix}`, text, f.type);
        return `Saved ${stem}${f.suffix}.`;
      }) }, "Download"),
      note);
  }

  ES.exporter = { FORMATS, toIds, parseIds, toolbar, download };
})();
