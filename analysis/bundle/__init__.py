"""Evidence bundles: a log's matches with everything a third party needs to check them alone.

`sniff export --evidence DIR` writes one (`writer.write_bundle`), `sniff verify
DIR` checks it (`verify.verify_bundle`), and so does `clients/node/verify.js`,
written independently. The format is docs/evidence.md's "Bundles"; `layout`
holds its file names and the exact text of each line, shared by the writer and
the verifier so that the two cannot drift apart.

It lives in analysis/, not in service/evidence/ (the signing keys, signed
statements and the Merkle tree it builds on), because verifying a bundle
replays the matches with the log audit (analysis/logaudit.py) and derives the
match records with the export (analysis/export.py).
"""
