"""The page as a researcher's workbench, in headless Chromium (Debian's): the reading list
(star, dismiss, Library, Recommended, named lists, import and export), typeset math and
emphasis, abstracts that cannot inject markup, and the year/venue/collection/library
facets."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

from embedsearch import SearchEngine  # noqa: E402
from embedsearch.readers import read_papers  # noqa: E402
from embedsearch.server import create_app  # noqa: E402
from tests.server.test_live_server import CHROMIUM, CHROMIUM_FLAGS, LiveServer  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at "
                       "/usr/bin/chromium (apt-get install chromium)"),
]

# Papers beside the 38 ICLR 2025 seeds: other venues and years for the facets, LaTeX and
# emphasis to typeset, and an abstract that tries to inject markup.
EXTRA = [
    {"id": "test:latex", "venue": "NeurIPS", "year": 2023, "collections": ["Thesis/Methods"],
     "title": r"Visual prompts in $\mathcal{O}(n \log n)$ time",
     "abstract": r"We learn **low-rank** visual prompts whose cost grows as $O(n \log n)$ "
                 r"in the number of patches $n$, and *prove* the bound $$\sum_{i=1}^{n} "
                 r"\frac{1}{i^2} < 2$$ for visual prompting of pre-trained image models."},
    {"id": "test:xss", "venue": "NeurIPS", "year": 2023,
     "title": "Prompting <img src=x onerror=window.__pwned=1> visual models",
     "abstract": "Visual prompting adapts image models. <img src=x onerror=\"window.__pwned=1\">"
                 "<script>window.__pwned=2</script><b>bold?</b> Prompts are padded pixels."},
    {"id": "test:neurips2024", "venue": "NeurIPS", "year": 2024, "collections": ["Thesis"],
     "library": "Vision Lab",
     "title": "Visual prompting with learned pixel patches",
     "abstract": "Visual prompting learns pixel patches added to images so that a frozen "
                 "pre-trained model solves a new task with few trainable parameters."},
]
QUERY = "visual prompting for pre-trained image models"
WAIT_MS = 30_000
EXPECTED_404 = ("/not-a-paper", "/similar")  # an id made up; POST /similar refused


@pytest.fixture(scope="module")
def site(seed_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    target = tmp_path_factory.mktemp("workbench") / "index"
    shutil.copytree(seed_index, target)
    engine = SearchEngine.open(target)
    engine.add(EXTRA)
    try:
        with LiveServer(create_app(engine, compute_map=False)) as url:
            yield url
    finally:
        engine.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, site: str) -> Iterator[Any]:
    """A page in a fresh browser context (empty localStorage); fails on any page error,
    console error or failed request (a font or script that did not load)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  permissions=["clipboard-read", "clipboard-write"])
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
    # Every answer but the 404s the tests make on purpose: no asset is missing.
    tab.on("response", lambda response: errors.append(f"{response.status}: {response.url}")
           if response.status >= 400 and not response.url.endswith(EXPECTED_404) else None)
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error"
           and not msg.text.startswith("Failed to load resource") else None)
    tab.goto(f"{site}/")
    yield tab
    context.close()
    assert not errors, errors


def shot(page: Any, name: str) -> None:
    folder = Path(os.environ.get("EMBEDSEARCH_SCREENSHOTS", "/tmp"))
    page.screenshot(path=str(folder / f"page-{name}.png"), full_page=True)


def search(page: Any, query: str) -> None:
    page.goto(page.url.split("#")[0] + f"#/search?q={query.replace(' ', '+')}")
    wait_status(page, "closest")


def result_ids(page: Any) -> list[str]:
    # The shown list, not the library's folded-away dismissed papers.
    return list(page.eval_on_selector_all(":not(details) > ol.results > .result",
                                          "els => els.map(e => e.dataset.id)"))


def wait_status(page: Any, text: str) -> None:
    # Locator assertions, not wait_for_function: the page's CSP forbids the eval that
    # a string predicate needs.
    expect(page.locator("#status")).to_contain_text(text, timeout=WAIT_MS)


def downloaded(page: Any, format: str) -> str:
    """The file the export toolbar's Download saves in `format`."""
    page.select_option(".export-format", format)
    with page.expect_download() as info:
        page.click(".export-download")
    return Path(info.value.path()).read_text(encoding="utf-8")


def test_reading_list_from_star_to_recommendations_and_back_out(page: Any,
                                                               tmp_path: Path) -> None:
    search(page, QUERY)
    first, second = result_ids(page)[:2]
    page.locator(".result").first.locator("button.star").click()
    assert page.locator(".result").first.locator("button.star").get_attribute(
        "aria-pressed") == "true"
    page.click("#tab-library")
    wait_status(page, "1 starred papers")
    assert result_ids(page) == [first]

    page.click("#tab-recommended")
    wait_status(page, "papers like the 1 starred")
    recommended = result_ids(page)
    assert recommended and first not in recommended
    # Ranked by POST /similar at once, each naming the starred paper it is like.
    title = page.evaluate("(id) => ES.library.paper(id).title", first)
    notes = page.locator(".result .note").all_inner_texts()
    assert len(notes) == len(recommended) and title
    assert all(note == f"because you have “{title}”" for note in notes), notes[:2]
    shot(page, "recommended")
    # Starring a recommended paper refreshes the list: it leaves, the others re-rank.
    liked = recommended[0]
    page.locator(".result").first.locator("button.star").click()
    wait_status(page, "papers like the 2 starred")
    after_star = result_ids(page)
    assert liked not in after_star and first not in after_star
    # Dismissing one takes it out, and the ranking turns away from it.
    dismissed = after_star[0]
    page.locator(".result").first.locator("button.dismiss").click()
    wait_status(page, "unlike the 1 dismissed")
    after_dismiss = result_ids(page)
    assert dismissed not in after_dismiss and after_dismiss != after_star

    page.click("#tab-library")
    wait_status(page, "2 starred papers")
    assert result_ids(page) == [liked, first]  # newest first
    ids_file = downloaded(page, "ids")
    lines = [line for line in ids_file.splitlines() if line and not line.startswith("#")]
    assert lines == [liked, first]
    assert ids_file.startswith("# Reading list")
    # Written by the command line's writers (POST /export), filled in from the index (the
    # library keeps titles), and read back by its readers as the same papers.
    for format, suffix in (("bibtex", ".bib"), ("ris", ".ris"), ("csl-json", ".json")):
        (tmp_path / f"library{suffix}").write_text(downloaded(page, format), encoding="utf-8")
        back = read_papers([tmp_path / f"library{suffix}"])
        assert [paper.id for paper in back] == [liked, first], format
        assert all(paper.title and paper.abstract and paper.venue for paper in back), format
    bibtex = (tmp_path / "library.bib").read_text(encoding="utf-8")
    assert re.search(r"@misc\{" + re.escape(first) + r",\n\s+title = ", bibtex)
    page.select_option(".export-format", "bibtex")
    page.click(".export-copy")
    expect(page.locator(".export-note")).to_contain_text("Copied 2 papers as BibTeX",
                                                         timeout=WAIT_MS)
    assert page.evaluate("navigator.clipboard.readText()") == bibtex
    assert page.locator(".dismissed-list summary").inner_text() == "Dismissed (1)"
    shot(page, "library")

    # The library outlives a reload; lists are created, switched, renamed and deleted.
    page.reload()
    wait_status(page, "2 starred papers")
    page.fill("#list-name", "Later")
    page.click("#list-new")
    wait_status(page, "0 starred papers in “Later”")
    page.select_option("#list-pick", "Reading list")
    wait_status(page, "2 starred papers in “Reading list”")
    page.fill("#list-name", "Prompting")
    page.click("#list-rename")
    wait_status(page, "in “Prompting”")
    assert page.eval_on_selector_all("#list-pick option", "os => os.map(o => o.value)") == [
        "Prompting", "Later"]
    page.select_option("#list-pick", "Later")
    wait_status(page, "in “Later”")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#list-delete")
    wait_status(page, "2 starred papers in “Prompting”")

    # Import: the ids file format, comments and blank lines skipped, unknown ids named.
    page.set_input_files("#list-import", files=[{
        "name": "shared.txt", "mimeType": "text/plain",
        "buffer": f"# from a colleague\n\n{second}\nnot-a-paper\n".encode()}])
    wait_status(page, "Imported 2 ids into “shared”; 1 of them are not in this index")
    expect(page.locator(".results .result")).to_have_count(2, timeout=WAIT_MS)
    assert result_ids(page) == [second, "not-a-paper"]


def test_importing_a_bibliography_keeps_what_the_index_lacks_for_recommended(
        page: Any) -> None:
    # A researcher's own .bib: one entry the index holds (another key, the same title),
    # one outside it with an abstract, one known by its title alone, one broken.
    bib = (r"@inproceedings{mine1, title={Visual prompting with learned pixel patches}}"
           "\n@article{mine2, title={Prompt tuning for vision transformers},\n"
           "  abstract={We tune a few prompt tokens of a frozen vision transformer.}}\n"
           "@article{mine3, title={Offline reinforcement learning from human preferences}}\n"
           "@article{broken, title={never closed,\n")
    page.click("#tab-library")
    wait_status(page, "starred papers")
    page.set_input_files("#list-import", files=[{
        "name": "thesis.bib", "mimeType": "text/plain", "buffer": bib.encode()}])
    wait_status(page, "Imported 3 entries into “thesis”: 1 in this index, 2 from outside it "
                      "(1 known by title alone), used for Recommended; 1 skipped.")
    expect(page.locator(".results .result")).to_have_count(1, timeout=WAIT_MS)
    assert result_ids(page) == ["test:neurips2024"]
    outside = page.eval_on_selector_all(".outside-list li", "els => els.map(e => e.textContent)")
    assert outside == ["Prompt tuning for vision transformers",
                       "Offline reinforcement learning from human preferences"]
    page.click("#tab-recommended")
    wait_status(page, "papers like the 1 starred and 2 from your bibliography in “thesis”")
    shown = result_ids(page)
    assert shown and "test:neurips2024" not in shown
    shot(page, "recommended-from-bibliography")


def test_recommended_without_post_similar_merges_one_query_per_paper(page: Any) -> None:
    # A server from before POST /similar answers it 404: the page asks GET
    # /papers/{id}/similar for each starred paper and merges the lists by best score.
    page.route(re.compile(r"/similar$"), lambda route: route.fulfill(
        status=404, json={"detail": "Not Found"}))
    search(page, QUERY)
    starred = result_ids(page)[:2]
    page.keyboard.press("Escape")  # out of the search box: keys act on the results
    for key in "jfjf":  # j: next result, f: star it
        page.keyboard.press(key)
    assert page.locator("button.star[aria-pressed=true]").count() == 2
    page.click("#tab-recommended")
    wait_status(page, "papers like the 2 starred")
    shown = result_ids(page)
    assert shown and not set(shown) & set(starred)
    notes = page.locator(".result .note").all_inner_texts()
    assert len(notes) == len(shown)
    assert all(note.startswith("because you have “") for note in notes)


def test_math_and_emphasis_typeset_and_abstracts_cannot_inject(page: Any) -> None:
    page.goto(page.url.split("#")[0] + "#/paper/test%3Alatex")
    page.wait_for_selector(".abstract .katex")
    assert page.locator("h1.page-title .katex").count() == 1
    assert page.locator(".abstract .katex").count() == 3  # two inline, one display
    assert page.locator(".abstract .katex-display").count() == 1
    assert page.locator(".abstract strong").inner_text() == "low-rank"
    assert page.locator(".abstract em").inner_text() == "prove"
    # The fonts came from this server (the fixture fails on any failed request). They
    # load after the typesetting, so wait for them (a machine running other jobs took over
    # the 15 s this waited before: a generous bound, not a speed check).
    page.wait_for_function("document.fonts.check('16px KaTeX_Main')", timeout=WAIT_MS * 4)
    shot(page, "paper-math")

    # The seed paper's "$6\\times$" and "**Lo**w-**R**ank": the evidence words are still
    # marked (outside the math), and its page sets the bold letters of its acronym.
    search(page, "low-rank visual prompting faster training")
    assert page.locator(".results .katex").count() > 0
    assert page.locator(".results .evidence mark").count() > 0
    page.locator(".result a.title", has_text="Visual prompting has gained").click()
    page.wait_for_selector(".abstract .katex")
    assert page.locator(".abstract strong").all_inner_texts() == ["Lo", "R", "V", "P"]
    assert page.locator(".abstract .katex").count() == 2  # $6\\times$ and $18\\times$
    assert "**" not in page.locator(".abstract").inner_text()

    # Each view is waited for by what only it shows: the paper page before it also had an
    # abstract, which a busy machine's check saw before the new one was drawn.
    xss_title = page.locator("h1.page-title", has_text="visual models")
    for path, shown in (("#/paper/test%3Axss", xss_title),
                        (f"#/search?q={QUERY.replace(' ', '+')}", page.locator(".result"))):
        page.goto(page.url.split("#")[0] + path)
        expect(shown.first).to_be_visible(timeout=WAIT_MS)
        page.wait_for_timeout(300)  # an injected onerror would have run by now
        assert page.locator("#view img, #view script, #view b").count() == 0
        assert page.evaluate("window.__pwned") is None
    page.goto(page.url.split("#")[0] + "#/paper/test%3Axss")
    expect(xss_title).to_be_visible(timeout=WAIT_MS)
    assert '<img src=x onerror="window.__pwned=1">' in page.locator(".abstract").inner_text()


def bar_point(page: Any, field: str, name: str) -> tuple[float, float]:
    """Where on the screen the facet's bar for `name` is (the middle of the bar)."""
    return tuple(page.evaluate("""([field, name]) => {
        const box = document.getElementById('facet-' + field);
        const chart = echarts.getInstanceByDom(box);
        const option = chart.getOption();
        const horizontal = field !== 'year';
        const names = (horizontal ? option.yAxis : option.xAxis)[0].data;
        const i = names.indexOf(name);
        const count = option.series[0].data[i];
        const [x, y] = chart.convertToPixel({ seriesIndex: 0 },
            horizontal ? [count / 2, i] : [i, count / 2]);
        const rect = box.getBoundingClientRect();
        return [rect.left + x, rect.top + y];
    }""", [field, name]))


def facet_counts(page: Any, field: str) -> dict[str, int]:
    return dict(page.evaluate("""(field) => {
        const option = echarts.getInstanceByDom(document.getElementById('facet-' + field))
            .getOption();
        const names = (field !== 'year' ? option.yAxis : option.xAxis)[0].data;
        return names.map((n, i) => [n, option.series[0].data[i]]);
    }""", field))


def test_facets_count_the_results_and_a_click_filters(page: Any) -> None:
    search(page, QUERY)
    page.wait_for_selector("#facet-venue canvas")
    metas = page.eval_on_selector_all(".result .meta", "els => els.map(e => e.innerText)")
    venues = facet_counts(page, "venue")
    assert venues == {"ICLR": sum("ICLR 2025" in m for m in metas),
                      "NeurIPS": sum("NeurIPS" in m for m in metas)}
    assert venues["NeurIPS"] == 3
    assert facet_counts(page, "year") == {"2023": 2, "2024": 1, "2025": len(metas) - 3}
    shot(page, "facets")

    page.mouse.click(*bar_point(page, "venue", "NeurIPS"))
    page.wait_for_url(re.compile("venue=NeurIPS"))
    wait_status(page, "3 papers closest")
    assert all("NeurIPS" in m for m in page.eval_on_selector_all(
        ".result .meta", "els => els.map(e => e.innerText)"))
    assert page.input_value("#venue") == "NeurIPS"
    page.mouse.click(*bar_point(page, "year", "2023"))
    wait_status(page, "2 papers closest")
    assert page.input_value("#year") == "2023"
    assert sorted(result_ids(page)) == ["test:latex", "test:xss"]
    # Each filter comes off from its facet's heading.
    page.click("#view .facet-clear >> nth=0")
    wait_status(page, "3 papers closest")
    assert page.input_value("#year") == ""

    page.set_viewport_size({"width": 390, "height": 844})
    search(page, QUERY)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "phone")


def test_the_collection_facet_filters_with_sub_collections(page: Any) -> None:
    search(page, QUERY)
    page.wait_for_selector("#facet-collection canvas")
    assert facet_counts(page, "collection") == {"Thesis": 1, "Thesis/Methods": 1}
    page.mouse.click(*bar_point(page, "collection", "Thesis"))
    page.wait_for_url(re.compile("collection=Thesis"))
    wait_status(page, "2 papers closest")  # Thesis and its sub-collection Methods
    assert sorted(result_ids(page)) == ["test:latex", "test:neurips2024"]
    assert page.input_value("#collection") == "Thesis"


def test_the_library_facet_tells_a_group_library_from_my_library(page: Any) -> None:
    search(page, QUERY)
    page.wait_for_selector("#facet-library canvas")
    shown = len(result_ids(page))
    assert facet_counts(page, "library") == {"My Library": shown - 1, "Vision Lab": 1}
    page.mouse.click(*bar_point(page, "library", "Vision Lab"))
    page.wait_for_url(re.compile("library=Vision"))
    wait_status(page, "1 paper closest")
    assert result_ids(page) == ["test:neurips2024"]


# What the page must never show raw: LaTeX escapes and text macros outside math, and the
# marks of Markdown emphasis (KaTeX's own source, kept for screen readers, is hidden).
RAW_MARKUP = re.compile(r"\\%|\\text|\\href|\\emph|\*\*|\*\w[^*]*\*")


def test_the_sample_shows_no_raw_markup_and_derived_titles_as_openings(page: Any) -> None:
    page.goto(page.url.split("#")[0] + "#/search?q=model+compression+and+sparsity&k=50")
    wait_status(page, "closest")
    page.wait_for_selector(".results .katex")
    # Every paper of the sample is listed: none shows markup in its title or snippet.
    shown = page.locator("#view ol.results").evaluate(
        "list => { const copy = list.cloneNode(true);"
        " copy.querySelectorAll('.katex-mathml').forEach(n => n.remove());"
        " return copy.textContent; }")
    assert not RAW_MARKUP.search(shown), RAW_MARKUP.findall(shown)
    # A title cut from the abstract is its opening: set apart, and ending in an ellipsis.
    derived = page.locator(".result a.title.derived")
    assert derived.count() >= 38
    assert all(text.endswith("…") for text in derived.all_inner_texts())
    assert page.locator(".result a.title.derived").first.evaluate(
        "a => getComputedStyle(a).fontStyle") == "italic"
    assert page.locator(".result a.title:not(.derived)", has_text="Visual prompts in").count()

    page.locator(".result a.title", has_text="The ever-increasing size of large").click()
    page.wait_for_selector("h1.page-title.derived")
    abstract = page.locator(".abstract")
    assert "over 80% retention" in abstract.inner_text()
    assert page.locator(".abstract em").all_inner_texts() == ["PruneNet"]
    assert not RAW_MARKUP.search(abstract.inner_text())
    # \textbf outside math is bold; "$\textbf{2.60$\times$}$" is one formula, typeset.
    page.goto(page.url.split("#")[0] + "#/search?q=dynamic+low-rank+sparse+adaptation")
    wait_status(page, "closest")
    page.locator(".result a.title", has_text="Despite the efficacy of network").click()
    page.wait_for_selector(".abstract .katex")
    assert "$" not in page.locator(".abstract").evaluate(
        "p => { const copy = p.cloneNode(true);"
        " copy.querySelectorAll('.katex-mathml').forEach(n => n.remove());"
        " return copy.textContent; }")
    shot(page, "paper-derived-title")
