"""Measuring selfpara: datasets with variant sets, graders, metrics with CIs, arms, runner, reports.

Modules import their heavy dependencies lazily; importing `evaluation` costs nothing.

- `evaluation.schema`: Item, ItemVariant, SampleRecord, Label
- `evaluation.datasets`: load_dataset(spec), load_sample(), save_items / load_items, ...
- `evaluation.graders`: grader_for(kind, name), MatchGrader, NumericGrader, NLIGrader, LLMGrader, ...
- `evaluation.metrics`: compute_metrics(rows) -> MetricsTable, load_label_rows, rows_from_records
- `evaluation.stats`: bootstrap over questions, paired bootstrap, permutation test, McNemar
"""
