"""The bottom layer, shared by every other package: errors, file I/O, the data-root
layout, the schema of benchmark and run records, progress bars and console tables.

It imports nothing from :mod:`retriever`, :mod:`eval` or the application.
"""
