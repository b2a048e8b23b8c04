#!/usr/bin/env node
// A sample client of the American Sniff service: creates one match and plays
// it to the end, every seat choosing a random legal move.
//
//   node play.js [ADDRESS] [SEATS] [SEED] [--variant NAME] [--round-limit N]
//                [--tls-ca FILE] [--house-key-file FILE]
//
// ADDRESS defaults to 127.0.0.1:50051, SEATS to 2, SEED to 7. --variant picks
// the Sniff variant (american, stubby, berndt, british; default american),
// --round-limit ends the match after that many rounds. With --tls-ca
// it connects over TLS, trusting that CA certificate (for a service started
// with --tls-cert/--tls-key); --house-key-file sends the house key (for a
// service started with --house-key-file). Prints one JSON line with the
// result. A real player would hold only its own seat's token; this sample
// holds them all to play every seat.
'use strict';

const { connect, errorInfo, statusName, parseOptions } = require('./sniff');

async function playMatch(client, seats, seed, variant, roundLimit) {
  let random = seed >>> 0; // a small deterministic generator, so a seed gives the same game
  const pick = (n) => {
    random = (Math.imul(random, 1103515245) + 12345) >>> 0;
    return random % n;
  };

  const request = { seat_count: seats, seed };
  if (variant) request.variant = `VARIANT_${variant.toUpperCase()}`;
  if (roundLimit) request.round_limit = roundLimit;
  const created = await client.unary('CreateMatch', request);
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
    // In berndt and british a move that makes the Sniff comes twice, `/cross`
    // then `/inline`: picking among all moves picks the orientation too.
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
      // A match ended at its round limit with the top score shared has no winner.
      const { scores, round_limit_reached: atLimit } = reply.match_end;
      // (proto3 `optional`: the loader names a set field in the synthetic oneof `_winner`.)
      const winner = reply.match_end._winner === 'winner' ? reply.match_end.winner : null;
      return {
        match_id, seats, variant: created.variant, moves: moveCount, rounds, winner,
        scores: scores.map(Number), round_limit_reached: Boolean(atLimit),
      };
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
    const result = await playMatch(client, seats, seed, options.variant, options.roundLimit);
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
