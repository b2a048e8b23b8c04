"""Analysis on top of the engine: audits of match records, simulations, and the `sniff` CLI."""
