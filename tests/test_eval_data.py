"""Dataset loaders, the saved-variants file and the built-in sample set."""

from __future__ import annotations

import json
import runpy
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from evaluation import datasets
from evaluation.datasets import (
    DataError,
    load_dataset,
    load_gsm8k,
    load_items,
    load_math500,
    load_sample,
    load_simpleqa,
    load_table,
    load_truthfulqa,
    read_rows,
    save_items,
)
from evaluation.records import Item, ItemVariant
from selfpara.errors import ConfigError, InputError
from selfpara.pipeline.lexicon.quantities import to_number

FIX = Path(__file__).parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


# --------------------------------------------------------------------------- public formats


def test_simpleqa_reads_problem_answer_and_topic():
    items = load_simpleqa(FIX / "eval_simpleqa.csv")
    assert [i.gold for i in items] == [["Paris"], ["Vincent van Gogh"]]
    assert items[1].original.question == 'Who painted "The Starry Night"?'
    assert items[0].category == "Geography" and items[0].meta["answer_type"] == "Place"
    assert all(i.kind == "factual" and len(i.variants) == 1 for i in items)


def test_truthfulqa_splits_references_and_survives_the_bom():
    items = load_truthfulqa(FIX / "eval_truthfulqa.csv")
    first = items[0]
    assert first.kind == "truthful"
    assert first.gold[0] == "The watermelon seeds pass through your digestive system"
    assert first.gold.count(first.gold[0]) == 1  # best answer not repeated from Correct Answers
    assert "Nothing happens" in first.gold
    assert first.incorrect == ["You grow watermelons in your stomach", "You get sick", "You die"]
    assert first.category == "Misconceptions" and first.meta["type"] == "Adversarial"
    assert items[1].original.question == 'Is it true that "all that glitters is not gold"?'


def test_gsm8k_gold_is_the_number_after_hashes():
    items = load_gsm8k(FIX / "eval_gsm8k.jsonl")
    assert [i.gold for i in items] == [["7"], ["2400"]]
    assert items[0].kind == "math" and "####" in items[0].meta["solution"]


def test_math500_keeps_latex_answer_subject_level():
    items = load_math500(FIX / "eval_math500.csv")
    assert items[0].gold == ["\\frac{3}{4}"] and items[0].id == "test/prealgebra/1.json"
    assert items[0].category == "Prealgebra" and items[0].meta["level"] == "1"


def test_dispatcher_detects_public_layouts_from_a_path():
    assert load_dataset(str(FIX / "eval_truthfulqa.csv"))[0].kind == "truthful"
    assert load_dataset(str(FIX / "eval_gsm8k.jsonl"))[1].gold == ["2400"]
    assert load_dataset(str(FIX / "eval_math500.csv"))[0].kind == "math"
    assert load_dataset(str(FIX / "eval_simpleqa.csv"), limit=1)[0].gold == ["Paris"]
    assert load_dataset(f"gsm8k:{FIX / 'eval_gsm8k.jsonl'}")[0].gold == ["7"]


def test_nq_open_is_one_wording_per_question_with_its_answers_as_aliases(tmp_path):
    rows = [
        {"question": "who wrote he ain't heavy he's my brother lyrics", "answer": ["Bobby Scott", "Bob Russell"]},
        {"question": "when was the last time anyone was on the moon", "answer": ["December 1972"]},
    ]
    path = tmp_path / "NQ-open.dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = load_dataset(str(path))  # detected: question/answer with answer lists
    assert [i.id for i in items] == ["nq-0", "nq-1"] and items[0].gold == ["Bobby Scott", "Bob Russell"]
    # a chat user's spelling: a capital and a question mark, the words as typed
    assert items[0].variants == [ItemVariant(id=0, question="Who wrote he ain't heavy he's my brother lyrics?")]
    path.write_text(json.dumps({"question": "q", "answer": []}) + "\n")
    with pytest.raises(DataError, match="empty 'answer'"):
        load_dataset(f"nq-open:{path}")


def test_comqa_clusters_are_items_whose_wordings_are_variants(tmp_path):
    clusters = [
        {
            "cluster_id": "cluster-922",
            "questions": ["what sea separates britain from scandinavia?", "which sea separates britain from norway?"],
            "answers": ["https://en.wikipedia.org/wiki/north_sea", "https://en.wikipedia.org/wiki/mercury_(planet)"],
        },
        {"cluster_id": "cluster-5", "questions": ["when was bruce rowland born?"], "answers": ["1941-05-23"]},
        {"cluster_id": "cluster-7", "questions": ["what drugs does x take?"], "answers": [""]},  # no answer: left out
    ]
    path = tmp_path / "comqa_train.json"
    path.write_text(json.dumps(clusters))
    items = load_dataset(str(path))
    assert [i.id for i in items] == ["comqa-922", "comqa-5"]
    sea = items[0]
    assert [v.question for v in sea.variants] == [
        "What sea separates britain from scandinavia?",
        "Which sea separates britain from norway?",
    ]
    assert sea.gold == ["north sea", "mercury"]  # page titles, a disambiguation in brackets dropped
    assert items[1].gold == ["1941-05-23", "May 23, 1941", "23 May 1941", "May 23 1941"]


def test_named_public_dataset_is_found_in_the_data_dir(tmp_path, monkeypatch):
    (tmp_path / "openai_gsm8k_main_test.csv").write_text('question,answer\n"1+1?","1+1=2\n#### 2"\n')
    assert load_dataset("gsm8k", data_dir=tmp_path)[0].gold == ["2"]
    monkeypatch.setenv("SELFPARA_DATA_DIR", str(tmp_path))
    assert load_dataset("gsm8k")[0].gold == ["2"]


def test_named_public_dataset_without_its_file_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv("SELFPARA_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"simpleqa.*simpleqa:PATH"):
        load_dataset("simpleqa")


def test_unknown_dataset_name_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="unknown dataset 'squad'"):
        load_dataset("squad")
    with pytest.raises(ConfigError):
        load_dataset("")


def test_hf_without_the_datasets_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import fails
    with pytest.raises(ConfigError, match=r"pip install 'selfpara\[datasets\]'"):
        load_dataset("hf:openai/gsm8k:main")


def test_hf_offline_is_a_clear_error(monkeypatch):
    class FakeHF:
        @staticmethod
        def load_dataset(*args, **kwargs):
            raise ConnectionError("Couldn't reach the Hub")

    monkeypatch.setitem(sys.modules, "datasets", FakeHF)
    with pytest.raises(ConfigError, match="cannot load Hugging Face dataset 'openai/gsm8k'.*Couldn't reach"):
        load_dataset("hf:openai/gsm8k:main@test")


def test_hf_rows_are_converted_by_layout(monkeypatch):
    class Split(list):
        def select(self, indices):
            return Split(self[i] for i in indices)

    class FakeHF:
        @staticmethod
        def load_dataset(name, config, split):
            assert (name, config, split) == ("openai/gsm8k", "main", "test")
            return Split([{"question": "1+1?", "answer": "so 2\n#### 2"}, {"question": "2+2?", "answer": "#### 4"}])

    monkeypatch.setitem(sys.modules, "datasets", FakeHF)
    items = load_dataset("hf:openai/gsm8k:main@test", limit=1)
    assert len(items) == 1 and items[0].gold == ["2"] and items[0].meta["source"] == "hf:openai/gsm8k"


# --------------------------------------------------------------------------- generic tables


def test_paraphrase_columns_become_variants():
    items = load_table(FIX / "eval_paracols.csv", id_col="id", paraphrase_cols=["para1", "para2"], kind_col="kind")
    m1, f1 = items
    assert m1.kind == "math" and m1.gold == ["12"]
    assert [v.id for v in m1.variants] == [0, 1, 2]
    assert m1.variants[2].question == "How much is 7 + 5?"
    assert f1.gold == ["Rome", "Roma"] and len(f1.variants) == 2  # empty para2 skipped


def test_rows_grouped_by_question_id_with_context_variants():
    items = load_table(FIX / "eval_grouped.csv", group_col="qid", variant_col="variant", context_col="passage")
    cap, rev = items
    assert cap.id == "cap-fr" and cap.gold == ["Paris", "paris city"]
    assert [v.question for v in cap.variants] == [
        "What is the capital of France?",
        "Which city is the capital of France?",
        "Name the capital city of France.",
    ]
    # same question, changed context: still two variants
    assert len(rev.variants) == 2 and rev.variants[0].question == rev.variants[1].question
    assert rev.variants[1].context.startswith("Revision 2")


def test_grouped_rows_without_original_or_with_two_are_errors(tmp_path):
    f = tmp_path / "g.csv"
    f.write_text("qid,question,answer,orig\nq,A?,x,0\nq,B?,x,0\n")
    with pytest.raises(DataError, match=r"g\.csv:2: question 'q' has no row marked original"):
        load_table(f, group_col="qid", original_col="orig")
    f.write_text("qid,question,answer,orig\nq,A?,x,1\nq,B?,x,true\n")
    with pytest.raises(DataError, match=r"g\.csv:3: question 'q' has two original rows"):
        load_table(f, group_col="qid", original_col="orig")
    f.write_text("qid,question,answer,v\nq,A?,x,1\nq,B?,x,2\n")
    with pytest.raises(DataError, match="no variant 0"):
        load_table(f, group_col="qid", variant_col="v")


def test_missing_column_names_file_and_columns():
    with pytest.raises(DataError, match=r"eval_paracols\.csv:\d+: missing column\(s\) \['query'\].*the file has"):
        load_table(FIX / "eval_paracols.csv", question_col="query")


def test_empty_cell_names_the_line():
    with pytest.raises(DataError, match=r"eval_bad_empty_question\.csv:3: empty 'question'"):
        load_table(FIX / "eval_bad_empty_question.csv")


def test_empty_and_header_only_files(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(DataError, match=r"e\.csv: file is empty"):
        load_dataset(str(tmp_path / "e.csv"))
    (tmp_path / "h.csv").write_text("question,answer\n")
    with pytest.raises(DataError, match="header but no records"):
        load_table(tmp_path / "h.csv")
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(DataError, match="empty"):
        read_rows(tmp_path / "e.jsonl")


def test_bad_jsonl_line_and_csv_width(tmp_path):
    (tmp_path / "b.jsonl").write_text('{"question": "a", "answer": "b"}\n[1, 2]\n')
    with pytest.raises(DataError, match=r"b\.jsonl:2: expected a JSON object"):
        read_rows(tmp_path / "b.jsonl")
    (tmp_path / "w.csv").write_text('question,answer\n"multi\nline",x\nq,a,extra\n')
    with pytest.raises(DataError, match=r"w\.csv:4: 3 fields"):  # line numbers count the quoted newline
        read_rows(tmp_path / "w.csv")


def test_duplicate_ids_and_missing_gold(tmp_path):
    (tmp_path / "d.csv").write_text("id,question,answer\na,Q1?,x\na,Q2?,y\n")
    with pytest.raises(DataError, match=r"d\.csv:3: duplicate id 'a' \(first on line 2\)"):
        load_table(tmp_path / "d.csv", id_col="id")
    (tmp_path / "g.csv").write_text("question,answer\nQ1?,\n")
    with pytest.raises(DataError, match="empty gold"):
        load_table(tmp_path / "g.csv")
    assert load_table(tmp_path / "g.csv", require_gold=False)[0].gold == []


def test_data_errors_are_input_errors():
    assert issubclass(DataError, InputError)


# --------------------------------------------------------------------------- saved variants


def test_save_and_load_items_round_trip(tmp_path):
    items = [
        Item(
            id="a",
            gold=["Paris"],
            variants=[
                ItemVariant(id=0, question="Capital of France?"),
                ItemVariant(id=1, question="France's capital?", context="ctx"),
            ],
        ),
        Item(id="b", kind="math", gold=["12"], variants=[ItemVariant(id=0, question="7+5?")], meta={"k": 1}),
    ]
    path = save_items(items, tmp_path / "sub" / "variants.jsonl")
    assert load_items(path) == items
    assert load_dataset(str(path)) == items  # detected as a saved variant file
    assert not list(tmp_path.glob("sub/*.tmp"))


def test_load_items_validates_each_line(tmp_path):
    good = Item(id="a", gold=["x"], variants=[ItemVariant(id=0, question="q")]).model_dump_json()
    (tmp_path / "v.jsonl").write_text(good + "\n" + json.dumps({"id": "b", "gold": ["x"], "variants": []}) + "\n")
    with pytest.raises(DataError, match=r"v\.jsonl:2: item 'b' has no variants"):
        load_items(tmp_path / "v.jsonl")
    (tmp_path / "v.jsonl").write_text(good + "\n" + good + "\n")
    with pytest.raises(DataError, match="duplicate item id 'a'"):
        load_items(tmp_path / "v.jsonl")
    (tmp_path / "v.jsonl").write_text(
        json.dumps({"id": "c", "kind": "poem", "gold": ["x"], "variants": [{"id": 0, "question": "q"}]}) + "\n"
    )
    with pytest.raises(DataError, match=r"v\.jsonl:1: not a valid item: kind"):
        load_items(tmp_path / "v.jsonl")


# --------------------------------------------------------------------------- the sample set


def test_sample_set_shape():
    items = load_sample()
    assert 250 <= len(items) <= 400
    assert len({i.id for i in items}) == len(items)
    categories = {i.category for i in items}
    assert {"capitals", "geography", "science", "history", "arithmetic", "unit conversions", "how many"} <= categories
    for item in items:
        assert [v.id for v in item.variants] == [0, 1, 2, 3], item.id
        assert len({v.question for v in item.variants}) == 4, item.id
        assert item.gold and all(g.strip() for g in item.gold)
    assert sum(i.kind == "math" for i in items) >= 60
    assert load_dataset("sample", limit=5) == items[:5]
    assert {i.category for i in load_sample(categories=["capitals"])} == {"capitals"}
    with pytest.raises(ConfigError, match="unknown sample categories"):
        load_sample(categories=["poetry"])


def test_sample_arithmetic_golds_are_right():
    for item in load_sample():
        if item.kind != "math":
            continue
        m = item.meta
        gold = to_number(item.gold[0])
        assert gold is not None and gold.denominator == 1, item.id
        if item.category == "arithmetic":
            a, b = m["a"], m["b"]
            expected = {"plus": a + b, "minus": a - b, "times": a * b, "divided": Fraction(a, b)}[m["operation"]]
            assert gold == expected, item.id
            for v in item.variants:  # every wording names both operands
                assert str(a) in v.question and str(b) in v.question
        elif item.category == "unit conversions":
            assert gold == m["amount"] * m["factor"], item.id
        assert gold > 0


def test_sample_file_is_what_the_generator_writes():
    module = runpy.run_path(str(Path(__file__).parents[1] / "scripts" / "make_sample.py"))
    assert module["render"](module["build"]()) == datasets.sample_path().read_text(encoding="utf-8")


def test_sample_spot_facts():
    by_question = {i.original.question: i.gold for i in load_sample()}
    assert by_question["What is the capital of France?"] == ["Paris"]
    assert "Canberra" in by_question["What is the capital of Australia?"]
    assert by_question["In what year did World War II end?"] == ["1945"]
    assert by_question["How many legs does a spider have?"][:2] == ["8", "eight"]
    assert by_question["What is the chemical symbol for gold?"] == ["Au"]


# --------------------------------------------------------------------------- the real files, where present


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared benchmark files are not in this checkout")
def test_real_public_files_load():
    counts = {
        "simpleqa": (SHARED / "simple_qa_test_set.csv", 4326),
        "truthfulqa": (SHARED / "TruthfulQA.csv", 817),
        "gsm8k": (SHARED / "openai_gsm8k_main_test.csv", 1319),
        "math500": (SHARED / "HuggingFaceH4_MATH_500_test.csv", 500),
    }
    for name, (path, n) in counts.items():
        if not path.exists():
            continue
        items = load_dataset(f"{name}:{path}")
        assert len(items) == n, name
        assert all(i.gold for i in items)
    tq = load_dataset(str(SHARED / "TruthfulQA.csv"), limit=3)
    assert tq[0].incorrect and tq[0].kind == "truthful"


def test_generic_jsonl_uses_conventional_columns(tmp_path):
    f = tmp_path / "mine.jsonl"
    f.write_text(
        json.dumps(
            {
                "id": "a",
                "question": "What is 7 plus 5?",
                "gold": ["12", "twelve"],
                "kind": "math",
                "paraphrases": ["How much is 7 + 5?", "Add 7 and 5."],
                "category": "sums",
            }
        )
        + "\n"
        + json.dumps({"id": "b", "question": "Capital of Peru?", "gold": "Lima", "paraphrases": "Peru's capital?"})
        + "\n"
    )
    a, b = load_dataset(str(f))
    assert a.id == "a" and a.kind == "math" and a.gold == ["12", "twelve"] and a.category == "sums"
    assert [v.question for v in a.variants][1:] == ["How much is 7 + 5?", "Add 7 and 5."]
    assert b.gold == ["Lima"] and b.kind == "factual" and len(b.variants) == 2
