#!/usr/bin/env node
// A sample client of the American Sniff service: creates one match and plays
// it to the end, every seat choosing a random legal move.
//
//   node play.js [ADDRESS] [SEATS] [SEED] [--tls-ca FILE] [--house-key-file FILE]
//
// ADDRESS defaults to 127.0.0.1:50051, SEATS to 2, SEED to 7. With --tls-ca
// it connects over TLS, trusting that CA certificate (for a service started
// with --tls-cert/--tls-key); --house-key-file sends the house key (for a
// service started with --house-key-file). Prints one JSON line with the
// result. A real player would hold only its own seat's token; this sample
// holds them all to play every seat.
'use strict';

const { connect, errorInfo, statusName, parseOptions } = require('./sniff');

async function playMatch(client, seats, seed) {
  let random = seed >>> 0; // a small deterministic generator, so a seed gives the same game
  const pick = (n) => {
    random = (Math.imul(random, 1103515245) + 12345) >>> 0;
    return random % n;
  };

  const created = await client.unary('CreateMatch', { seat_count: seats, seed });
  const { match_id, seat_tokens: tokens, observer_token: observer } = created;
  let moveCount = 0;
  let rounds = 1;
  for (;;) {
    const { state } = await client.unary('GetState', { match_id, token: observer });
    if (state.phase === 'MATCH_PHASE_AWAITING_DEAL') {
      await client.unary('DealRound', { match_id, token: observer });
      rounds += 1;
      continue;
    }
    const seat = state.turn;
    const token = tokens[seat];
    const { moves } = await client.unary('ListLegalMoves', { match_id, token, seat });
    const move = moves[pick(moves.length)];
    const reply = await client.unary('ApplyMove', {
      match_id,
      token,
      seat,
      notation: move.notation,
      expected_move_count: moveCount, // makes a retried call safe: applied at most once
    });
    moveCount = reply.move_count;
    if (reply.match_end) {
      const { winner, scores } = reply.match_end;
      return { match_id, seats, moves: moveCount, rounds, winner, scores: scores.map(Number) };
    }
  }
}

async function main() {
  const { options, rest } = parseOptions(process.argv.slice(2));
  const address = rest[0] || '127.0.0.1:50051';
  const seats = Number.parseInt(rest[1] || '2', 10);
  const seed = Number.parseInt(rest[2] || '7', 10);
  const client = connect(address, options);
  try {
    const result = await playMatch(client, seats, seed);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    if (err.code === undefined) throw err;
    const info = errorInfo(err); // the service's machine-readable reason, when it gives one
    const reason = info ? ` [${info.reason}]` : '';
    process.stderr.write(`play.js: ${statusName(err.code)}: ${err.details}${reason}\n`);
    return 1;
  } finally {
    client.close();
  }
}

main().then((code) => {
  process.exitCode = code;
});
