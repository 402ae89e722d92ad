"""The LoCoMo benchmark harness (``benchmarks/locomo``) on a tiny synthetic conversation.

LoCoMo itself is CC BY-NC and never part of the repository: the conversation below is made up
here, in LoCoMo's JSON layout, so the loader, the systems and the metric arithmetic can be
checked offline.
"""

from __future__ import annotations

import doctest
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.locomo import budget, data, experiments, metrics, retention, run, systems  # noqa: E402
from benchmarks.locomo.data import (  # noqa: E402
    HOW_TO_GET,
    conversation_from_json,
    load,
    parse_date,
    split,
)
from benchmarks.locomo.metrics import Result, Scores, any_at, recall_at  # noqa: E402
from benchmarks.locomo.systems import library, or_keywords, window_index  # noqa: E402
from langchain_session_recall.backends.vectors.windows import window_ranges as windows  # noqa: E402


def _turns(n: int, lines: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"speaker": s, "dia_id": f"D{n}:{i + 1}", "text": t} for i, (s, t) in enumerate(lines)]


def synthetic(sample_id: str = "conv-26") -> dict[str, Any]:
    """Three sessions between Ana and Ben, and four questions with evidence."""
    s1 = _turns(
        1,
        [
            ("Ana", "I finally repaired the old sailboat hull this weekend."),
            ("Ben", "Nice! Did you use epoxy or fibreglass cloth?"),
            ("Ana", "Epoxy, two coats, then sanded it smooth."),
        ],
    )
    s1[2]["blip_caption"] = "a small boat on a trailer"
    s2 = _turns(
        2,
        [
            ("Ben", "My sourdough starter died while I was travelling."),
            ("Ana", "Feed it flour daily next time, or dry some as a backup."),
        ],
    )
    s3 = _turns(
        3,
        [
            ("Ana", "The chess club elected me treasurer."),
            ("Ben", "Congratulations on the club vote!"),
            ("Ana", "Thanks, the sailboat race is next on my list."),
        ],
    )
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": s1,
            "session_2_date_time": "9:05 am on 2 June, 2023",
            "session_2": s2,
            "session_3_date_time": "7:30 pm on 20 July, 2023",
            "session_3": s3,
            "session_4_date_time": "8:00 pm on 1 August, 2023",  # a date without a session
        },
        "qa": [
            {
                "question": "How did Ana repair the hull?",
                "evidence": ["D1:3"],
                "category": 4,
                "answer": "Epoxy, two coats",
            },
            {
                "question": "Why did Ben's starter die?",
                "evidence": ["D2:1"],
                "category": 4,
                "answer": "he was away travelling",  # not verbatim in the conversation
            },
            {
                "question": "What has Ana said about the sailboat?",
                "evidence": ["D1:1; D3:3"],
                "category": 1,
                "answer": 2,  # a number, not a string: not a short string answer
            },
            {"question": "Which club elected Ana?", "evidence": ["D:3:1"], "category": 2},
            {"question": "A question without evidence", "evidence": [], "category": 3},
        ],
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo_synthetic.json"
    path.write_text(json.dumps([synthetic("conv-26"), synthetic("conv-99")]))
    return path


def test_the_protocol_maps_sessions_turns_and_questions() -> None:
    conv = conversation_from_json(synthetic())
    assert [s.id for s in conv.sessions] == ["session_1", "session_2", "session_3"]
    first = conv.sessions[0]
    assert first.started_at == parse_date("1:56 pm on 8 May, 2023") == 1683554160.0
    assert [t.role for t in first.turns] == ["user", "assistant", "user"]
    assert first.turns[0].content == "Ana: I finally repaired the old sailboat hull this weekend."
    assert first.turns[2].content.endswith(" [shares a photo: a small boat on a trailer]")
    assert [t.timestamp - first.started_at for t in first.turns] == [0.0, 30.0, 60.0]
    assert [sorted(q.evidence) for q in conv.questions] == [
        ["session_1"],
        ["session_2"],
        ["session_1", "session_3"],
        ["session_3"],  # "D:3:1", an odd form the data has
    ]
    assert len(conv.questions) == 4  # the question without evidence does not count
    assert [q.answer for q in conv.questions] == [
        "Epoxy, two coats",
        "he was away travelling",
        None,  # given as a number
        None,  # no answer in the data
    ]


def test_splits_keep_dev_and_test_apart(data_file: Path) -> None:
    convs = load(data_file)
    assert [c.sample_id for c in split(convs, "dev")] == ["conv-26"]
    assert [c.sample_id for c in split(convs, "test")] == ["conv-99"]
    assert len(split(convs, "all")) == 2


def test_metric_arithmetic_on_a_hand_computed_case() -> None:
    ranked = ["s3", "s1", "s9", "s4", "s2", "s7"]
    evidence = {"s1", "s2", "s8"}
    assert recall_at(ranked, evidence, 1) == 0.0
    assert recall_at(ranked, evidence, 3) == pytest.approx(1 / 3)
    assert recall_at(ranked, evidence, 5) == pytest.approx(2 / 3)
    assert any_at(ranked, evidence, 5) == 1.0
    assert any_at(["s9"], evidence, 5) == 0.0
    scores = Scores()
    scores.add(ranked, evidence)  # R@1 0, R@3 1/3, R@5 2/3, any 1
    scores.add(["s1"], {"s1"})  # all 1
    figures = scores.figures()
    assert figures["R@1"] == pytest.approx(50.0)
    assert figures["R@3"] == pytest.approx(100 * (1 / 3 + 1) / 2)
    assert figures["R@5"] == pytest.approx(100 * (2 / 3 + 1) / 2)
    assert figures["any@5"] == pytest.approx(100.0)
    result = Result()
    result.add(4, ["s1"], {"s1"})
    result.add(1, ["s2"], {"s1"})
    assert result.to_json()["R@5_by_category"] == {"1": 0.0, "4": 100.0}


def test_windows_cover_every_turn_with_the_given_overlap() -> None:
    assert windows(13, 6, 1) == [(0, 6), (5, 11), (10, 13)]
    assert windows(3, 6, 1) == [(0, 3)]
    assert windows(7, 2, 1) == [(0, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7)]


@pytest.mark.parametrize("system", [library, or_keywords, window_index(2, 1)])
def test_each_system_finds_the_obvious_session(system: Any) -> None:
    conv = conversation_from_json(synthetic())
    built = system(conv)
    assert built.rank("How did Ana repair the hull?")[0] == "session_1"
    assert built.rank("sourdough starter")[0] == "session_2"
    assert built.index_bytes > 0


def test_the_run_prints_a_table_and_saves_json(
    data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures.json"
    code = run.main(
        ["--data", str(data_file), "--split", "both", "--json", str(out), "--only", "library"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "| system | R@1 dev | R@3 dev | R@5 dev | any@5 dev | R@1 test |" in printed
    assert "4 single-hop dev" in printed
    figures = json.loads(out.read_text())
    (name,) = figures
    dev = figures[name]["dev"]
    assert dev["questions"] == 4
    assert dev["questions_by_category"] == {"1": 1, "2": 1, "4": 2}
    assert dev["R@5"] == 100.0  # three sessions: all of them fit in the top 5
    assert dev["R@1"] == 87.5  # the sailboat question has two sessions: 1/2 at k=1 at best


def test_without_data_it_says_where_to_get_it_and_skips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("LOCOMO_DATA", raising=False)
    assert run.main([]) == 0
    assert capsys.readouterr().out.strip() == HOW_TO_GET
    monkeypatch.setenv("LOCOMO_DATA", str(tmp_path / "missing.json"))
    assert run.main(["--split", "dev"]) == 0
    assert "github.com/snap-research/LoCoMo" in capsys.readouterr().out


def test_the_experiments_score_the_synthetic_conversation() -> None:
    conv = conversation_from_json(synthetic())
    collected = experiments.collect([conv], 2, 1, "words")
    assert len(collected.items) == 4
    assert collected.index_bytes > 0 and collected.raw_bytes == conv.raw_text_bytes
    for name, formula in experiments.FORMULAS.items():
        figures = experiments.evaluate(collected, formula).result.overall.figures()
        assert figures["R@5"] == 100.0, name  # three sessions: every one is in the top 5
        assert figures["R@1"] >= 62.5, name  # at most one of the four questions misses at k=1
    # the dates are words of every window: a month finds its session
    hits = experiments.WindowIndex(conv, 2, 1, "words").match_messages(
        experiments.parse_query("June"), "relaxed"
    )
    assert {h.session_id for h in hits} == {"session_2"}


def test_answer_retention_on_the_synthetic_conversation(
    data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "retention.json"
    assert retention.main(["--data", str(data_file), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| all | 2 | 50.0% (1) | 100.0% (1) |" in printed  # dev only: conv-99 is not read
    figures = json.loads(out.read_text())
    assert figures["split"] == "dev"
    assert figures["all"]["questions"] == 2  # the short string answers of categories 1, 2, 4
    rows = figures["rows"]
    assert [(r["in_windows"], r["in_output"]) for r in rows] == [(True, True), (False, False)]
    assert all(r["output_chars"] > 0 for r in rows)


def test_answer_matching_is_normalised_and_on_word_boundaries() -> None:
    assert retention.contains("Epoxy -- two coats, then sanded", "epoxy, two COATS")
    assert not retention.contains("I started painting", "art")
    assert not retention.contains("anything", "")


def test_retention_without_data_skips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LOCOMO_DATA", raising=False)
    assert retention.main([]) == 0
    assert capsys.readouterr().out.strip() == HOW_TO_GET


@pytest.mark.parametrize("module", [data, experiments, metrics, retention, systems, budget])
def test_the_benchmark_examples_run(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# -- answer quality (qa.py): LoCoMo's answer scoring, on made-up answers ----------------------


def test_qa_scores_answers_the_way_locomo_does() -> None:
    from benchmarks.locomo import qa

    assert qa.normalize_answer("The Pottery, and painting!") == "pottery painting"
    assert qa.token_f1("painting", "paintings") == 1.0  # Porter stems
    assert qa.token_f1("a trip to Paris", "Paris") == 0.5  # precision 1/2, recall 1
    assert qa.locomo_f1("pottery, camping", "camping, pottery", 1) == 1.0
    assert qa.locomo_f1("pottery", "camping, pottery", 1) == 0.5
    # Only multi-hop answers are split on commas.
    assert round(qa.locomo_f1("pottery, camping", "camping, pottery", 4), 2) == 1.0
    assert qa.locomo_f1("no idea", "pottery", 2) == 0.0


def test_qa_skips_without_data_or_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.locomo import qa

    monkeypatch.delenv("LOCOMO_DATA", raising=False)
    assert qa.main(["--out", str(tmp_path / "qa.jsonl")]) == 0
    assert "LoCoMo data not found" in capsys.readouterr().out
    data = tmp_path / "locomo.json"
    data.write_text("[]")
    monkeypatch.setattr(qa, "server_up", lambda url: False)
    assert qa.main(["--data", str(data), "--out", str(tmp_path / "qa.jsonl")]) == 0
    assert "No OpenAI-compatible server" in capsys.readouterr().out


def test_qa_resumes_without_asking_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A second run with the same --out asks only the questions not answered yet."""
    from benchmarks.locomo import qa

    data_file = tmp_path / "locomo_synthetic.json"  # two development conversations
    data_file.write_text(json.dumps([synthetic("conv-26"), synthetic("conv-30")]))
    asked: list[str] = []

    def fake_ask(question: Any, conversation: Any, store: Any, llm: Any, recap_llm: Any) -> dict:
        asked.append(question.text)
        row: dict[str, Any] = {"question": question.text, "gold": question.answer}
        row["category"] = question.category
        for name in qa.SYSTEMS:
            row[name] = {"answer": "x", "seconds": 1.0, "f1": 0.0, "contains": False}
        return row

    monkeypatch.setattr(qa, "server_up", lambda url: True)
    monkeypatch.setattr(qa, "ask", fake_ask)
    monkeypatch.setattr(qa, "_chat", lambda *args, **kwargs: None)
    out = tmp_path / "qa.jsonl"
    argv = ["--data", str(data_file), "--out", str(out), "--per-category", "2"]
    assert qa.main(argv) == 0
    first = list(asked)
    assert len(first) == 2  # one short-answer question of category 1/2/4 per conversation
    lines = out.read_text().splitlines()
    assert len(lines) == len(first)
    out.write_text(lines[0] + "\n")  # as if the machine stopped after the first question
    asked.clear()
    assert qa.main(argv) == 0
    assert asked == first[1:]
    assert len(out.read_text().splitlines()) == len(first)


def test_qa_report_compares_the_systems_question_by_question() -> None:
    from benchmarks.locomo import qa

    def row(category: int, none: float, extractive: float, model: float) -> dict[str, Any]:
        scores = {"none": none, "extractive": extractive, "model": model}
        out: dict[str, Any] = {"category": category}
        for name, f1 in scores.items():
            out[name] = {"answer": "", "seconds": 10.0, "f1": f1, "contains": f1 == 1.0}
        out["model"].update(
            statuses=["summarized", None], recaps_with_answer_in_window=1, recaps_keeping_answer=0
        )
        return out

    text = qa.report([row(1, 0.0, 1.0, 0.5), row(4, 0.0, 0.0, 1.0)])
    assert "| extractive | 2 | 50.0 | 50.0% | 100.0 / - / 0.0 | 10 |" in text
    assert "model against extractive: F1 higher on 1, lower on 1, equal on 0" in text
    assert "extractive against none: F1 higher on 1, lower on 0, equal on 1" in text
    assert "{'summarized': 2, 'browsed': 2}" in text
    assert "0 of 2 keep it (0%)" in text


# -- hybrid.py's query cost: every variant timed, on the synthetic conversation ---------------


def test_the_hybrid_timing_reports_wall_and_cpu_for_every_variant() -> None:
    from hybrid_support import ConceptEmbeddings

    from benchmarks.locomo import hybrid

    conv = conversation_from_json(synthetic())
    model = ConceptEmbeddings()
    out = hybrid.timing(conv, model, model, (3, 1), 1.0, 3)
    assert out["questions"] == 3
    for name in ("lexical", "hybrid", "hybrid_sequential", "hybrid_cached_query"):
        for kind in ("wall", "cpu"):
            assert out[f"{name}_{kind}_p90_ms"] >= out[f"{name}_{kind}_ms"] > 0
    for name in ("hybrid", "hybrid_sequential", "hybrid_cached_query"):
        assert out[f"{name}_wall_ratio"] > 0 and out[f"{name}_cpu_ratio"] > 0
    # every question went through the model: the live one is embedded by it each time
    assert model.queries >= 3 * 3


# -- token budget (budget.py): gold survival, on the synthetic conversation --------------------


def test_budget_gold_is_the_answer_or_the_evidence_turns() -> None:
    golds = budget.golds(synthetic())
    assert [(g.answer, g.literal) for g in golds] == [
        ("Epoxy, two coats", True),  # in its evidence turn, D1:3
        ("he was away travelling", False),  # not verbatim: the evidence turn is the gold
        ("2", False),  # a number, read as its text
    ]  # the question without an answer does not count
    assert golds[1].evidence == ("Ben: My sourdough starter died while I was travelling.",)
    assert len(golds[2].evidence) == 2  # "D1:1; D3:3": two turns
    assert golds[1].present("[USER]: Ben: My sourdough starter died while I was travelling.")
    assert not golds[1].present("Ben: My sourdough starter died")  # a clipped turn


def test_budget_survival_on_the_synthetic_conversation(
    data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rows.json"
    assert budget.main(["--data", str(data_file), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3 questions" in printed  # dev only: conv-99 is not read
    rows = json.loads(out.read_text())
    assert len(rows) == 3
    first = rows[0]
    assert first["retrieved"] is True
    assert first["tool"] == {"none": True, "250": True, "500": True, "1000": True, "2000": True}
    assert first["middleware"]["250"] is True
    for row in rows:
        assert all(row["tool_tokens"][str(b)] <= b for b in budget.BUDGETS)
        assert all(row["middleware_tokens"][str(b)] <= b for b in budget.BUDGETS)


def test_budget_reads_the_held_out_split_only_when_asked(
    data_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert budget.main(["--data", str(data_file), "--split", "test"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("test split") and "3 questions" in printed  # conv-99 alone


def test_budget_without_data_skips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LOCOMO_DATA", raising=False)
    assert budget.main([]) == 0
    assert capsys.readouterr().out.strip() == HOW_TO_GET
