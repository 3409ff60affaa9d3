// Facets beside the results: how the shown results spread over years, venues and (for
// papers from a reference manager) collections, as small ECharts bar charts; clicking a
// bar applies that year, venue or collection as a filter.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el } = ES;
  const TOP_VENUES = 8;
  let charts = [];

  function counts(hits, field) {
    const tally = new Map();
    for (const hit of hits) {
      const value = hit[field];
      if (value !== null && value !== undefined && value !== "") {
        tally.set(String(value), (tally.get(String(value)) || 0) + 1);
      }
    }
    return [...tally.entries()];
  }

  // Like counts, for a field holding a list (a paper is in several collections).
  function listCounts(hits, field) {
    const tally = new Map();
    for (const hit of hits) {
      for (const value of hit[field] || []) tally.set(value, (tally.get(value) || 0) + 1);
    }
    return [...tally.entries()];
  }

  const byCount = (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]);

  function barOption(entries, horizontal) {
    const names = entries.map(([name]) => name);
    const values = entries.map(([, count]) => count);
    const category = { type: "category", data: names, inverse: horizontal,
      axisTick: { show: false }, axisLabel: { color: "#5b6475", fontSize: 11,
        width: horizontal ? 84 : undefined, overflow: "truncate", interval: 0 } };
    const value = { type: "value", minInterval: 1, splitLine: { show: false },
      axisLabel: { show: false } };
    return {
      animation: false,
      grid: { left: horizontal ? 90 : 6, right: 24, top: horizontal ? 4 : 16, bottom: horizontal ? 4 : 22,
        containLabel: !horizontal },
      xAxis: horizontal ? value : category,
      yAxis: horizontal ? category : value,
      tooltip: { trigger: "item", formatter: (p) => `${ES.escapeHtml(p.name)}: ${p.value} ` +
        `result${p.value === 1 ? "" : "s"} · click to keep only these` },
      series: [{ type: "bar", data: values, cursor: "pointer", barMaxWidth: 18,
        itemStyle: { color: "#2f5bd3", borderRadius: 3 },
        emphasis: { itemStyle: { color: "#1f3f9a" } },
        label: { show: true, position: horizontal ? "right" : "top", fontSize: 10,
          color: "#5b6475" } }],
    };
  }

  function facetBox(title, field, entries, active, apply) {
    const box = el("div", { class: "facet-chart", id: `facet-${field}`, role: "img",
      "aria-label": `${title}: ` + entries.map(([n, c]) => `${n} ${c}`).join(", ") });
    const clear = active && el("button", { type: "button", class: "facet-clear",
      onclick: () => apply({ [field]: null }) }, `any ${field}`);
    const rows = Math.max(entries.length, 1);
    box.style.height = field === "year" ? "110px" : `${Math.min(rows, TOP_VENUES) * 22 + 14}px`;
    return [el("section", { class: "facet", "aria-label": title },
      el("h2", {}, title, active ? ` · ${active}` : "", clear || ""), box), box];
  }

  // The facets of `hits` under the route's filters; `apply({field: value or null})`
  // re-runs the search with that filter. Returns the aside and a function that draws the
  // charts once it is in the page (ECharts needs its boxes laid out).
  function facets(hits, params, apply) {
    dispose();
    if (!hits.length || !window.echarts) return [null, () => {}];
    const years = counts(hits, "year").sort(([a], [b]) => a.localeCompare(b));
    const venues = counts(hits, "venue").sort(byCount).slice(0, TOP_VENUES);
    const collections = listCounts(hits, "collections").sort(byCount).slice(0, TOP_VENUES);
    // Zotero's libraries, when a hit is in a group library: the others are My Library.
    const grouped = hits.some((hit) => hit.library);
    const libraries = grouped ? counts(hits.map((hit) => ({ library: hit.library || "My Library" })),
      "library").sort(byCount).slice(0, TOP_VENUES) : [];
    const shown = [["Year", "year", years, params.get("year")],
      ["Venue", "venue", venues, params.getAll("venue").join(", ")],
      ["Collection", "collection", collections, params.getAll("collection").join(", ")],
      ["Library", "library", libraries, params.getAll("library").join(", ")]]
      .filter(([, field, entries]) => (field !== "collection" && field !== "library") ||
        entries.length);
    const boxes = shown.map(([title, field, entries, active]) =>
      [...facetBox(title, field, entries, active, apply), entries, field]);
    const aside = el("aside", { class: "facets", "aria-label": `Facets of these ${hits.length} results` },
      el("p", { class: "facet-note" }, `In these ${hits.length} results:`),
      ...boxes.map(([section]) => section));
    const draw = () => {
      for (const [, box, entries, field] of boxes) {
        const chart = window.echarts.init(box, null, { renderer: "canvas" });
        chart.setOption(barOption(entries, field !== "year"));
        chart.on("click", (p) => apply({ [field]: p.name }));
        charts.push(chart);
      }
    };
    return [aside, draw];
  }

  function dispose() {
    charts.forEach((chart) => chart.dispose());
    charts = [];
  }

  window.addEventListener("resize", () => charts.forEach((chart) => chart.resize()));
  ES.facets = { facets, dispose };
})();
