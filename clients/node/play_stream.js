#!/usr/bin/env node
// A sample bot of the American Sniff service over the Play stream: creates
// MATCHES matches and plays every seat of all of them on one bidirectional
// stream, each seat choosing a random legal move. The server sends each
// seat its decision when it is due (its view and legal moves, with the move
// count) and the bot answers with one message naming that move count; seat 0
// is also asked to deal each next round. Built from the proto alone.
//
//   node play_stream.js [ADDRESS] [SEATS] [SEED] [MATCHES] [--variant NAME]
//                       [--round-limit N] [--tls-ca FILE] [--house-key-file FILE]
//
// ADDRESS defaults to 127.0.0.1:50051, SEATS to 2, SEED to 7 (match i gets
// seed SEED+i), MATCHES to 1. Prints one JSON line per match with its result,
// as seen on the stream. A real player would open the stream with its own
// seat's token only; this sample holds them all to play every seat.
'use strict';

const { connect, statusName, parseOptions, grpc } = require('./sniff');

const STREAM_DEADLINE_MILLIS = 600_000;

function generator(seed) {
  let random = seed >>> 0; // a small deterministic generator, so a seed gives the same game
  return (n) => {
    random = (Math.imul(random, 1103515245) + 12345) >>> 0;
    return random % n;
  };
}

// Play every seat of `created` (CreateMatch replies) on one Play stream until
// the server ends it (every match over); resolves with what each match showed.
function playStream(client, created, seed) {
  const seen = new Map(); // match id -> what its events said
  const pickers = new Map(); // match id -> its generator
  const seats = [];
  created.forEach((match, i) => {
    pickers.set(match.match_id, generator(seed + i));
    seen.set(match.match_id, { match_id: match.match_id, moves: 0, rounds: 0, next: 0, end: null, decisions: 0 });
    match.seat_tokens.forEach((token) => seats.push({ match_id: match.match_id, token, resume_move_count: 0 }));
  });
  return new Promise((resolve, reject) => {
    const call = client.stub.Play(new grpc.Metadata(), { deadline: new Date(Date.now() + STREAM_DEADLINE_MILLIS) });
    let messages = 0;
    call.on('data', (response) => {
      messages += 1;
      const answers = [];
      for (const update of response.updates) {
        const match = seen.get(update.match_id);
        if (update.kind === 'event') {
          const event = update.event;
          if (Number(event.sequence) < match.next) continue; // the other seat's copy
          match.next = Number(event.sequence) + 1;
          if (event.kind === 'round_dealt') match.rounds += 1;
          if (event.kind === 'action_applied') match.moves = event.action_applied.move_count;
          if (event.kind === 'match_ended') match.end = event.match_ended.match_end;
        } else if (update.kind === 'decision') {
          const decision = update.decision;
          const answer = { match_id: update.match_id, seat: update.seat, move_count: decision.move_count };
          if (decision.kind === 'deal') {
            answer.deal = { round_index: decision.deal.round_index };
          } else {
            const { moves } = decision.move;
            answer.notation = moves[pickers.get(update.match_id)(moves.length)].notation;
          }
          match.decisions += 1;
          answers.push(answer);
        } else if (update.kind === 'error') {
          call.cancel();
          reject(new Error(`refused: ${JSON.stringify(update)}`));
          return;
        }
      }
      // The answers to one message's decisions go back as one message.
      if (answers.length === 1) call.write({ answer: answers[0] });
      else if (answers.length > 1) call.write({ answers: { answers } });
    });
    call.on('error', reject);
    call.on('end', () => resolve({ matches: [...seen.values()], messages }));
    call.write({ open: { seats } });
  });
}

async function main() {
  const { options, rest } = parseOptions(process.argv.slice(2));
  const address = rest[0] || '127.0.0.1:50051';
  const seatCount = Number.parseInt(rest[1] || '2', 10);
  const seed = Number.parseInt(rest[2] || '7', 10);
  const count = Number.parseInt(rest[3] || '1', 10);
  const client = connect(address, options);
  try {
    const created = [];
    for (let i = 0; i < count; i++) {
      const request = { seat_count: seatCount, seed: seed + i };
      if (options.variant) request.variant = `VARIANT_${options.variant.toUpperCase()}`;
      if (options.roundLimit) request.round_limit = options.roundLimit;
      created.push(await client.unary('CreateMatch', request));
    }
    const { matches, messages } = await playStream(client, created, seed);
    for (const m of matches) {
      if (!m.end) throw new Error(`the stream ended before match ${m.match_id} did`);
      const winner = m.end._winner === 'winner' ? m.end.winner : null;
      const result = {
        match_id: m.match_id, seats: seatCount, moves: m.moves, rounds: m.rounds, decisions: m.decisions,
        winner, scores: m.end.scores.map(Number), messages,
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    }
    return 0;
  } catch (err) {
    if (err.code === undefined) throw err;
    process.stderr.write(`play_stream.js: ${statusName(err.code)}: ${err.details}\n`);
    return 1;
  } finally {
    client.close();
  }
}

main().then((code) => {
  process.exitCode = code;
});
