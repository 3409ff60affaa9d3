// The corpus map: every paper as a point laid out by meaning (ECharts), clusters to
// zoom to, a query's results in red and one paper in focus (#/map?q=…&focus=ID).
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el, status, show, paperHref, escapeHtml } = ES;
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
    "#9c755f", "#ff9da7", "#86bcb6", "#d37295", "#8cd17d", "#a0cbe8", "#ffbe7d", "#499894",
    "#b6992d", "#f1ce63", "#79706e", "#d4a6c8", "#bab0ac", "#fabfd2", "#5778a4", "#e49444",
    "#6a9f58", "#967662", "#a87c9f", "#85b6b2", "#e7ca60", "#5f8f56", "#c85200", "#7b848f"];
  const state = { map: null, chart: null, extent: null, poll: null };

  async function loadMap() {
    if (state.map && state.map.status === "ready") return state.map;
    state.map = await ES.api("/map");
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
    ES.fillForm(params);
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
      if (map.status === "computing") state.poll = setTimeout(ES.render, 4000);
      return;
    }
    const index = new Map(map.ids.map((id, i) => [id, i]));
    let highlights = [];
    const query = params.get("q");
    if (query) {
      try {
        const data = await ES.findHits(params);
        highlights = data.hits.filter((hit) => index.has(hit.id)).map((hit) => [index.get(hit.id), hit.rank]);
      } catch (error) {
        status(error.message, true);
      }
    }
    const focusIndex = index.get(params.get("focus") || "");
    const what = query ? ` · ${highlights.length} results for ${ES.quoted(query)} in red` : "";
    const focus = focusIndex !== undefined ? ` · ◉ ${map.titles[focusIndex]}` : "";
    status(`${map.count} papers, ${map.clusters.length} clusters${what}${focus}`);
    drawMap(map, highlights, focusIndex);
  }

  function dispose() {
    clearTimeout(state.poll);
    if (state.chart) { state.chart.dispose(); state.chart = null; }
  }

  window.addEventListener("resize", () => state.chart && state.chart.resize());
  ES.map = { show: showMap, dispose };
})();
