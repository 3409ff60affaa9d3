// Titles and abstracts as their authors wrote them: LaTeX math typeset by KaTeX
// ($…$, \(…\) inline; $$…$$, \[…\] display), **bold** and *italic*, LaTeX's text
// macros (\textbf, \emph, \href, …) and escapes (\%, \&) as what they print, and the
// evidence words marked. The text itself only ever becomes DOM text nodes; KaTeX's HTML goes
// through DOMPurify before it enters the page, so an abstract cannot inject markup.
"use strict";

(() => {
  const ES = (window.ES = window.ES || {});
  const { el } = ES;
  // Math spans stand in the text as private-use characters while emphasis is parsed,
  // so a `*` inside math is never read as italic.
  const SLOT = /\uE000(\d+)\uE001/g;
  const SLOTS_OR_STRAY = /[\uE000\uE001]/g;
  const MAX_INLINE_TEX = 400; // a stray "$" must not swallow a whole abstract
  // **bold** may sit inside a word ("**Lo**w-**R**ank"); *italic* not ("2*3*4" is text).
  const EMPHASIS = /\*\*([^\s*](?:[^]*?[^\s*])??)\*\*|(?<![\w*])\*([^\s*](?:[^*]*?[^\s*])??)\*(?![\w*])/g;
  // LaTeX outside math, as abstracts from OpenReview carry it: a macro's text (one level
  // of braces) and the escapes of characters TeX reserves.
  const TEXT_MACRO = /\\(textbf|textit|emph|texttt|textsc|underline|url)\{([^{}]*)\}|\\href\{([^{}]*)\}\{([^{}]*)\}/g;
  const OPEN_MACRO = /^\\[a-z]+(?:\{[^{}]*\})*\{[^{}]*$/i;
  const TEXT_ESCAPE = /\\([%&#_$])/g;
  const KATEX_OPTIONS = { throwOnError: true, trust: false, strict: "ignore", maxSize: 20,
    maxExpand: 300, output: "htmlAndMathml" };

  function inlineDollar(text, start) {
    // Pandoc's rule: no space just inside the dollars and no digit right after the
    // closing one, so "costs $5 and $10" stays text.
    if (/\s/.test(text[start + 1] || " ")) return null;
    const stop = Math.min(text.length, start + MAX_INLINE_TEX);
    let depth = 0; // a "$" inside braces re-enters math in text: $\textbf{2.60$\times$}$
    for (let j = start + 1; j < stop; j++) {
      if (text[j] === "\\") { j++; continue; }
      if (text[j] === "{") depth++;
      else if (text[j] === "}") depth = Math.max(0, depth - 1);
      if (text[j] !== "$" || depth > 0) continue;
      if (/\s/.test(text[j - 1]) || /\d/.test(text[j + 1] || "")) return null;
      return { start, end: j + 1, tex: text.slice(start + 1, j), display: false };
    }
    return null;
  }

  function delimited(text, start, open, close, display) {
    const end = text.indexOf(close, start + open.length);
    if (end <= start + open.length) return null;
    return { start, end: end + close.length, tex: text.slice(start + open.length, end), display };
  }

  function mathSpans(text) {
    const spans = [];
    for (let i = 0; i < text.length;) {
      let span = null;
      if (text.startsWith("\\(", i)) span = delimited(text, i, "\\(", "\\)", false);
      else if (text.startsWith("\\[", i)) span = delimited(text, i, "\\[", "\\]", true);
      else if (text.startsWith("$$", i)) span = delimited(text, i, "$$", "$$", true);
      else if (text[i] === "$") span = inlineDollar(text, i);
      if (span) { spans.push(span); i = span.end; continue; }
      // An escaped character ("\$") is never a delimiter.
      i += text[i] === "\\" || text.startsWith("$$", i) ? 2 : 1;
    }
    return spans;
  }

  function mathNode(span, source, inline) {
    if (!window.katex || !window.DOMPurify) return document.createTextNode(source);
    try {
      const html = window.katex.renderToString(span.tex,
        { ...KATEX_OPTIONS, displayMode: span.display && !inline });
      const node = el("span", { class: "math", title: source });
      node.append(window.DOMPurify.sanitize(html, { RETURN_DOM_FRAGMENT: true,
        ADD_TAGS: ["semantics", "annotation"] }));
      return node;
    } catch (error) {
      return document.createTextNode(source); // not TeX after all: show what was written
    }
  }

  // TeX's typing of quotes and dashes, as abstracts often keep it (``views'', a---b).
  const TYPOGRAPHY = [[/---/g, "\u2014"], [/--/g, "\u2013"], [/``/g, "\u201c"], [/''/g, "\u201d"]];

  function marked(raw, terms) {
    const text = TYPOGRAPHY.reduce((out, [pattern, glyph]) => out.replace(pattern, glyph), raw)
      .replace(TEXT_ESCAPE, "$1");
    if (!terms.length) return [text];
    const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const parts = text.split(new RegExp(`\\b(${escaped.join("|")})\\b`, "gi"));
    return parts.map((part, i) => (i % 2 ? el("mark", {}, part) : part)).filter((p) => p !== "");
  }

  function leaves(text, ctx) {
    // Plain text (the evidence words marked) and the math nodes of its slots.
    const out = [];
    let last = 0;
    for (const match of text.matchAll(SLOT)) {
      out.push(...marked(text.slice(last, match.index), ctx.terms));
      out.push(ctx.math[Number(match[1])]());
      last = match.index + match[0].length;
    }
    out.push(...marked(text.slice(last), ctx.terms));
    return out;
  }

  function latexText(text, ctx) {
    // \textbf{x} bold, \textit{x} and \emph{x} italic, \texttt{x} code, \href{url}{x}
    // and \url{x} their text; Markdown's emphasis in between.
    const out = [];
    let last = 0;
    for (const match of text.matchAll(TEXT_MACRO)) {
      out.push(...emphasis(text.slice(last, match.index), ctx));
      const [, macro, inner, , linked] = match;
      const words = emphasis(inner ?? linked, ctx);
      const tag = { textbf: "strong", textit: "em", emph: "em", texttt: "code" }[macro];
      out.push(...(tag ? [el(tag, {}, words)] : words));
      last = match.index + match[0].length;
    }
    out.push(...emphasis(text.slice(last), ctx));
    return out;
  }

  function emphasis(text, ctx) {
    const out = [];
    let last = 0;
    for (const match of text.matchAll(EMPHASIS)) {
      out.push(...leaves(text.slice(last, match.index), ctx));
      out.push(match[1] !== undefined ? el("strong", {}, emphasis(match[1], ctx))
        : el("em", {}, leaves(match[2], ctx)));
      last = match.index + match[0].length;
    }
    out.push(...leaves(text.slice(last), ctx));
    return out;
  }

  // Nodes for `text`: terms are the words to mark; inline typesets display math inline
  // (titles, snippets).
  function render(text, { terms = [], inline = false } = {}) {
    const source = String(text ?? "").replace(SLOTS_OR_STRAY, "");
    const ctx = { terms: terms.filter(Boolean), math: [] };
    let slotted = "";
    let last = 0;
    for (const span of mathSpans(source)) {
      const raw = source.slice(span.start, span.end);
      slotted += source.slice(last, span.start) + `\uE000${ctx.math.length}\uE001`;
      ctx.math.push(() => mathNode(span, raw, inline));
      last = span.end;
    }
    return latexText(slotted + source.slice(last), ctx);
  }

  // A title's nodes; a title derived from the abstract (its first sentence) is the
  // abstract's opening, so it ends in an ellipsis, and the page sets it apart (.derived).
  function title(paper, options = {}) {
    const text = String(paper.title || paper.id || "");
    return render(paper.title_derived ? `${text.replace(/…$/, "")}…` : text, options);
  }

  function snippet(text, limit = 220) {
    // The opening of an abstract, cut at a space, never inside math or a bold run.
    const flat = String(text || "").split(/\s+/).join(" ").trim();
    if (flat.length <= limit) return flat;
    let cut = flat.lastIndexOf(" ", limit - 1);
    for (const span of mathSpans(flat)) {
      if (span.start < cut && cut < span.end) cut = span.start;
    }
    let head = flat.slice(0, cut).trimEnd();
    if ((head.match(/\*\*/g) || []).length % 2) head = head.slice(0, head.lastIndexOf("**"));
    const macro = head.lastIndexOf("\\"); // nor inside a LaTeX macro's braces
    if (macro >= 0 && OPEN_MACRO.test(head.slice(macro))) head = head.slice(0, macro);
    return head.trimEnd().replace(/[,;:.]+$/, "") + "…";
  }

  ES.rich = { render, snippet, mathSpans, title };
})();
