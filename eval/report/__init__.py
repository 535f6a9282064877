"""The reproduction report: tables (:mod:`eval.report.tables`), plots
(:mod:`eval.report.plots`), the Markdown document (:mod:`eval.report.markdown`)
and ``report.html`` (:mod:`eval.report.html`, with :mod:`eval.report.markdown_html`
and the question browser's data, :mod:`eval.report.browser`)."""
