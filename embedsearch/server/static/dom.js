// embedsearch page: the DOM helpers every other script uses, on the shared `ES` object.
// Scripts load in order with `defer` (see index.html); app.js, last, starts the page.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const $ = (selector) => document.querySelector(selector);

  function el(tag, attrs = {}, ...children) {
    // Children are nodes or plain text (as text nodes): never parsed as HTML.
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

  function status(message, isError = false) {
    const node = $("#status");
    node.textContent = message;
    node.classList.toggle("error", isError);
  }

  function show(...nodes) {
    $("#view").replaceChildren(...nodes.filter(Boolean));
  }

  const enc = encodeURIComponent;
  Object.assign(ES, {
    $, el, status, show, enc,
    paperHref: (id) => `#/paper/${enc(id)}`,
    escapeHtml: (text) => String(text).replace(/[&<>"']/g,
      (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]),
    where: (paper) => [paper.venue, paper.year].filter(Boolean).join(" "),
  });
})();
