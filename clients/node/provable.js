#!/usr/bin/env node
// Provable deals and the hash chain, in JavaScript: proof that another
// language recomputes what the service commits to (docs/dealing.md, with
// its seat entropy and tournament commitments, and docs/chain.md). Written
// from those two pages alone.
//
//   node provable.js vectors            check the test vectors of both pages
//   node provable.js chain EVENTS.json  recompute a finished match's chain from
//                                       its logged events (a JSON array of
//                                       events_all rows, `detail` as JSON text,
//                                       `hash` as hex) with the secret its end
//                                       reveals; print {"ok", "head", "events"}
//
// Exit status 0 when everything matches, 1 otherwise.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const DOCS = path.join(__dirname, '..', '..', 'docs');

// ---- the generator (docs/dealing.md) ----------------------------------------

const SET_SIZE = 28;
const TILE_NAMES = (() => {
  const names = [];
  for (let a = 0; a <= 6; a++) for (let b = a; b <= 6; b++) names.push(`${a}-${b}`);
  return names;
})();
const HAND_SIZE = { 2: 7, 3: 6, 4: 5 };

function u32be(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function u64be(n) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

// The stream's 32-bit words for (seed, round, purpose), block by block.
function* words(seed, round, purpose) {
  const prefix = Buffer.concat([
    Buffer.from('sniff/rng/v1\0', 'ascii'),
    Buffer.from(`${purpose}\0`, 'ascii'),
    u64be(seed),
    u32be(round),
  ]);
  for (let counter = 0; ; counter++) {
    const block = crypto.createHash('sha256').update(prefix).update(u32be(counter)).digest();
    for (let i = 0; i < 32; i += 4) yield block.readUInt32BE(i);
  }
}

// A uniform integer below n, by rejection sampling.
function uniform(stream, n) {
  const limit = 2 ** 32 - (2 ** 32 % n);
  for (;;) {
    const x = stream.next().value;
    if (x < limit) return x % n;
  }
}

// The 28 tile numbers in the order the round deals them.
function shuffledTiles(seed, round) {
  const tiles = Array.from({ length: SET_SIZE }, (_, i) => i);
  const stream = words(seed, round, 'deal');
  for (let i = SET_SIZE - 1; i >= 1; i--) {
    const j = uniform(stream, i + 1);
    [tiles[i], tiles[j]] = [tiles[j], tiles[i]];
  }
  return tiles;
}

function lot(seed, round, seats) {
  return uniform(words(seed, round, 'lot'), seats);
}

// The hands and the boneyard (as `a-b` names) that a seed deals a round.
function seededDeal(seed, round, seats) {
  const tiles = shuffledTiles(seed, round).map((t) => TILE_NAMES[t]);
  const size = HAND_SIZE[seats];
  const hands = [];
  for (let s = 0; s < seats; s++) hands.push(tiles.slice(s * size, (s + 1) * size));
  return { hands, boneyard: tiles.slice(seats * size) };
}

// ---- the canonical encoding (docs/chain.md) ----------------------------------

// JSON parsed with integers kept exact (a seed may pass 2^53): each integer is
// {int: 'digits'}. Floats are refused, as the encoding has none.
function parseJson(text) {
  let i = 0;
  const fail = (what) => {
    throw new Error(`JSON: ${what} at ${i}`);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      const out = new Map();
      space();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        space();
        const key = string();
        space();
        if (text[i++] !== ':') fail('expected :');
        out.set(key, value());
        space();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return out;
        } else fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const out = [];
      space();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        space();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return out;
        } else fail('expected , or ]');
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?(0|[1-9][0-9]*)([.eE])?/.exec(text.slice(i, i + 400));
    if (!m) fail('unexpected character');
    if (m[2]) fail('a floating-point number');
    i += m[0].length;
    return { int: BigInt(m[0]).toString() };
  };
  const string = () => {
    if (text[i] !== '"') fail('expected a string');
    // JSON string syntax is JavaScript's: let JSON.parse read exactly this one.
    let j = i + 1;
    while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const s = JSON.parse(text.slice(i, j + 1));
    i = j + 1;
    return s;
  };
  const out = value();
  space();
  if (i !== text.length) fail('trailing text');
  return out;
}

// JSON.stringify of a string escapes exactly what the page asks (", \, and
// U+0000..U+001F as \b \t \n \f \r or \u00xx), and nothing else.
function canonical(value) {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error(`no canonical form for ${value}`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value instanceof Map) {
    // Sorted by code point: compare as arrays of code points, not UTF-16 units.
    const keys = [...value.keys()].sort((a, b) => {
      const x = [...a].map((ch) => ch.codePointAt(0));
      const y = [...b].map((ch) => ch.codePointAt(0));
      for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k] - y[k];
      return x.length - y.length;
    });
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value.get(k))}`).join(',')}}`;
  }
  if (typeof value === 'object' && 'int' in value) return value.int;
  throw new Error(`no canonical form for ${value}`);
}

const CONTENT_KEYS = ['action_index', 'detail', 'drawn', 'ends_sum', 'kind', 'match_id', 'move', 'points', 'round', 'seat', 'seq'];

// The canonical encoding of a logged event: `detail` is its JSON text (or null).
function eventContent(row) {
  const content = new Map();
  for (const key of CONTENT_KEYS) {
    const v = row[key];
    if (key === 'detail') content.set(key, v === null || v === undefined ? null : parseJson(v));
    else content.set(key, v === undefined ? null : v);
  }
  return Buffer.from(canonical(content), 'utf8');
}

const GENESIS = Buffer.alloc(32);

function link(previous, secret, content) {
  const h = crypto.createHash('sha256');
  if (secret === null) h.update('sniff/chain/legacy/v1\0', 'ascii').update(previous);
  else h.update('sniff/chain/v1\0', 'ascii').update(previous).update(secret);
  return h.update(content).digest();
}

function commitment(seed, salt) {
  return crypto.createHash('sha256').update('sniff/commit/v1\0', 'ascii').update(u64be(seed)).update(salt).digest();
}

// docs/dealing.md, seat entropy: the match seed from the house seed and each seat's 32 bytes.
function seatEntropySeed(houseSeed, entropies) {
  const h = crypto.createHash('sha256').update('sniff/seat-entropy/v1\0', 'ascii');
  h.update(u64be(houseSeed)).update(Buffer.from([entropies.length]));
  for (const e of entropies) h.update(e);
  return h.digest().readBigUInt64BE(0);
}

// docs/dealing.md, a tournament's commitment to its deal seeds.
function tournamentCommitment(salt, seeds) {
  const h = crypto.createHash('sha256').update('sniff/tournament-seeds/v1\0', 'ascii');
  h.update(salt).update(u32be(seeds.length));
  for (const seed of seeds) h.update(u64be(seed));
  return h.digest();
}

// The inputs of the seat entropy and tournament vectors, as the tables describe them.
const BYTES = (f) => Buffer.from(Array.from({ length: 32 }, (_, i) => f(i)));
const ENTROPY_INPUTS = [
  [0n, [BYTES(() => 0), BYTES(() => 0)]],
  [7n, [BYTES((i) => i), BYTES((i) => 32 + i), BYTES(() => 0xff)]],
  [2n ** 64n - 1n, [0, 1, 2, 3].map((b) => BYTES(() => b))],
];
const TOURNAMENT_SALTS = [BYTES(() => 0), BYTES((i) => i), BYTES(() => 0xff)];

// ---- the commands ------------------------------------------------------------

function checkVectors() {
  const failures = [];
  // docs/dealing.md: the table of dealt orders and lots, and the first block.
  const dealing = fs.readFileSync(path.join(DOCS, 'dealing.md'), 'utf8');
  const rows = [...dealing.matchAll(/^\| (\d+) \| (\d+) \| `([0-9\- ]+)` \| (\d+), (\d+), (\d+) \|$/gm)];
  if (rows.length < 4) failures.push(`dealing.md: found ${rows.length} vector rows`);
  for (const [, seed, round, order, l2, l3, l4] of rows) {
    const got = shuffledTiles(BigInt(seed), Number(round)).map((t) => TILE_NAMES[t]).join(' ');
    if (got !== order) failures.push(`deal of seed ${seed} round ${round}: ${got}`);
    const lots = [2, 3, 4].map((n) => lot(BigInt(seed), Number(round), n));
    if (lots.join(',') !== [l2, l3, l4].join(',')) failures.push(`lots of seed ${seed} round ${round}: ${lots}`);
  }
  const block = /first block of the `deal` stream of seed 0, round 0 is\s+`([0-9a-f]{64})`/.exec(dealing);
  const prefix = Buffer.concat([Buffer.from('sniff/rng/v1\0deal\0', 'ascii'), u64be(0), u32be(0), u32be(0)]);
  if (!block || crypto.createHash('sha256').update(prefix).digest('hex') !== block[1]) failures.push('first block');
  // docs/chain.md: canonical encodings, both chains, commitments.
  const chainDoc = fs.readFileSync(path.join(DOCS, 'chain.md'), 'utf8');
  const vectors = JSON.parse(/```json\n([\s\S]*?)```/.exec(chainDoc)[1]);
  const secret = Buffer.from(vectors.secret, 'hex');
  let keyed = GENESIS;
  let legacy = GENESIS;
  vectors.events.forEach((row, i) => {
    const content = eventContent(row);
    if (content.toString('utf8') !== vectors.canonical[i]) failures.push(`canonical ${i}: ${content}`);
    keyed = link(keyed, secret, content);
    legacy = link(legacy, null, content);
    if (keyed.toString('hex') !== vectors.hashes[i]) failures.push(`hash ${i}`);
    if (legacy.toString('hex') !== vectors.legacy_hashes[i]) failures.push(`legacy hash ${i}`);
  });
  for (const c of vectors.commitments) {
    if (commitment(BigInt(c.seed), Buffer.from(c.salt, 'hex')).toString('hex') !== c.commitment) {
      failures.push(`commitment of seed ${c.seed}`);
    }
  }
  // docs/dealing.md: seat entropy and the tournament commitment.
  const seeds = [...dealing.matchAll(/^\| (\d+) \| [^|]+ \| (\d+) \|$/gm)];
  if (seeds.length !== ENTROPY_INPUTS.length) failures.push(`dealing.md: found ${seeds.length} seat entropy rows`);
  seeds.forEach(([, house, expected], i) => {
    const [inputHouse, entropies] = ENTROPY_INPUTS[i] || [];
    if (inputHouse !== BigInt(house) || seatEntropySeed(inputHouse, entropies) !== BigInt(expected)) {
      failures.push(`seat entropy of house seed ${house}`);
    }
  });
  const tournaments = [...dealing.matchAll(/^\| `[^`]+` \| ([\d, ]+) \| `([0-9a-f]{64})` \|$/gm)];
  if (tournaments.length !== TOURNAMENT_SALTS.length) failures.push(`dealing.md: found ${tournaments.length} tournament rows`);
  tournaments.forEach(([, list, expected], i) => {
    const dealSeeds = list.split(', ').map((x) => BigInt(x));
    if (tournamentCommitment(TOURNAMENT_SALTS[i], dealSeeds).toString('hex') !== expected) {
      failures.push(`tournament commitment ${i}`);
    }
  });
  return {
    ok: failures.length === 0,
    deals: rows.length,
    events: vectors.events.length,
    seat_entropy: seeds.length,
    tournaments: tournaments.length,
    failures,
  };
}

function checkChain(file) {
  const rows = JSON.parse(fs.readFileSync(file, 'utf8'));
  const end = parseJson(rows[rows.length - 1].detail);
  const secretHex = end.get('chain_secret');
  const secret = secretHex ? Buffer.from(secretHex, 'hex') : null;
  let head = GENESIS;
  const failures = [];
  rows.forEach((row, i) => {
    head = link(head, secret, eventContent(row));
    if (row.hash && head.toString('hex') !== row.hash) failures.push(`event ${i}: hash ${row.hash}, recomputed ${head.toString('hex')}`);
  });
  return { ok: failures.length === 0, head: head.toString('hex'), events: rows.length, failures };
}

module.exports = {
  shuffledTiles, lot, seededDeal, commitment, seatEntropySeed, tournamentCommitment,
  eventContent, link, parseJson, canonical, GENESIS, TILE_NAMES,
};

if (require.main === module) {
  const [command, arg] = process.argv.slice(2);
  let result;
  if (command === 'vectors') result = checkVectors();
  else if (command === 'chain' && arg) result = checkChain(arg);
  else {
    process.stderr.write('usage: node provable.js vectors | chain EVENTS.json\n');
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exitCode = result.ok ? 0 : 1;
}
