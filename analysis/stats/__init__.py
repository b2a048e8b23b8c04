"""The Sniff-timing statistics (docs/statistics.md) and the summary statistics, as SQL over facts.

The engine computes each match's facts once (`sniff.facts`); this
package stores them in typed tables (`service/storage/facts.sql`), runs the statistics as
DuckDB aggregates (`timing.sql`, `summary.sql`) and draws them.
"""
