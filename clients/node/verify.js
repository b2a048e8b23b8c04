#!/usr/bin/env node
// Verify the log's evidence in JavaScript, with nothing but Node's own crypto:
// written from docs/evidence.md (signed statements, RFC 9162's Merkle proofs,
// bundles, proof documents), reusing provable.js for docs/chain.md and
// docs/dealing.md. It does everything `sniff verify` does except the rules
// replay (legal moves, points, scores): that needs the engine, and it says so.
//
//   node verify.js DIR [--public-key KEY.pub] [--workers N]   an evidence bundle
//   node verify.js --proof FILE --public-key KEY.pub   one proof document
//   node verify.js --vectors FILE                  tests/fixtures/evidence_vectors.json
//
// Exit status: 0 verified, 1 the evidence does not verify (one line on stderr
// naming the file, the line and what failed), 2 misuse (a missing directory,
// not a bundle, an unreadable key).
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { isMainThread, parentPort, workerData } = require('node:worker_threads');
const { seededDeal, lot, commitment, seatEntropySeed, link, parseJson, canonical, GENESIS } = require('./provable.js');

class Misuse extends Error {}

// Evidence that does not verify, at `file` (and `line`, counted from 1).
class Rejected extends Error {
  constructor(file, line, reason) {
    super(`${file}${line ? `:${line}` : ''}: ${reason}`);
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;
const MATCH_ID = /^[0-9A-Za-z_-]{1,64}$/;
const sha256 = (...parts) => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const isUint = (v) => Number.isSafeInteger(v) && v >= 0;
const isHexList = (v) => Array.isArray(v) && v.every((h) => typeof h === 'string' && HEX64.test(h));
const sameKeys = (obj, keys) =>
  obj !== null && typeof obj === 'object' && !Array.isArray(obj) && Object.keys(obj).join(',') === keys.join(',');

// ---- the key and the log id ---------------------------------------------------

// An Ed25519 public key from its SPKI PEM; the log id is SHA-256 of the raw 32 bytes.
function loadKey(pem) {
  let key;
  try {
    key = crypto.createPublicKey(pem);
  } catch (e) {
    return null;
  }
  if (key.asymmetricKeyType !== 'ed25519') return null;
  const raw = key.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { key, raw, logId: sha256(raw).toString('hex'), pem: key.export({ format: 'pem', type: 'spki' }) };
}

function readKeyFile(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Misuse(`cannot read the key file ${file}: ${e.code || e.message}`);
  }
  const key = loadKey(text);
  if (key === null) throw new Misuse(`${file} is not an Ed25519 public key (SPKI PEM)`);
  return key;
}

// ---- signed statements (docs/evidence.md) ---------------------------------------

const checkpointText = (c) => `sniff/checkpoint/v1\n${c.log_id}\n${c.match_id}\n${c.seq}\n${c.head}\n`;
const treeHeadText = (t) => `sniff/tree-head/v1\n${t.log_id}\n${t.tree_size}\n${t.root_hash}\n${t.timestamp_ms}\n`;

// The reason a checkpoint or tree head object is not in its documented form, or null.
function malformedStatement(obj, type) {
  const keys =
    type === 'checkpoint'
      ? ['type', 'log_id', 'match_id', 'seq', 'head', 'signature']
      : ['type', 'log_id', 'tree_size', 'root_hash', 'timestamp_ms', 'signature'];
  if (!sameKeys(obj, keys) || obj.type !== type) return `a ${type} is an object of exactly ${keys.join(', ')}`;
  if (!HEX64.test(obj.log_id)) return `${type}: log_id is not 64 hex digits`;
  if (!HEX128.test(obj.signature)) return `${type}: signature is not 128 hex digits`;
  if (type === 'checkpoint') {
    if (typeof obj.match_id !== 'string' || !MATCH_ID.test(obj.match_id)) return 'checkpoint: match_id is not a match id';
    if (!isUint(obj.seq) || !HEX64.test(obj.head)) return 'checkpoint: seq or head malformed';
  } else if (!isUint(obj.tree_size) || !isUint(obj.timestamp_ms) || !HEX64.test(obj.root_hash)) {
    return 'tree head: tree_size, root_hash or timestamp_ms malformed';
  }
  return null;
}

// The reason `key` did not sign the statement, or null when it did.
function badSignature(obj, key) {
  if (obj.log_id !== key.logId) return `signed for log ${obj.log_id.slice(0, 16)}…, not this key's log ${key.logId.slice(0, 16)}…`;
  const text = obj.type === 'checkpoint' ? checkpointText(obj) : treeHeadText(obj);
  const ok = crypto.verify(null, Buffer.from(text, 'utf8'), key.key, Buffer.from(obj.signature, 'hex'));
  return ok ? null : 'the signature is not the key\'s over the signed text';
}

// ---- the tree (RFC 9162 §2.1) -------------------------------------------------

const leafData = (matchId, seq, head) => Buffer.from(`sniff/tree-leaf/v1\n${matchId}\n${seq}\n${head}\n`, 'utf8');
const leafHash = (data) => sha256(Buffer.from([0]), data);
const nodeHash = (left, right) => sha256(Buffer.from([1]), left, right);
const EMPTY_ROOT = sha256(Buffer.alloc(0));
const odd = (n) => n % 2 === 1;
const isPowerOfTwo = (n) => {
  let x = n;
  while (x > 1 && x % 2 === 0) x /= 2;
  return x === 1;
};
const half = (n) => Math.floor(n / 2);

// §2.1.3.2: verifying an inclusion proof. Returns the reason it fails, or null.
function inclusionFails(hash, index, size, proof, root) {
  if (index >= size) return `leaf ${index} is not in a tree of ${size} leaves`;
  let fn = index;
  let sn = size - 1;
  let r = hash;
  for (const p of proof) {
    if (sn === 0) return 'the inclusion proof is longer than the tree is deep';
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!(odd(fn) || fn === 0)) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return 'the inclusion proof is shorter than the tree is deep';
  if (!r.equals(root)) return 'the inclusion proof does not lead to the tree head\'s root';
  return null;
}

// §2.1.4.2: verifying a consistency proof from (first, firstHash) to (second, secondHash).
function consistencyFails(first, second, firstHash, secondHash, proof) {
  if (first > second) return `a tree of ${second} leaves cannot extend one of ${first}`;
  if (first === 0) {
    if (proof.length) return 'a consistency proof from the empty tree is empty';
    return firstHash.equals(EMPTY_ROOT) ? null : 'the empty tree\'s root is SHA-256 of nothing';
  }
  if (first === second) {
    if (proof.length) return 'a consistency proof between equal sizes is empty';
    return firstHash.equals(secondHash) ? null : 'two tree heads of the same size have different roots';
  }
  if (proof.length === 0) return 'the consistency proof is empty';
  const path = [...proof];
  // "If first is an exact power of 2, then prepend first_hash to the consistency_path array."
  if (isPowerOfTwo(first)) path.unshift(firstHash);
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return 'the consistency proof is longer than the trees are deep';
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!(odd(fn) || fn === 0)) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return 'the consistency proof is shorter than the trees are deep';
  if (!fr.equals(firstHash)) return 'the consistency proof does not lead to the old tree head\'s root';
  if (!sr.equals(secondHash)) return 'the consistency proof does not lead to the new tree head\'s root';
  return null;
}

const hexes = (list) => list.map((h) => Buffer.from(h, 'hex'));

// ---- reading a bundle's files ---------------------------------------------------

// The lines of a file read a block at a time (events.jsonl may be larger than a string),
// each block decoded whole up to its last newline.
const UTF8 = new TextDecoder('utf-8', { fatal: true });
class Lines {
  constructor(file, name) {
    this.fd = fs.openSync(file, 'r');
    this.name = name;
    this.buffer = Buffer.alloc(1 << 22);
    this.pending = [];
    this.at = 0;
    this.rest = Buffer.alloc(0);
    this.done = false;
    this.number = 0;
  }

  fill() {
    while (this.at >= this.pending.length && !this.done) {
      const n = fs.readSync(this.fd, this.buffer, 0, this.buffer.length, null);
      if (n === 0) {
        this.done = true;
        if (this.rest.length) throw new Rejected(this.name, this.number + 1, 'the last line has no newline');
        break;
      }
      const data = this.rest.length ? Buffer.concat([this.rest, this.buffer.subarray(0, n)]) : this.buffer.subarray(0, n);
      const end = data.lastIndexOf(10) + 1;
      this.rest = Buffer.from(data.subarray(end));
      let text;
      try {
        text = UTF8.decode(data.subarray(0, end));
      } catch (e) {
        const lines = data.subarray(0, end).toString('latin1').split('\n');
        const bad = lines.findIndex((line) => {
          try {
            UTF8.decode(Buffer.from(line, 'latin1'));
            return false;
          } catch (err) {
            return true;
          }
        });
        throw new Rejected(this.name, this.number + bad + 1, 'not UTF-8');
      }
      this.pending = text.split('\n');
      this.pending.pop();
      this.at = 0;
    }
  }

  // The next line (null at the end).
  next() {
    this.fill();
    if (this.at >= this.pending.length) return null;
    this.number += 1;
    return this.pending[this.at++];
  }

  close() {
    fs.closeSync(this.fd);
  }
}

function allLines(dir, name) {
  const lines = new Lines(path.join(dir, name), name);
  const out = [];
  try {
    for (let line = lines.next(); line !== null; line = lines.next()) out.push(line);
  } finally {
    lines.close();
  }
  return out;
}

function jsonOf(name, line, text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Rejected(name, line, `not JSON: ${e.message}`);
  }
}

// A JSON Lines line as the format writes it: Python's json.dumps(separators=(",", ":"),
// ensure_ascii=False) and JSON.stringify write the same text for these values.
const compact = (value) => JSON.stringify(value);

// ---- events.jsonl -----------------------------------------------------------------

const STRING = '"[^"\\\\\\x00-\\x1f]*(?:\\\\.[^"\\\\\\x00-\\x1f]*)*"';
const INT = '(null|0|-?[1-9][0-9]*)';
const TEXT = `(${STRING})`;
const TEXT_OR_NULL = `(null|${STRING})`;
const EVENT_LINE = new RegExp(
  `^\\{"action_index":${INT},"detail":${TEXT_OR_NULL},"drawn":${TEXT_OR_NULL},"ends_sum":${INT},` +
    `"kind":${TEXT},"match_id":${TEXT},"move":${TEXT_OR_NULL},"points":${INT},"round":${INT},` +
    `"seat":${INT},"seq":(0|[1-9][0-9]*),"hash":"([0-9a-f]{64})"\\}$`,
);

// A JSON string's value, refusing any escape the format would not write.
function textOf(raw) {
  if (raw === undefined || raw === 'null') return null;
  if (!raw.includes('\\')) return raw.slice(1, -1);
  const value = JSON.parse(raw);
  if (JSON.stringify(value) !== raw) throw new Error('a string escaped otherwise than the format escapes it');
  return value;
}

// An event line: its values, and its canonical encoding (docs/chain.md). The line is that
// encoding with the detail's canonical JSON in place of the detail's text and `hash` added,
// so every field but the detail is taken from the line as it is.
function parseEvent(text) {
  const m = EVENT_LINE.exec(text);
  if (m === null) throw new Error('not an event as the format writes it (compact, the keys in order)');
  const [, actionIndex, detail, drawn, endsSum, kind, matchId, move, points, round, seat, seq, hash] = m;
  const detailText = textOf(detail);
  const detailValue = detailText === null ? null : parseJson(detailText);
  const content =
    `{"action_index":${actionIndex},"detail":${detailValue === null ? 'null' : canonical(detailValue)},` +
    `"drawn":${drawn},"ends_sum":${endsSum},"kind":${kind},"match_id":${matchId},"move":${move},` +
    `"points":${points},"round":${round},"seat":${seat},"seq":${seq}}`;
  const num = (v) => (v === 'null' ? null : Number(v));
  return {
    matchId: textOf(matchId),
    seq: Number(seq),
    kind: textOf(kind),
    round: num(round),
    seat: num(seat),
    move: textOf(move),
    points: num(points),
    detailText,
    detail: detailValue,
    hash,
    content: Buffer.from(content, 'utf8'),
  };
}

// ---- the checks of one match (docs/audit.md, but for the rules replay) ----------------------

const get = (map, key) => (map instanceof Map ? map.get(key) : undefined);
const intOf = (v) => (v !== null && typeof v === 'object' && 'int' in v ? BigInt(v.int) : null);
const plain = (v) => {
  // A value of parseJson as plain JSON (integers as numbers: deals and scores are small).
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object' && 'int' in v) return Number(v.int);
  return v;
};
const DEALING = 'sniff/rng/v1';

function checkMatch(match, events, lineOf) {
  const id = match.match_id;
  const fail = (seq, reason) => {
    throw new Rejected('events.jsonl', lineOf(seq), `match ${id}: ${reason}`);
  };
  const created = events[0];
  const end = events[events.length - 1];
  if (created.kind !== 'match_created') fail(0, `the first event is ${created.kind}, not match_created`);
  events.forEach((e, i) => {
    if (i > 0 && e.kind === 'match_created') fail(i, 'a second match_created event');
    if (e.kind === 'match_ended' && i !== events.length - 1) fail(i, 'events follow the match\'s end');
  });
  if (end.kind !== 'match_ended') fail(end.seq, `the last event is ${end.kind}, not match_ended`);
  // The secrets: those the end reveals, which must be those of the creation.
  const secretAt = get(created.detail, 'chain_secret');
  const secretHex = get(end.detail, 'chain_secret');
  if (secretAt !== undefined && secretAt !== null && secretHex !== secretAt) fail(end.seq, 'the chain secret revealed at the end is not the one the match was created with');
  const secret = typeof secretHex === 'string' && HEX64.test(secretHex) ? Buffer.from(secretHex, 'hex') : null;
  // The chain.
  let head = GENESIS;
  for (const e of events) {
    head = link(head, secret, e.content);
    if (head.toString('hex') !== e.hash) fail(e.seq, `chain_broken: the hash of event ${e.seq} (${e.kind}) does not follow from its content and the previous hash`);
  }
  // The commitment.
  const committed = get(created.detail, 'seed_commitment');
  const seed = intOf(get(end.detail, 'seed'));
  const createdSeed = intOf(get(created.detail, 'seed'));
  if (committed !== undefined && committed !== null) {
    const salt = get(end.detail, 'seed_salt');
    if (seed === null || typeof salt !== 'string' || !HEX64.test(salt)) fail(end.seq, 'commitment_mismatch: no seed and salt revealed to open the commitment');
    if (seed < 0n || seed >= 2n ** 64n) fail(end.seq, 'commitment_mismatch: the revealed seed is not a 64-bit seed');
    if (commitment(seed, Buffer.from(salt, 'hex')).toString('hex') !== committed) fail(end.seq, `commitment_mismatch: seed ${seed} and its salt do not open the commitment given at creation`);
    if (createdSeed !== seed) fail(end.seq, 'reveal_mismatch: the seed revealed at the end is not the one logged at creation');
  }
  // The deals made from the seed, and the lots. With seat entropy the seed is derived from
  // the house seed (the committed one) and each seat's entropy, logged in the first deal.
  let dealSeed = seed !== null ? seed : createdSeed;
  const seeded = dealSeed !== null && get(created.detail, 'dealing') === DEALING;
  const seats = intOf(get(created.detail, 'seats'));
  if (seeded && get(created.detail, 'seat_entropy') === true) {
    const first = events.find((e) => e.kind === 'round_dealt');
    const given = first === undefined ? undefined : get(first.detail, 'seat_entropy');
    if (!Array.isArray(given) || given.length !== Number(seats) || !given.every((h) => typeof h === 'string' && HEX64.test(h))) {
      fail(first === undefined ? end.seq : first.seq, 'deal_mismatch: a seat entropy match logs no entropy for each of its seats');
    }
    dealSeed = seatEntropySeed(dealSeed, given.map((h) => Buffer.from(h, 'hex')));
  }
  let finisher = null;
  for (const e of events) {
    if (e.kind === 'round_ended') finisher = intOf(get(e.detail, 'finisher'));
    if (e.kind !== 'round_dealt' || !seeded || get(e.detail, 'dealt_by') === 'request') continue;
    const made = seededDeal(dealSeed, e.round, Number(seats));
    const logged = plain(e.detail);
    if (JSON.stringify(made.hands) !== JSON.stringify(logged.hands) || JSON.stringify(made.boneyard) !== JSON.stringify(logged.boneyard)) {
      fail(e.seq, `deal_mismatch: the logged deal of round ${e.round} is not the one the seed makes`);
    }
    const choice = logged.leader_choice;
    if (choice === 'lot' && logged.leader !== lot(dealSeed, e.round, Number(seats))) fail(e.seq, `deal_mismatch: seat ${logged.leader} leads, but the lot gives another`);
    if (choice === 'finisher' && BigInt(logged.leader) !== finisher) fail(e.seq, `deal_mismatch: seat ${logged.leader} leads, but seat ${finisher} finished the last round`);
  }
  return head.toString('hex');
}

// The match record the events make (docs/records.md), as `sniff export` writes it.
function recordOf(matchId, events) {
  const details = events.map((e) => (e.detailText === null ? {} : JSON.parse(e.detailText)));
  const created = details[0];
  const variant = created.variant === undefined ? 'american' : created.variant;
  const seats = created.seats;
  const record = { format: variant === 'american' ? 'american-sniff/1' : 'sniff/2' };
  if (variant !== 'american') record.variant = variant;
  if (created.source === 'imported') {
    if ('record_id' in created) record.id = created.record_id;
  } else {
    record.id = matchId;
  }
  record.seats = seats;
  record.target = created.target;
  if (created.players !== undefined && created.players !== null) record.players = created.players;
  if (created.round_limit !== undefined && created.round_limit !== null) record.round_limit = created.round_limit;
  const team = (s) => (seats === 4 ? s % 2 : s);
  let scores = new Array(seats).fill(0);
  const rounds = [];
  let ended = null;
  events.forEach((e, i) => {
    const detail = details[i];
    if (e.kind === 'round_dealt') {
      rounds.push({ leader: detail.leader, hands: detail.hands, boneyard: detail.boneyard, actions: [], claims: { points: [] } });
    } else if (e.kind === 'action' && rounds.length) {
      const last = rounds[rounds.length - 1];
      last.actions.push(e.move);
      const placement = e.move !== 'draw' && e.move !== 'pass';
      last.claims.points.push(placement ? e.points : null);
      if (placement && e.points) scores = scores.map((s, seat) => (team(seat) === team(e.seat) ? s + e.points : s));
    } else if (e.kind === 'round_ended' && rounds.length) {
      const claims = rounds[rounds.length - 1].claims;
      claims.end = detail.end;
      claims.deductions = detail.deductions;
      claims.scores = detail.scores;
      scores = [...detail.scores];
    } else if (e.kind === 'match_ended') {
      ended = detail;
    }
  });
  if (ended !== null && rounds.length && !('end' in rounds[rounds.length - 1].claims)) rounds[rounds.length - 1].claims.scores = ended.scores;
  record.rounds = rounds;
  record.claims = ended !== null ? { winner: ended.winner, scores: ended.scores } : { scores };
  return record;
}

// ---- a bundle (docs/evidence.md, "Bundles") -------------------------------------------

const FILES = ['bundle.json', 'public_key.pem', 'matches.jsonl', 'events.jsonl', 'checkpoints.jsonl', 'tree_heads.jsonl', 'records.jsonl'];
const CHECKPOINTED = new Set(['round_ended', 'match_ended']);

async function verifyBundle(dir, trusted, workers = 1) {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Misuse(`${dir}: no such directory`);
  if (!fs.existsSync(path.join(dir, 'bundle.json'))) throw new Misuse(`${dir}: not an evidence bundle (it has no bundle.json)`);
  for (const name of FILES) if (!fs.existsSync(path.join(dir, name))) throw new Rejected(name, null, 'the file is missing');

  // bundle.json: the format, the log id, the signed tree head, the counts.
  const bundleText = allLines(dir, 'bundle.json').join('\n') + '\n';
  const bundle = jsonOf('bundle.json', null, bundleText);
  if (!sameKeys(bundle, ['format', 'log_id', 'tree_head', 'counts'])) throw new Rejected('bundle.json', null, 'not an object of format, log_id, tree_head, counts');
  if (bundle.format !== 'sniff/evidence-bundle/v1') throw new Rejected('bundle.json', null, `format ${JSON.stringify(bundle.format)}, not sniff/evidence-bundle/v1`);
  if (typeof bundle.log_id !== 'string' || !HEX64.test(bundle.log_id)) throw new Rejected('bundle.json', null, 'log_id is not 64 hex digits');
  const head = bundle.tree_head;
  const headProblem = malformedStatement(head, 'tree_head');
  if (headProblem) throw new Rejected('bundle.json', null, headProblem);
  const counts = bundle.counts;
  if (!sameKeys(counts, ['matches', 'events', 'checkpoints', 'tree_heads']) || !Object.values(counts).every(isUint)) throw new Rejected('bundle.json', null, 'counts must hold the integers matches, events, checkpoints, tree_heads');
  if (JSON.stringify(bundle, null, 2) + '\n' !== bundleText) throw new Rejected('bundle.json', null, 'not written as the format writes it');

  // The key: its log id is the bundle's, and the one the caller trusts if any.
  const pemText = fs.readFileSync(path.join(dir, 'public_key.pem'), 'latin1');
  const key = loadKey(pemText);
  if (key === null) throw new Rejected('public_key.pem', null, 'not an Ed25519 public key');
  if (key.pem !== pemText) throw new Rejected('public_key.pem', null, 'not written as the format writes it (SPKI PEM)');
  if (trusted && !trusted.raw.equals(key.raw)) throw new Rejected('public_key.pem', null, `the bundle's key is log ${key.logId}'s, not the trusted log ${trusted.logId}'s`);
  if (key.logId !== bundle.log_id) throw new Rejected('public_key.pem', null, `the key's log id is ${key.logId}, bundle.json names ${bundle.log_id}`);
  const headSig = badSignature(head, key);
  if (headSig) throw new Rejected('bundle.json', null, `the tree head: ${headSig}`);
  const root = Buffer.from(head.root_hash, 'hex');

  // tree_heads.jsonl: earlier heads, each signed and consistent with the bundle's.
  let previous = null;
  const earlier = allLines(dir, 'tree_heads.jsonl');
  earlier.forEach((text, i) => {
    const n = i + 1;
    const obj = jsonOf('tree_heads.jsonl', n, text);
    if (!sameKeys(obj, ['tree_head', 'consistency'])) throw new Rejected('tree_heads.jsonl', n, 'not an object of tree_head and consistency');
    const problem = malformedStatement(obj.tree_head, 'tree_head') || (isHexList(obj.consistency) ? null : 'consistency must be a list of hashes');
    if (problem) throw new Rejected('tree_heads.jsonl', n, problem);
    if (compact(obj) !== text) throw new Rejected('tree_heads.jsonl', n, 'not written as the format writes it');
    const th = obj.tree_head;
    const sig = badSignature(th, key);
    if (sig) throw new Rejected('tree_heads.jsonl', n, sig);
    if (previous && (th.tree_size < previous.tree_size || th.timestamp_ms < previous.timestamp_ms)) throw new Rejected('tree_heads.jsonl', n, 'out of order: tree heads go by size, and time never goes back');
    if (th.tree_size > head.tree_size || th.timestamp_ms > head.timestamp_ms) throw new Rejected('tree_heads.jsonl', n, 'not earlier than bundle.json\'s tree head (larger, or later)');
    const bad = consistencyFails(th.tree_size, head.tree_size, Buffer.from(th.root_hash, 'hex'), root, hexes(obj.consistency));
    if (bad) throw new Rejected('tree_heads.jsonl', n, bad);
    previous = th;
  });

  // matches.jsonl: one line a match, by match id, each leaf once.
  const matches = allLines(dir, 'matches.jsonl').map((text, i) => {
    const n = i + 1;
    const m = jsonOf('matches.jsonl', n, text);
    if (!sameKeys(m, ['match_id', 'leaf_index', 'seq', 'head', 'inclusion'])) throw new Rejected('matches.jsonl', n, 'not an object of match_id, leaf_index, seq, head, inclusion');
    if (typeof m.match_id !== 'string' || !MATCH_ID.test(m.match_id) || !isUint(m.leaf_index) || !isUint(m.seq) || typeof m.head !== 'string' || !HEX64.test(m.head) || !isHexList(m.inclusion)) {
      throw new Rejected('matches.jsonl', n, 'a field is malformed');
    }
    if (compact(m) !== text) throw new Rejected('matches.jsonl', n, 'not written as the format writes it');
    return { ...m, line: n };
  });
  const leaves = new Set();
  const position = new Map();
  matches.forEach((m, i) => {
    if (i > 0 && !(matches[i - 1].match_id < m.match_id)) throw new Rejected('matches.jsonl', m.line, 'out of order: matches go by match id, once each');
    if (m.leaf_index >= head.tree_size) throw new Rejected('matches.jsonl', m.line, `leaf ${m.leaf_index} is not in a tree of ${head.tree_size}`);
    if (leaves.has(m.leaf_index)) throw new Rejected('matches.jsonl', m.line, `leaf ${m.leaf_index} is claimed twice`);
    leaves.add(m.leaf_index);
    position.set(m.match_id, i);
  });

  // checkpoints.jsonl: in the matches' order, then by seq.
  const byMatch = matches.map(() => []);
  let last = null;
  const checkpointLines = allLines(dir, 'checkpoints.jsonl');
  checkpointLines.forEach((text, i) => {
    const n = i + 1;
    const c = jsonOf('checkpoints.jsonl', n, text);
    const problem = malformedStatement(c, 'checkpoint');
    if (problem) throw new Rejected('checkpoints.jsonl', n, problem);
    if (compact(c) !== text) throw new Rejected('checkpoints.jsonl', n, 'not written as the format writes it');
    const at = position.get(c.match_id);
    if (at === undefined) throw new Rejected('checkpoints.jsonl', n, `match ${c.match_id} is not in the bundle`);
    if (last && (at < last.at || (at === last.at && c.seq <= last.seq))) throw new Rejected('checkpoints.jsonl', n, 'out of order: by the matches\' order, then by seq, once each');
    last = { at, seq: c.seq };
    byMatch[at].push({ c, n });
  });

  const found = { matches: matches.length, events: matches.reduce((s, m) => s + m.seq + 1, 0), checkpoints: checkpointLines.length, tree_heads: earlier.length };
  if (JSON.stringify(found) !== JSON.stringify(counts)) throw new Rejected('bundle.json', null, `its counts ${JSON.stringify(counts)} are not the files' ${JSON.stringify(found)}`);

  // events.jsonl and records.jsonl, match by match, in chunks checked by worker threads.
  const context = { pem: key.pem, treeSize: head.tree_size, root: head.root_hash };
  const events = new Lines(path.join(dir, 'events.jsonl'), 'events.jsonl');
  const records = new Lines(path.join(dir, 'records.jsonl'), 'records.jsonl');
  const pool = new Pool(workers, context);
  try {
    let job = [];
    for (let i = 0; i < matches.length; i++) {
      const m = matches[i];
      const first = events.number + 1;
      const lines = [];
      for (let seq = 0; seq <= m.seq; seq++) {
        const text = events.next();
        if (text === null) throw new Rejected('events.jsonl', first + seq, `the file ends before match ${m.match_id}'s lines`);
        lines.push(text);
      }
      const record = records.next();
      if (record === null) throw new Rejected('records.jsonl', i + 1, `the file ends before match ${m.match_id}'s record`);
      job.push({ m, first, lines, record, recordLine: i + 1, checkpoints: byMatch[i] });
      if (job.length >= MATCHES_PER_JOB) {
        await pool.submit(job);
        job = [];
      }
    }
    if (job.length) await pool.submit(job);
    await pool.drain();
    if (events.next() !== null) throw new Rejected('events.jsonl', events.number, 'more lines than matches.jsonl accounts for');
    if (records.next() !== null) throw new Rejected('records.jsonl', records.number, 'more lines than matches.jsonl accounts for');
  } finally {
    events.close();
    records.close();
    await pool.close();
  }
  return { head, counts, logId: key.logId };
}

const MATCHES_PER_JOB = 50;

// Every check of a job's matches (in a worker thread, or here with one worker): null, or
// where the first failure is and what it is.
function checkJob(job, context) {
  try {
    for (const item of job) checkOne(item, context);
    return null;
  } catch (e) {
    if (e instanceof Rejected) return { file: e.file, line: e.line, reason: e.reason };
    throw e;
  }
}

const contexts = new Map();
function checkOne({ m, first, lines, record, recordLine, checkpoints }, ctx) {
  let context = contexts.get(ctx.pem);
  if (context === undefined) {
    context = { key: loadKey(ctx.pem), treeSize: ctx.treeSize, root: Buffer.from(ctx.root, 'hex') };
    contexts.set(ctx.pem, context);
  }
  const { key, treeSize, root } = context;
  const list = lines.map((text, seq) => {
    let e;
    try {
      e = parseEvent(text);
    } catch (err) {
      throw new Rejected('events.jsonl', first + seq, err.message);
    }
    if (e.matchId !== m.match_id) throw new Rejected('events.jsonl', first + seq, `an event of match ${e.matchId} where match ${m.match_id}'s event ${seq} belongs`);
    if (e.seq !== seq) throw new Rejected('events.jsonl', first + seq, `match ${m.match_id}: event ${e.seq} where event ${seq} belongs`);
    return e;
  });
  const finalHead = checkMatch(m, list, (seq) => first + seq);
  if (finalHead !== m.head) throw new Rejected('matches.jsonl', m.line, `head is not the hash of match ${m.match_id}'s last event`);
  const bad = inclusionFails(leafHash(leafData(m.match_id, m.seq, m.head)), m.leaf_index, treeSize, hexes(m.inclusion), root);
  if (bad) throw new Rejected('matches.jsonl', m.line, bad);
  for (const { c, n } of checkpoints) {
    const sig = badSignature(c, key);
    if (sig) throw new Rejected('checkpoints.jsonl', n, sig);
    if (c.seq > m.seq) throw new Rejected('checkpoints.jsonl', n, `match ${c.match_id} has no event ${c.seq}`);
    if (!CHECKPOINTED.has(list[c.seq].kind)) throw new Rejected('checkpoints.jsonl', n, `event ${c.seq} is ${list[c.seq].kind}, not a round or match end`);
    if (list[c.seq].hash !== c.head) throw new Rejected('checkpoints.jsonl', n, `its head is not the hash of match ${c.match_id}'s event ${c.seq}`);
  }
  if (record !== compact(recordOf(m.match_id, list))) throw new Rejected('records.jsonl', recordLine, `not the record match ${m.match_id}'s events make (docs/records.md)`);
}

// Jobs checked by `size` worker threads (or in this thread when size is 1), their results
// taken in the order submitted, so the first failure reported is the first in the files.
class Pool {
  constructor(size, context) {
    this.context = context;
    this.workers = [];
    this.pending = [];
    this.next = 0;
    if (size > 1) {
      const { Worker } = require('node:worker_threads');
      for (let i = 0; i < size; i++) {
        const worker = new Worker(__filename, { workerData: context });
        worker.waiting = [];
        worker.on('message', (result) => worker.waiting.shift().resolve(result));
        worker.on('error', (error) => {
          for (const w of worker.waiting.splice(0)) w.reject(error);
        });
        this.workers.push(worker);
      }
    }
  }

  // Queue a job; wait for the oldest result while too many are in flight.
  async submit(job) {
    if (this.workers.length === 0) {
      this.raise(checkJob(job, this.context));
      return;
    }
    const worker = this.workers[this.next++ % this.workers.length];
    this.pending.push(
      new Promise((resolve, reject) => {
        worker.waiting.push({ resolve, reject });
        worker.postMessage(job);
      }),
    );
    while (this.pending.length >= this.workers.length * 3) this.raise(await this.pending.shift());
  }

  async drain() {
    while (this.pending.length) this.raise(await this.pending.shift());
  }

  raise(result) {
    if (result !== null) throw new Rejected(result.file, result.line, result.reason);
  }

  async close() {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

// ---- one proof document (docs/evidence.md, "Proof documents") -------------------------

function verifyProof(file, key) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Misuse(`cannot read ${file}: ${e.code || e.message}`);
  }
  const name = path.basename(file);
  const doc = jsonOf(name, null, text);
  const signed = (th, what) => {
    const problem = malformedStatement(th, 'tree_head') || badSignature(th, key);
    if (problem) throw new Rejected(name, null, `${what}: ${problem}`);
  };
  if (doc !== null && doc.type === 'inclusion') {
    if (!sameKeys(doc, ['type', 'match_id', 'seq', 'head', 'leaf_index', 'tree_head', 'path'])) throw new Rejected(name, null, 'an inclusion proof has exactly type, match_id, seq, head, leaf_index, tree_head, path');
    if (typeof doc.match_id !== 'string' || !MATCH_ID.test(doc.match_id) || !isUint(doc.seq) || !isUint(doc.leaf_index) || typeof doc.head !== 'string' || !HEX64.test(doc.head) || !isHexList(doc.path)) {
      throw new Rejected(name, null, 'a field of the inclusion proof is malformed');
    }
    signed(doc.tree_head, 'tree_head');
    const bad = inclusionFails(leafHash(leafData(doc.match_id, doc.seq, doc.head)), doc.leaf_index, doc.tree_head.tree_size, hexes(doc.path), Buffer.from(doc.tree_head.root_hash, 'hex'));
    if (bad) throw new Rejected(name, null, bad);
    return `verified: match ${doc.match_id}'s end (event ${doc.seq}, head ${doc.head.slice(0, 16)}…) is leaf ${doc.leaf_index} of log ${key.logId}'s tree of ${doc.tree_head.tree_size} matches at ${new Date(doc.tree_head.timestamp_ms).toISOString()}`;
  }
  if (doc !== null && doc.type === 'consistency') {
    if (!sameKeys(doc, ['type', 'from', 'to', 'path'])) throw new Rejected(name, null, 'a consistency proof has exactly type, from, to, path');
    if (!isHexList(doc.path)) throw new Rejected(name, null, 'path must be a list of hashes');
    signed(doc.from, 'from');
    signed(doc.to, 'to');
    const bad = consistencyFails(doc.from.tree_size, doc.to.tree_size, Buffer.from(doc.from.root_hash, 'hex'), Buffer.from(doc.to.root_hash, 'hex'), hexes(doc.path));
    if (bad) throw new Rejected(name, null, bad);
    if (doc.to.timestamp_ms < doc.from.timestamp_ms) throw new Rejected(name, null, 'the later tree head is dated before the earlier one');
    return `verified: log ${key.logId}'s tree of ${doc.to.tree_size} matches extends its tree of ${doc.from.tree_size}`;
  }
  throw new Rejected(name, null, 'not a proof document (its type is neither "inclusion" nor "consistency")');
}

// ---- the test vectors -----------------------------------------------------------------

function checkVectors(file) {
  const v = JSON.parse(fs.readFileSync(file, 'utf8'));
  const failures = [];
  const key = loadKey(v.public_key_pem);
  if (key === null || key.raw.toString('hex') !== v.public_key_raw || key.logId !== v.log_id) failures.push('key and log id');
  if (badSignature(v.checkpoint, key)) failures.push('checkpoint signature');
  if (badSignature(v.tree_head, key)) failures.push('tree head signature');
  const tampered = { ...v.checkpoint, seq: v.checkpoint.seq + 1 };
  if (!badSignature(tampered, key)) failures.push('a changed checkpoint verified');
  const hashes = v.leaves.map((l) => leafHash(leafData(l.match_id, l.seq, l.head)));
  v.leaves.forEach((l, i) => {
    if (hashes[i].toString('hex') !== l.leaf_hash) failures.push(`leaf hash ${i}`);
  });
  // Roots from the recursive definition (§2.1.1), to check the proofs against.
  const mth = (list) => {
    if (list.length === 0) return EMPTY_ROOT;
    if (list.length === 1) return list[0];
    let k = 1;
    while (k * 2 < list.length) k *= 2;
    return nodeHash(mth(list.slice(0, k)), mth(list.slice(k)));
  };
  for (const [n, r] of Object.entries(v.roots)) if (mth(hashes.slice(0, Number(n))).toString('hex') !== r) failures.push(`root of ${n}`);
  for (const p of v.inclusion) {
    const root = Buffer.from(v.roots[String(p.tree_size)], 'hex');
    if (inclusionFails(hashes[p.leaf_index], p.leaf_index, p.tree_size, hexes(p.path), root)) failures.push(`inclusion ${p.leaf_index} in ${p.tree_size}`);
    if (p.path.length && !inclusionFails(hashes[p.leaf_index], p.leaf_index, p.tree_size, hexes(p.path.slice(0, -1)), root)) failures.push(`cut inclusion ${p.leaf_index} in ${p.tree_size}`);
  }
  for (const p of v.consistency) {
    const [a, b] = [Buffer.from(v.roots[String(p.from_size)], 'hex'), Buffer.from(v.roots[String(p.to_size)], 'hex')];
    if (consistencyFails(p.from_size, p.to_size, a, b, hexes(p.path))) failures.push(`consistency ${p.from_size} to ${p.to_size}`);
    if (p.path.length && !consistencyFails(p.from_size, p.to_size, a, b, hexes(p.path.slice(1)))) failures.push(`cut consistency ${p.from_size} to ${p.to_size}`);
  }
  return { ok: failures.length === 0, inclusion: v.inclusion.length, consistency: v.consistency.length, failures };
}

// ---- the command --------------------------------------------------------------------

const NOT_REPLAYED = 'not checked here: the rules replay (legal moves, points, round and match ends): `sniff verify` does it';

async function main(argv) {
  const args = [...argv];
  const option = (name) => {
    const at = args.indexOf(name);
    if (at === -1) return null;
    const value = args[at + 1];
    if (value === undefined || value.startsWith('--')) throw new Misuse(`${name} needs a value`);
    args.splice(at, 2);
    return value;
  };
  const vectors = option('--vectors');
  if (vectors !== null) {
    const result = checkVectors(vectors);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return result.ok ? 0 : 1;
  }
  const workersText = option('--workers');
  const workers = workersText === null ? defaultWorkers() : Number(workersText);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new Misuse('--workers takes 1 to 64');
  const keyFile = option('--public-key');
  const proof = option('--proof');
  const trusted = keyFile === null ? null : readKeyFile(keyFile);
  if (proof !== null) {
    if (trusted === null) throw new Misuse('--proof needs --public-key KEY.pub');
    if (args.length) throw new Misuse(`unexpected ${args[0]}`);
    process.stdout.write(`${verifyProof(proof, trusted)}\n`);
    return 0;
  }
  if (args.length !== 1 || args[0].startsWith('--')) throw new Misuse('usage: node verify.js DIR [--public-key KEY.pub] [--workers N] | --proof FILE --public-key KEY.pub | --vectors FILE');
  const { head, counts, logId } = await verifyBundle(args[0], trusted, workers);
  const when = new Date(head.timestamp_ms).toISOString();
  process.stdout.write(
    `verified: ${counts.matches} matches (${counts.events} events) of log ${logId}\n` +
      `  against its signed tree head of ${head.tree_size} matches at ${when}, ${counts.checkpoints} checkpoints and ${counts.tree_heads} earlier tree heads\n` +
      'proven: these events, in this order, were committed to by this key no later than that time; every chain, seed commitment and seeded deal; the records are the events\'\n' +
      `${NOT_REPLAYED}\n` +
      'not proven: that the key is the log you mean (compare the log id); that the players were who the events say; that no match was left out of the bundle; hidden information beyond the seed commitment\n',
  );
  return 0;
}

module.exports = { verifyBundle, verifyProof, checkVectors, inclusionFails, consistencyFails, loadKey };

const defaultWorkers = () => (os.availableParallelism ? os.availableParallelism() : os.cpus().length);

if (!isMainThread) {
  // A worker thread: check each job it is handed.
  parentPort.on('message', (job) => parentPort.postMessage(checkJob(job, workerData)));
} else if (require.main === module) {
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (e) => {
      if (e instanceof Rejected || e instanceof Misuse) {
        process.stderr.write(`Error: ${e.message}\n`);
        process.exitCode = e instanceof Rejected ? 1 : 2;
      } else {
        process.stderr.write(`${e.stack}\n`);
        process.exitCode = 70;
      }
    },
  );
}
