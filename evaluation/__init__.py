"""Measuring selfpara: datasets with variant sets, graders, metrics with CIs, arms, runner, reports.

Depends on `selfpara`; `selfpara` never imports it. Modules import their heavy
dependencies lazily; importing `evaluation` costs nothing.

- `evaluation.records`: Item, ItemVariant, SampleRecord, Label
- `evaluation.datasets`: load_dataset(spec), load_sample(), save_items / load_items, one module per source
- `evaluation.graders`: grader_for(kind, name), register_grader, one module per grader
- `evaluation.metrics`: compute_metrics(rows) -> MetricsTable, load_label_rows, rows_from_records
- `evaluation.stats`: bootstrap over questions, paired bootstrap, permutation test, McNemar
- `evaluation.arms`: make_arm(spec), register_arm, one module per arm
- `evaluation.bench_config`, `evaluation.runner`, `evaluation.rundir`, `evaluation.variants`: running a bench
- `evaluation.report`: report.json / report.md / report.html of a run directory
- `evaluation.cli`: the `bench`, `report` and `metrics` commands of the `selfpara` CLI
"""
