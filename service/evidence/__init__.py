"""Evidence a third party can check alone: signing keys, signed heads, a Merkle tree.

The formats are docs/evidence.md's; this package is their reference
implementation and does no I/O beyond reading and writing key files.
`clients/node/verify.js` is the independent one.
"""
