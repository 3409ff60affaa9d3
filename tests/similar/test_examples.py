"""Similar papers from papers outside the index (`similar_to_papers`, `similar --from`,
`--ids-file`, POST /similar), and the evidence of similar papers: shared content words."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.errors import QueryError
from embedsearch.papers import Paper
from embedsearch.readers import read_papers
from embedsearch.text.words import Tokenizer
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
# A paraphrase of the seed paper on offline preference-based RL (000_…:3), sharing few
# of its words: only its meaning can find that paper.
NEW_ABSTRACT = (
    "We learn a policy from a fixed, previously collected dataset of human judgements that "
    "compare pairs of trajectories, without any further interaction with the environment. "
    "Our algorithm estimates a reward from these pairwise preferences with confidence sets "
    "and comes with guarantees on the suboptimality of the learned policy.")
PBRL = "000_ae22c05437d8edef:3"
# Words no evidence of likeness should highlight: function words and the phrases every
# abstract uses about itself.
BORING = {"we", "our", "us", "which", "can", "from", "also", "has", "have", "been", "both",
          "more", "than", "other", "such", "propose", "proposed", "introduce", "set",
          "enabling", "enable", "paper", "approach", "method", "methods", "results", "show",
          "novel", "existing", "present", "using", "based", "work", "new", "achieve"}


@pytest.fixture(scope="module")
def seed_papers(seed_files: list[Path]) -> list[Paper]:
    return read_papers(seed_files)


def ids(hits: list[object]) -> list[str]:
    return [hit.paper.id for hit in hits]  # type: ignore[attr-defined]


def test_papers_the_index_holds_use_their_stored_vectors(seed_engine: SearchEngine,
                                                         seed_papers: list[Paper]) -> None:
    lorvp, lora = seed_papers[0], seed_papers[10]
    # Another id, but the same (derived) title: matched by title, so never re-encoded.
    renamed = {"id": "mine:1", "abstract": lorvp.abstract}
    expected = seed_engine.similar(lorvp.id, 5)
    found = seed_engine.similar_to_papers([renamed], 5)
    assert ids(found) == ids(expected)
    assert [hit.score for hit in found] == pytest.approx([hit.score for hit in expected])
    # A title matches ignoring case, punctuation and spacing, whatever the abstract says.
    shouted = {"id": "x", "title": "  " + lorvp.title.upper().replace(" ", "   ") + " !!",
               "abstract": "Boil the pasta for nine minutes, then add the sauce."}
    assert ids(seed_engine.similar_to_papers([shouted], 5)) == ids(expected)
    unlike = seed_engine.similar_to_papers([renamed], 5, negatives=[{"id": lora.id,
                                                                     "abstract": "x"}])
    assert ids(unlike) == ids(seed_engine.similar(lorvp.id, 5, negatives=[lora.id]))


def test_new_papers_are_encoded_and_ranked_by_meaning(seed_engine: SearchEngine,
                                                      seed_papers: list[Paper]) -> None:
    new = {"id": "new:1", "abstract": NEW_ABSTRACT}
    assert ids(seed_engine.similar_to_papers([new], 3))[0] == PBRL
    given = [{"id": "mine:1", "abstract": seed_papers[0].abstract},
             {"id": "mine:2", "abstract": seed_papers[10].abstract}, new]
    found = ids(seed_engine.similar_to_papers(given, 36))
    assert found[0] == PBRL and len(found) == 36  # every paper but the two matched
    assert seed_papers[0].id not in found and seed_papers[10].id not in found
    with pytest.raises(QueryError, match="at least one paper"):
        seed_engine.similar_to_papers([], 5)


def test_similar_from_files_on_the_command_line(cli: Cli, seed_index: Path,
                                                seed_papers: list[Paper],
                                                tmp_path: Path) -> None:
    refs = tmp_path / "refs.jsonl"
    records = [{"id": "mine:1", "abstract": seed_papers[0].abstract},
               {"id": "mine:2", "abstract": seed_papers[10].abstract},
               {"id": "new:1", "abstract": NEW_ABSTRACT}]
    refs.write_text("".join(json.dumps(record) + "\n" for record in records))
    result = cli("similar", "--from", refs, "--index", seed_index, "-k", "5", "--json")
    assert result.code == 0, result.err
    hits = result.json_lines()
    assert hits[0]["id"] == PBRL and len(hits) == 5
    assert not {seed_papers[0].id, seed_papers[10].id} & {hit["id"] for hit in hits}
    assert hits[0]["query_id"] == "mine:1,mine:2,new:1"
    unlike = tmp_path / "unlike.jsonl"
    unlike.write_text(json.dumps({"id": "u", "abstract": NEW_ABSTRACT}) + "\n")
    alone = [hit["id"] for hit in cli("similar", seed_papers[0].id, "--index", seed_index,
                                      "-k", "37", "--json").json_lines()]
    within = str(alone.index(PBRL) + 1)  # the fewest papers that hold it without negatives
    result = cli("similar", seed_papers[0].id, "--not-from", unlike, "--index", seed_index,
                 "-k", within, "--json")
    assert result.code == 0, result.err
    # The negatives choose which papers are shown (they are shown by their closeness to
    # the given paper): the one like the unwanted abstract is pushed out.
    assert PBRL not in [hit["id"] for hit in result.json_lines()]


def test_ids_file(cli: Cli, seed_index: Path, seed_engine: SearchEngine,
                  tmp_path: Path) -> None:
    listing = tmp_path / "reading-list.txt"
    listing.write_text("# my reading list\n\n000_ae22c05437d8edef:1   # LoR-VP\n"
                       "  000_ae22c05437d8edef:11\n")
    result = cli("similar", "--ids-file", listing, "--index", seed_index, "-k", "4", "--json")
    assert result.code == 0, result.err
    expected = seed_engine.similar(["000_ae22c05437d8edef:1", "000_ae22c05437d8edef:11"], 4)
    assert [hit["id"] for hit in result.json_lines()] == ids(expected)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing yet\n\n")
    result = cli("similar", "--ids-file", empty, "--index", seed_index)
    assert result.code == 1 and "holds no paper ids" in result.err and str(empty) in result.err
    result = cli("similar", "--index", seed_index)
    assert result.code == 1 and "--from FILE" in result.err


def test_similar_evidence_is_shared_content_words(seed_engine: SearchEngine,
                                                  seed_papers: list[Paper]) -> None:
    tokenizer = Tokenizer()

    def stems(paper: Paper) -> set[str]:
        return set(tokenizer.words(f"{paper.title} {paper.abstract}"))

    with_terms = 0
    for example in seed_papers[:8]:
        for hit in seed_engine.similar(example.id, 5):
            assert hit.evidence and hit.evidence in " ".join(hit.paper.abstract.split())
            for term in hit.evidence_terms:
                assert term.lower() not in BORING, (example.id, hit.paper.id, term)
                (stem,) = tokenizer.words(term)
                assert stem in stems(example) and stem in stems(hit.paper), term
                assert term in hit.evidence
            with_terms += bool(hit.evidence_terms)
    assert with_terms >= 25  # of 40: most similar papers share some topic word


def test_post_similar(seed_engine: SearchEngine, seed_papers: list[Paper]) -> None:
    from fastapi.testclient import TestClient

    from embedsearch.server import create_app

    with TestClient(create_app(seed_engine, compute_map=False),
                    base_url="http://localhost") as client:
        body = {"papers": [{"id": "mine:1", "abstract": seed_papers[0].abstract},
                           {"id": "new:1", "abstract": NEW_ABSTRACT}],
                "negatives": [{"id": seed_papers[10].id, "abstract": "x"}], "k": 5}
        response = client.post("/similar", json=body)
        assert response.status_code == 200, response.text
        data = response.json()
        expected = seed_engine.similar_to_papers(body["papers"], 5,  # type: ignore[arg-type]
                                                 negatives=body["negatives"])  # type: ignore[arg-type]
        assert [hit["id"] for hit in data["hits"]] == ids(expected)
        assert data["query_id"] == "mine:1,new:1" and data["hits"][0]["rank"] == 1
        assert seed_papers[0].id not in {hit["id"] for hit in data["hits"]}
        # A bibliography entry known by its title alone is an example too.
        titled = {"papers": [{"id": "t", "title": "Offline preference-based reinforcement "
                                                  "learning from human feedback"}], "k": 3}
        response = client.post("/similar", json=titled)
        assert response.status_code == 200, response.text
        assert response.json()["hits"][0]["id"] == PBRL
        for bad, parameter in (({"papers": []}, "papers"),
                               ({"papers": [{"id": "a", "abstract": "   "}]},
                                "papers.0.abstract"),
                               ({"papers": [{"id": "a"}]}, "papers.0.abstract"),
                               ({"papers": [{"id": "a", "abstract": "b"}], "k": 0}, "k")):
            response = client.post("/similar", json=bad)
            assert response.status_code == 422, response.text
            assert response.json()["parameter"] == parameter


def test_post_similar_is_a_read(seed_engine: SearchEngine) -> None:
    from fastapi.testclient import TestClient

    from embedsearch.server import create_app

    token = "read-token-0123456789"
    with TestClient(create_app(seed_engine, compute_map=False, read_token=token),
                    base_url="http://localhost") as client:
        body = {"papers": [{"id": "new:1", "abstract": NEW_ABSTRACT}], "k": 2}
        assert client.post("/similar", json=body).status_code == 401
        answer = client.post("/similar", json=body, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200 and answer.json()["hits"][0]["id"] == PBRL
