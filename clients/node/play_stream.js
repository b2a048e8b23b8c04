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
//   node play_stream.js [ADDRESS] --arena NAME --arena-key-file FILE
//                       [--arena-matches N] [--tls-ca FILE]
//
// ADDRESS defaults to 127.0.0.1:50051, SEATS to 2, SEED to 7 (match i gets
// seed SEED+i), MATCHES to 1. Prints one JSON line per match with its result,
// as seen on the stream. A real player would open the stream with its own
// seat's token only; this sample holds them all to play every seat.
//
// With --arena it is an arena bot instead (docs/service.md, "The arena"): its
// first message registers NAME (the arena key as call metadata) rather than
// opening seats, and it plays every seat the arena hands it, each seeded by
// the `bot_seed` its `opened` update carries, until N matches are over
// (--arena-matches; without it, until the service ends the stream). The rest
// of the loop is the same.
'use strict';

const { connect, statusName, parseOptions, grpc, ARENA_KEY_HEADER } = require('./sniff');

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
        if (!handle(update, seen.get(update.match_id), pickers, answers)) {
          call.cancel();
          reject(new Error(`refused: ${JSON.stringify(update)}`));
          return;
        }
      }
      send(call, answers);
    });
    call.on('error', reject);
    call.on('end', () => resolve({ matches: [...seen.values()], messages }));
    call.write({ open: { seats } });
  });
}

// One update of a seat: an event noted in `match`, or a decision answered into
// `answers` by the match's picker. False for a refused answer (a bug).
function handle(update, match, pickers, answers) {
  if (update.kind === 'event') {
    const event = update.event;
    if (Number(event.sequence) < match.next) return true; // the other seat's copy
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
    return false;
  }
  return true;
}

// The answers to one message's decisions go back as one message.
function send(call, answers) {
  if (answers.length === 1) call.write({ answer: answers[0] });
  else if (answers.length > 1) call.write({ answers: { answers } });
}

// As an arena bot: register `name` and play every seat the arena hands this
// stream until `wanted` matches are over (then close our side: the server
// ends the stream once every answer is answered).
function arenaStream(client, name, arenaKey, wanted) {
  const seen = new Map();
  const pickers = new Map();
  const metadata = new grpc.Metadata();
  metadata.set(ARENA_KEY_HEADER, arenaKey);
  return new Promise((resolve, reject) => {
    const call = client.stub.Play(metadata, { deadline: new Date(Date.now() + STREAM_DEADLINE_MILLIS) });
    let messages = 0;
    let over = 0;
    let closed = false;
    call.on('data', (response) => {
      messages += 1;
      const answers = [];
      for (const update of response.updates) {
        if (update.kind === 'registered') continue; // its resume_secret gets the name back after a drop
        if (update.kind === 'opened') {
          if (!seen.has(update.match_id)) {
            seen.set(update.match_id, { match_id: update.match_id, moves: 0, rounds: 0, next: 0, end: null, decisions: 0 });
            pickers.set(update.match_id, generator(Number(update.opened.bot_seed || 0)));
          }
          continue;
        }
        const match = seen.get(update.match_id);
        const ended = match.end !== null;
        if (!handle(update, match, pickers, answers)) {
          call.cancel();
          reject(new Error(`refused: ${JSON.stringify(update)}`));
          return;
        }
        if (!ended && match.end !== null) over += 1;
      }
      send(call, answers);
      if (wanted && over >= wanted && !closed) {
        closed = true;
        call.end();
      }
    });
    call.on('error', reject);
    call.on('end', () => resolve({ matches: [...seen.values()], messages }));
    call.write({ register: { name } });
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
    if (options.arena) {
      const { matches, messages } = await arenaStream(client, options.arena, options.arenaKey, options.arenaMatches);
      for (const m of matches) {
        const winner = m.end && m.end._winner === 'winner' ? m.end.winner : null;
        const scores = m.end ? m.end.scores.map(Number) : null;
        const result = { match_id: m.match_id, moves: m.moves, rounds: m.rounds, decisions: m.decisions, winner, scores, messages };
        process.stdout.write(`${JSON.stringify(result)}\n`);
      }
      return 0;
    }
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
