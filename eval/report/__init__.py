"""The reproduction report: tables (:mod:`eval.report.tables`), plots
(:mod:`eval.report.plots`) and the Markdown document (:mod:`eval.report.markdown`)."""
