#!/usr/bin/env node
// A sample of the engine as a service: ranks the legal moves of a position
// as one seat sees it (the AnalyzePosition RPC). No match exists on the
// server; a bot in any language sends what its seat knows and gets back each
// legal move's equity (expected round net result for its side, in points)
// with its standard error, the best first.
//
//   node analyze.js [ADDRESS] [POSITION.json] [--rollouts N] [--deadline-ms MS]
//                   [--seed S] [--policy greedy|random] [--tls-ca FILE]
//
// ADDRESS defaults to 127.0.0.1:50051. POSITION.json holds the seat's picture
// of the round (see EXAMPLE below for its fields; tiles and moves in the
// project's notation); without it the built-in example is analysed. Prints one
// JSON line: {"moves": [{"move", "equity", "standard_error", "loss",
// "loss_standard_error"}, ...], "rollouts", "seed", "policy"}. A refusal is
// printed on stderr with its status and reason, and the exit status is 1.
'use strict';

const fs = require('node:fs');
const { connect, errorInfo, statusName, parseOptions } = require('./sniff');

// Seat 0's view of a 2-seat American round, at its turn: it led 2-3 and drew
// three tiles (it kept 5-5 and placed 3-6 and 2-6 as it drew them); seat 1
// drew once and placed what it drew (3-5), and holds two tiles. `actions` is
// the whole public history, in which a draw is `draw` whoever drew; only the
// seat's own draws are named, in `own_draws`.
const EXAMPLE = {
  variant: 'american',
  seat_count: 2,
  scores: [40, 25],
  viewer_seat: 0,
  leader: 0,
  hand: ['0-1', '0-2', '2-2', '2-5'],
  actions: [
    '2-3', '1-2@2-3:low', '3-4@2-3:high', '1-6@1-2:low', 'draw', 'draw', '3-6@1-6:high',
    '4-4@3-4:high', '0-3@3-6:low', '0-6@0-3:low', 'draw', '2-6@0-6:high', '4-5@4-4:line_b',
    '5-5@4-5:high', 'draw', '3-5@5-5:line_b',
  ],
  own_draws: ['5-5', '3-6', '2-6'],
  hand_sizes: [4, 2],
};

function tile(text) {
  const m = /^\s*\[?([0-6])\s*[-|]\s*([0-6])\]?\s*$/.exec(text);
  if (!m) throw new Error(`${JSON.stringify(text)} is not a tile (write it like 1-4)`);
  const [a, b] = [Number(m[1]), Number(m[2])];
  return { low: Math.min(a, b), high: Math.max(a, b) };
}

// The AnalyzePosition request for a position in the JSON form above.
function positionRequest(position, { rollouts, deadlineMs, seed, policy }) {
  const request = {
    variant: `VARIANT_${String(position.variant || 'american').toUpperCase()}`,
    seat_count: position.seat_count,
    scores: position.scores,
    viewer_seat: position.viewer_seat,
    leader: position.leader,
    hand_tiles: position.hand.map(tile),
    actions: position.actions,
    own_draws: (position.own_draws || []).map(tile),
    hand_sizes: position.hand_sizes,
    budget: {},
    policy: `PLAYOUT_POLICY_${String(policy || 'greedy').toUpperCase()}`,
  };
  if (position.target !== undefined) request.target = position.target;
  if (rollouts !== undefined) request.budget.rollouts = rollouts;
  if (deadlineMs !== undefined) request.budget.deadline_millis = deadlineMs;
  if (seed !== undefined) request.seed = seed;
  return request;
}

function readArgs(argv) {
  const { options, rest } = parseOptions(argv);
  const args = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--rollouts') options.rollouts = Number.parseInt(rest[++i], 10);
    else if (rest[i] === '--deadline-ms') options.deadlineMs = Number.parseInt(rest[++i], 10);
    else if (rest[i] === '--seed') options.seed = rest[++i];
    else if (rest[i] === '--policy') options.policy = rest[++i];
    else args.push(rest[i]);
  }
  return { options, args };
}

async function main() {
  const { options, args } = readArgs(process.argv.slice(2));
  const address = args[0] || '127.0.0.1:50051';
  const position = args[1] ? JSON.parse(fs.readFileSync(args[1], 'utf8')) : EXAMPLE;
  const client = connect(address, options);
  try {
    const reply = await client.unary('AnalyzePosition', positionRequest(position, options));
    const out = {
      moves: reply.moves.map((m) => ({
        move: m.move.notation,
        equity: m.equity,
        standard_error: m.standard_error,
        loss: m.loss,
        loss_standard_error: m.loss_standard_error,
      })),
      rollouts: reply.rollouts,
      seed: reply.seed,
      policy: reply.policy,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } catch (err) {
    if (err.code === undefined) throw err;
    const info = errorInfo(err); // e.g. reason ERROR_REASON_BAD_ARGUMENT, metadata.field "hand_tiles"
    const where = info && info.metadata && info.metadata.field ? ` (field ${info.metadata.field})` : '';
    process.stderr.write(
      `analyze.js: ${statusName(err.code)} ${info ? info.reason : ''}${where}: ${err.details}\n`,
    );
    return 1;
  } finally {
    client.close();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`analyze.js: ${err.stack || err}\n`);
      process.exit(1);
    },
  );
}

module.exports = { EXAMPLE, positionRequest };
