#!/usr/bin/env node
// Conformance checks of the American Sniff service (sniff.v1.SniffService),
// as a client in another language sees it. Not a sample: see play.js for one.
//
// It creates one match and plays it to the end with the match's own seat
// tokens, checking every reply against the contract on the way (move counts,
// notation, points and ends sums, draws, scores and deductions, the match
// end), probes the error paths (illegal move, wrong turn, wrong token, stale
// move count, malformed move, unknown match) and the privacy of seat views
// and seat streams.
//
//   node conformance.js [ADDRESS] [SEATS] [SEED] [--tls-ca FILE] [--house-key-file FILE]
//
// ADDRESS defaults to 127.0.0.1:50051, SEATS to 2 and SEED to 7 (the seed of
// the match and of the client's move choice). It gives up after 5000 actions
// or 60 s (environment PLAY_MAX_SECONDS). On success it prints one JSON line
// {"ok":true,"match_id":...,"moves":N,"rounds":R,"winner":W,"scores":[...],
// "tally":{...}} and exits 0; on a failed check it prints the reason to
// stderr and exits 1. The summary also carries the chain's head the seats
// were given at the match's end ("chain_head", with the sequence number of its
// event, "chain_head_sequence"; "heads": one per round end and the match end)
// and how many seeded deals were recomputed from the revealed
// seed and found equal to those served ("deals_checked").
'use strict';

const { connect, errorInfo, statusName, parseOptions, grpc } = require('./sniff');
const provable = require('./provable');

const MAX_MOVES = 5000;
// The whole match must finish within this time (PLAY_MAX_SECONDS overrides it).
const MAX_MILLIS = 1000 * (Number(process.env.PLAY_MAX_SECONDS) || 60);
const DOMAIN = 'sniff.v1';

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(typeof message === 'function' ? message() : message);
}

function show(value) {
  return JSON.stringify(value);
}

function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => Number(x) === Number(b[i]));
}

// ---- calls -----------------------------------------------------------------

// A connected client plus `failure`: a call that must fail, as {code, reason, details}.
function client_(address, options) {
  const c = connect(address, options);
  c.failure = async (method, request) => {
    let reply;
    try {
      reply = await c.unary(method, request);
    } catch (err) {
      if (err.code === undefined) throw err;
      const info = errorInfo(err);
      if (info) check(info.domain === DOMAIN, `ErrorInfo domain is ${show(info.domain)}, expected ${show(DOMAIN)}`);
      return { code: err.code, reason: info ? info.reason : null, details: err.details };
    }
    throw new CheckFailed(`${method} ${show(request)} should have failed but returned ${show(reply)}`);
  };
  return c;
}

let refusals = 0;

function expectFailure(result, what, codes, reason) {
  refusals += 1;
  const names = codes.map((c) => grpcCodeName(c));
  check(
    codes.includes(result.code),
    () => `${what}: status ${grpcCodeName(result.code)} (${result.details}), expected ${names.join(' or ')}`,
  );
  if (reason !== undefined) {
    check(result.reason === reason, `${what}: ErrorInfo reason ${result.reason}, expected ${reason}`);
  }
}

const grpcCodeName = statusName;

// ---- rules helpers ---------------------------------------------------------

// A deterministic generator (mulberry32), so a seed gives the same game.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const tileText = (t) => `${t.low}-${t.high}`;

function roundToFive(pips) {
  const r = pips % 5;
  return r <= 2 ? pips - r : pips + 5 - r;
}

// The seats whose shared score a seat's points go to.
function side(seat, seats) {
  return seats === 4 ? [seat % 2, (seat % 2) + 2] : [seat];
}

function notationKind(notation) {
  if (notation === 'draw' || notation === 'pass') return notation;
  return notation.includes('@') ? 'place' : 'lead';
}

// ---- the match -------------------------------------------------------------

async function play(address, seats, seed, options) {
  const started = Date.now();
  const client = client_(address, options);
  const pick = rng(seed);
  try {
    const created = await client.unary('CreateMatch', { seat_count: seats, seed });
    const id = created.match_id;
    const tokens = created.seat_tokens;
    const observer = created.observer_token;
    check(created.name === `matches/${id}`, `CreateMatch name ${created.name} for id ${id}`);
    check(tokens.length === seats, `CreateMatch gave ${tokens.length} seat tokens for ${seats} seats`);
    check(new Set([...tokens, observer]).size === seats + 1, 'CreateMatch tokens are not all distinct');
    check(created.target === (seats === 2 ? 250 : 200), `default target ${created.target}`);
    check(created.turn === created.leader, 'CreateMatch turn is not the leader');
    check(created.leader_choice === 'LEADER_CHOICE_LOT', `first leader choice ${created.leader_choice}`);
    check(/^[0-9a-f]{64}$/.test(created.seed_commitment), `seed_commitment ${show(created.seed_commitment)}`);

    const game = {
      client, id, tokens, observer, seats, target: created.target,
      moves: 0, scores: new Array(seats).fill(0), probed: false, lastDraw: new Map(),
      round: 0, lastFinisher: null, heads: [], headSequences: [],
      tally: { lead: 0, place: 0, draw: 0, pass: 0, scoring: 0, retries: 0, domino: 0, blocked: 0, refusals: 0 },
    };

    let matchEnd = null;
    for (;;) {
      check(Date.now() - started < MAX_MILLIS, `no result after ${MAX_MILLIS} ms (${game.moves} moves)`);
      check(game.moves < MAX_MOVES, `no result after ${MAX_MOVES} moves`);
      const state = await observe(game);
      if (state.phase === 'MATCH_PHASE_OVER') {
        check(matchEnd !== null, 'phase OVER without a match_end in any ApplyMove reply');
        break;
      }
      check(matchEnd === null, `match_end was sent but the phase is ${state.phase}`);
      if (state.phase === 'MATCH_PHASE_AWAITING_DEAL') {
        await deal(game, state);
        continue;
      }
      check(state.phase === 'MATCH_PHASE_PLAYING', `unexpected phase ${state.phase}`);
      const reply = await turn(game, state, pick);
      if (reply.match_end) matchEnd = reply.match_end;
    }

    await finish(game, matchEnd);
    await watch(game);
    const dealsChecked = await proveDeals(game, created, matchEnd);
    check(game.probed, 'the error probes never ran');
    game.tally.refusals = refusals;
    return {
      ok: true,
      match_id: id,
      seats,
      moves: game.moves,
      rounds: game.round + 1,
      winner: matchEnd.winner,
      scores: matchEnd.scores.map(Number),
      tally: game.tally,
      chain_head: game.heads[game.heads.length - 1],
      chain_head_sequence: Number(game.headSequences[game.headSequences.length - 1]),
      heads: game.heads,
      deals_checked: dealsChecked,
      calls: client.calls,
      millis: Date.now() - started,
    };
  } finally {
    client.close();
  }
}

// Reads the observer's state and every seat's view; checks counts and privacy.
async function observe(game) {
  const { client, id, seats } = game;
  const { state } = await client.unary('GetState', { match_id: id, token: game.observer });
  check(state.match_id === id && state.seat_count === seats, 'GetState names another match');
  check(state.move_count === game.moves, `GetState move_count ${state.move_count}, expected ${game.moves}`);
  check(sameList(state.scores, game.scores), `GetState scores ${show(state.scores)}, expected ${show(game.scores)}`);
  check(state.viewer_seat === undefined || state.viewer_seat === null, 'observer has a viewer_seat');
  check(state.viewer_tiles.length === 0, 'observer has viewer_tiles');
  check(state.hands.length === seats, `observer sees ${state.hands.length} hands`);
  state.hands.forEach((h, s) =>
    check(h.tiles.length === state.hand_sizes[s], `hand ${s} has ${h.tiles.length} tiles, size says ${state.hand_sizes[s]}`),
  );
  check(state.boneyard_tiles.length === state.boneyard_size, 'observer boneyard length != boneyard_size');
  const all = [
    ...state.hands.flatMap((h) => h.tiles),
    ...state.boneyard_tiles,
    ...state.layout_tiles.map((p) => p.tile),
  ].map(tileText);
  check(all.length === 28 && new Set(all).size === 28, () => `tiles are not the 28 of the set: ${all.length} (${new Set(all).size} distinct)`);
  const endsSum = state.counted_ends.reduce((a, e) => a + e.value, 0);
  check(endsSum === state.ends_sum, `GetState ends_sum ${state.ends_sum} != sum of counted_ends ${endsSum}`);
  const playing = state.phase === 'MATCH_PHASE_PLAYING';
  check(playing === (state.turn !== undefined && state.turn !== null), `turn ${state.turn} in phase ${state.phase}`);

  // Each seat sees its own hand only: the seat to move every time, all seats
  // every fifth action and between rounds (to keep the call count down).
  const full = !playing || state.move_count % 5 === 0;
  for (let s = 0; s < seats; s++) {
    if (!full && s !== state.turn) continue;
    const view = (await client.unary('GetState', { match_id: id, token: game.tokens[s] })).state;
    check(view.viewer_seat === s, `seat ${s} view has viewer_seat ${view.viewer_seat}`);
    check(view.hands.length === 0, `privacy: seat ${s} sees ${view.hands.length} hands`);
    check(view.boneyard_tiles.length === 0, `privacy: seat ${s} sees the boneyard`);
    check(view.move_count === state.move_count && view.phase === state.phase, `seat ${s} view is out of step`);
    check(sameList(view.hand_sizes, state.hand_sizes), `seat ${s} hand_sizes differ from the observer's`);
    check(view.boneyard_size === state.boneyard_size, `seat ${s} boneyard_size differs`);
    const own = view.viewer_tiles.map(tileText).join(' ');
    const truth = state.hands[s].tiles.map(tileText).join(' ');
    check(own === truth, `seat ${s} viewer_tiles ${own} != observer's hand ${truth}`);
    if (view.pending_drawn_tile) {
      check(playing && state.turn === s, `seat ${s} has a pending drawn tile out of turn`);
    }
  }
  return state;
}

async function deal(game, state) {
  const { client, id, seats } = game;
  // Any seat token may deal; use the seats in turn (and the observer now and then).
  const token = state.round_index % (seats + 1) === seats ? game.observer : game.tokens[state.round_index % (seats + 1)];
  const reply = await client.unary('DealRound', { match_id: id, token });
  check(reply.round_index === state.round_index + 1, `DealRound round_index ${reply.round_index} after ${state.round_index}`);
  check(
    ['LEADER_CHOICE_LOT', 'LEADER_CHOICE_FINISHER'].includes(reply.leader_choice),
    `DealRound leader_choice ${reply.leader_choice}`,
  );
  check(reply.leader < seats, `DealRound leader ${reply.leader}`);
  if (reply.leader_choice === 'LEADER_CHOICE_FINISHER') {
    check(game.lastFinisher === reply.leader, `leader ${reply.leader} is not the last finisher ${game.lastFinisher}`);
  } else {
    check(game.lastFinisher === null, 'leader chosen by lot after a domino');
  }
  game.round = reply.round_index;
  const after = (await client.unary('GetState', { match_id: id, token: game.observer })).state;
  check(after.phase === 'MATCH_PHASE_PLAYING' && after.turn === reply.leader, 'after DealRound the leader is not to move');
  const dealt = after.hand_sizes.reduce((a, b) => a + b, 0);
  check(dealt === { 2: 14, 3: 18, 4: 20 }[seats] && after.layout_tiles.length === 0, 'DealRound dealt wrong hands');
  const again = await client.failure('DealRound', { match_id: id, token: game.observer });
  expectFailure(again, 'DealRound while playing', [grpc.status.FAILED_PRECONDITION], 'ERROR_REASON_WRONG_PHASE');
}

async function turn(game, state, pick) {
  const { client, id } = game;
  const seat = state.turn;
  const token = game.tokens[seat];
  const { moves } = await client.unary('ListLegalMoves', { match_id: id, token, seat });
  check(moves.length > 0, `seat ${seat} is to move but has no legal move`);
  for (const m of moves) {
    check(m.kind && m[m.kind] !== null, `legal move without a kind: ${show(m)}`);
    check(notationKind(m.notation) === m.kind, `legal move ${m.notation} has kind ${m.kind}`);
  }
  const kinds = new Set(moves.map((m) => m.kind));
  if (kinds.has('draw') || kinds.has('pass')) {
    check(moves.length === 1, `draw/pass offered with other moves: ${moves.map((m) => m.notation)}`);
    check((kinds.has('draw') ? state.boneyard_size > 0 : state.boneyard_size === 0), 'draw/pass does not fit the boneyard');
  }
  const drawn = game.lastDraw.get(seat);
  if (drawn && moves[0].kind === 'place') {
    for (const m of moves) {
      check(tileText(m.place.tile) === drawn, `after drawing ${drawn}, ${m.notation} is offered`);
    }
  }
  // The observer may list too, and a seat out of turn has no moves (checked
  // every fifth action).
  if (game.moves % 5 === 0) await listChecks(game, seat, moves);

  if (!game.probed && state.layout_tiles.length >= 2) {
    await probeErrors(game, state, seat, moves);
    game.probed = true;
  }

  const move = moves[Math.floor(pick() * moves.length)];
  // Send half the moves in notation, half structured.
  const request = { match_id: id, token, seat, expected_move_count: game.moves };
  if (game.moves % 2 === 0) request.notation = move.notation;
  else request.move = { [move.kind]: move[move.kind] };
  const reply = await client.unary('ApplyMove', request);
  checkReply(game, state, seat, move, reply);

  // Retrying the same action with the same count returns the original reply.
  if (game.moves % 7 === 0) {
    const retry = await client.unary('ApplyMove', request);
    check(show(retry) === show(reply), `retry of ${move.notation} gave ${show(retry)}, first ${show(reply)}`);
    game.tally.retries += 1;
  }

  game.moves = reply.move_count;
  game.tally[move.kind] += 1;
  if (reply.points > 0) game.tally.scoring += 1;
  if (reply.round_end) game.tally[reply.round_end.kind === 'ROUND_END_KIND_DOMINO' ? 'domino' : 'blocked'] += 1;
  game.scores = reply.scores.map(Number);
  if (move.kind === 'draw') game.lastDraw.set(seat, tileText(reply.drawn_tile));
  else game.lastDraw.delete(seat);
  if (reply.round_end) game.lastDraw.clear();
  const ended = reply.round_end !== null || reply.match_end !== null;
  check(ended ? /^[0-9a-f]{64}$/.test(reply.chain_head) : reply.chain_head === '', `chain_head ${show(reply.chain_head)}`);
  // uint64 reads as a decimal string: the head's event is never the creation (0)
  check(ended ? /^[1-9][0-9]*$/.test(reply.chain_head_sequence) : reply.chain_head_sequence === '0', `chain_head_sequence ${show(reply.chain_head_sequence)}`);
  if (ended) {
    game.heads.push(reply.chain_head);
    game.headSequences.push(reply.chain_head_sequence);
  }
  return reply;
}

async function listChecks(game, seat, moves) {
  const { client, id, seats } = game;
  const viaObserver = await client.unary('ListLegalMoves', { match_id: id, token: game.observer, seat });
  check(show(viaObserver.moves.map((m) => m.notation)) === show(moves.map((m) => m.notation)), 'observer lists other moves');
  const other = (seat + 1) % seats;
  const idle = await client.unary('ListLegalMoves', { match_id: id, token: game.tokens[other], seat: other });
  check(idle.moves.length === 0, `seat ${other} has legal moves out of turn`);
}

function checkReply(game, state, seat, move, reply) {
  const { seats } = game;
  const n = move.notation;
  check(reply.move_count === game.moves + 1, `${n}: move_count ${reply.move_count}, expected ${game.moves + 1}`);
  check(reply.seat === seat, `${n}: reply seat ${reply.seat}, mover ${seat}`);
  check(reply.move && reply.move.notation === n, () => `sent ${n}, reply move is ${reply.move && reply.move.notation}`);
  check(reply.move.kind === move.kind, `${n}: reply move kind ${reply.move.kind}`);
  const endsSum = reply.counted_ends.reduce((a, e) => a + e.value, 0);
  check(endsSum === reply.ends_sum, `${n}: ends_sum ${reply.ends_sum} != sum of counted_ends ${endsSum}`);
  check(reply.points % 5 === 0, `${n}: points ${reply.points} not a multiple of 5`);
  if (reply.points !== 0) check(reply.points === reply.ends_sum, `${n}: points ${reply.points} != ends_sum ${reply.ends_sum}`);
  if (move.kind === 'lead' || move.kind === 'place') {
    const expected = reply.ends_sum > 0 && reply.ends_sum % 5 === 0 ? reply.ends_sum : 0;
    check(reply.points === expected, `${n}: points ${reply.points} for ends_sum ${reply.ends_sum}`);
  } else {
    check(reply.points === 0, `${n}: a ${move.kind} scored ${reply.points}`);
    check(reply.ends_sum === state.ends_sum, `${n}: a ${move.kind} changed the ends sum`);
  }
  if (move.kind === 'draw') {
    check(reply.drawn_tile !== null, `${n}: draw reply has no drawn_tile`);
    const expected = tileText(state.boneyard_tiles[0]);
    check(tileText(reply.drawn_tile) === expected, `${n}: drew ${tileText(reply.drawn_tile)}, boneyard top was ${expected}`);
  } else {
    check(reply.drawn_tile === null, `${n}: non-draw reply has drawn_tile`);
  }
  check(reply.scores.length === seats, `${n}: ${reply.scores.length} scores`);
  const ended = reply.round_end !== null || reply.match_end !== null;
  check(ended === (reply.turn === undefined || reply.turn === null), `${n}: turn ${reply.turn} with round/match end`);

  // Scores: the mover's side gains the points; a round end takes deductions.
  const expected = game.scores.slice();
  for (const s of side(seat, seats)) expected[s] += reply.points;
  if (reply.match_end) {
    check(move.kind === 'lead' || move.kind === 'place', `${n}: match won on a ${move.kind}`);
    const me = reply.match_end;
    check(me.winner === seat, `${n}: match_end winner ${me.winner}, mover ${seat}`);
    check(sameList([...me.winning_seats].sort(), side(seat, seats)), `${n}: winning_seats ${show(me.winning_seats)}`);
    check(me.scores[seat] >= game.target, `${n}: winner's score ${me.scores[seat]} < target ${game.target}`);
    check(sameList(me.scores, reply.scores), `${n}: match_end scores ${show(me.scores)} != reply scores ${show(reply.scores)}`);
    check(sameList(reply.scores, expected), `${n}: winning scores ${show(reply.scores)}, expected ${show(expected)} (no deductions)`);
    check(reply.round_end === null, `${n}: a won match also has a round_end`);
  } else if (reply.round_end) {
    const re = reply.round_end;
    check(re.round_index === state.round_index, `${n}: round_end for round ${re.round_index}`);
    check(re.pips.length === seats && re.deductions.length === seats && re.remaining_hands.length === seats, `${n}: round_end lists`);
    for (let s = 0; s < seats; s++) {
      const pips = re.remaining_hands[s].tiles.reduce((a, t) => a + t.low + t.high, 0);
      check(re.pips[s] === pips, `${n}: seat ${s} pips ${re.pips[s]}, hand holds ${pips}`);
      check(re.deductions[s] === roundToFive(pips), `${n}: seat ${s} deduction ${re.deductions[s]} for ${pips} pips`);
      for (const t of side(s, seats)) expected[t] -= re.deductions[s];
    }
    if (re.kind === 'ROUND_END_KIND_DOMINO') {
      check(re.finisher === seat && re.remaining_hands[seat].tiles.length === 0, `${n}: domino finisher ${re.finisher}`);
      game.lastFinisher = seat;
    } else {
      check(re.kind === 'ROUND_END_KIND_BLOCKED', `${n}: round end kind ${re.kind}`);
      check(re.finisher === undefined || re.finisher === null, `${n}: blocked round with finisher ${re.finisher}`);
      game.lastFinisher = null;
    }
    check(sameList(re.scores, reply.scores), `${n}: round_end scores ${show(re.scores)} != reply scores ${show(reply.scores)}`);
    check(sameList(reply.scores, expected), `${n}: scores ${show(reply.scores)} after deductions, expected ${show(expected)}`);
  } else {
    check(sameList(reply.scores, expected), `${n}: scores ${show(reply.scores)}, expected ${show(expected)}`);
    const next = reply.turn;
    check(next >= 0 && next < seats, `${n}: next turn ${next}`);
  }
  if (seats === 4) check(reply.scores[0] === reply.scores[2] && reply.scores[1] === reply.scores[3], `${n}: partners' scores differ`);
}

// One of each refused call; none may change the match.
async function probeErrors(game, state, seat, moves) {
  const { client, id, seats } = game;
  const token = game.tokens[seat];
  const base = { match_id: id, seat, expected_move_count: game.moves };
  const other = (seat + 1) % seats;
  const FP = grpc.status.FAILED_PRECONDITION;
  const denied = [grpc.status.PERMISSION_DENIED, grpc.status.UNAUTHENTICATED];

  // Illegal moves: a pass or draw that is not offered (when a pass is
  // offered the boneyard is empty, so a draw is illegal), and a tile that is
  // in another hand, not the mover's.
  const offered = new Set(moves.map((m) => m.notation));
  const illegal = offered.has('pass') ? 'draw' : 'pass';
  expectFailure(await client.failure('ApplyMove', { ...base, token, notation: illegal }), `illegal move ${illegal}`, [FP], 'ERROR_REASON_ILLEGAL_MOVE');
  const lead = state.layout_tiles[0].tile;
  const foreign = state.hands[other].tiles[0];
  if (foreign) {
    const notation = `${tileText(foreign)}@${tileText(lead)}:${lead.low === lead.high ? 'line_a' : 'low'}`;
    expectFailure(await client.failure('ApplyMove', { ...base, token, notation }), `tile not in hand ${notation}`, [FP], 'ERROR_REASON_ILLEGAL_MOVE');
  }

  // A move by a seat whose turn it is not (with its own token).
  expectFailure(
    await client.failure('ApplyMove', { ...base, seat: other, token: game.tokens[other], notation: moves[0].notation }),
    'move out of turn', [FP], 'ERROR_REASON_NOT_YOUR_TURN',
  );
  // Wrong tokens: another seat's, the observer's, a made-up one.
  for (const [what, bad] of [['another seat', game.tokens[other]], ['the observer', game.observer], ['a made-up', 'not-a-token']]) {
    expectFailure(
      await client.failure('ApplyMove', { ...base, token: bad, notation: moves[0].notation }),
      `ApplyMove with ${what}'s token`, denied, 'ERROR_REASON_BAD_TOKEN',
    );
  }
  expectFailure(await client.failure('GetState', { match_id: id, token: 'not-a-token' }), 'GetState with a made-up token', denied, 'ERROR_REASON_BAD_TOKEN');
  expectFailure(
    await client.failure('ListLegalMoves', { match_id: id, token: game.tokens[other], seat }),
    "ListLegalMoves with another seat's token", denied, 'ERROR_REASON_BAD_TOKEN',
  );
  // A stale (future) move count, a malformed move, an unknown match.
  expectFailure(
    await client.failure('ApplyMove', { ...base, token, expected_move_count: game.moves + 3, notation: moves[0].notation }),
    'stale expected_move_count', [grpc.status.ABORTED], 'ERROR_REASON_MOVE_COUNT_MISMATCH',
  );
  expectFailure(
    await client.failure('ApplyMove', { ...base, token, notation: '7-9@0-0:sideways' }),
    'malformed move', [grpc.status.INVALID_ARGUMENT], 'ERROR_REASON_MALFORMED_MOVE',
  );
  expectFailure(
    await client.failure('GetState', { match_id: '0000000000000000', token }),
    'unknown match', [grpc.status.NOT_FOUND], 'ERROR_REASON_MATCH_NOT_FOUND',
  );
  // Nothing changed.
  const after = (await client.unary('GetState', { match_id: id, token: game.observer })).state;
  check(after.move_count === game.moves && after.turn === seat, 'a refused call changed the match');
}

async function finish(game, matchEnd) {
  const { client, id } = game;
  const state = (await client.unary('GetState', { match_id: id, token: game.observer })).state;
  check(state.phase === 'MATCH_PHASE_OVER', `after match_end the phase is ${state.phase}`);
  check(state.winner === matchEnd.winner, `GetState winner ${state.winner}, match_end winner ${matchEnd.winner}`);
  check(state.move_count === game.moves, 'final move_count');
  for (const token of [game.observer, ...game.tokens]) {
    const scores = await client.unary('GetScores', { match_id: id, token });
    check(scores.over === true && scores.winner === matchEnd.winner, `GetScores over ${scores.over} winner ${scores.winner}`);
    check(sameList(scores.scores, matchEnd.scores), `GetScores ${show(scores.scores)} != final ${show(matchEnd.scores)}`);
    check(sameList([...scores.winning_seats].sort(), [...matchEnd.winning_seats].sort()), 'GetScores winning_seats');
    check(scores.target === game.target, 'GetScores target');
  }
  check(Math.max(...matchEnd.scores) >= game.target && matchEnd.scores[matchEnd.winner] >= game.target, 'final score below target');
  // Nothing more can happen.
  const seat = 0;
  expectFailure(
    await client.failure('ApplyMove', { match_id: id, token: game.tokens[seat], seat, notation: 'pass', expected_move_count: game.moves }),
    'ApplyMove after the end', [grpc.status.FAILED_PRECONDITION], 'ERROR_REASON_WRONG_PHASE',
  );
  expectFailure(
    await client.failure('DealRound', { match_id: id, token: game.observer }),
    'DealRound after the end', [grpc.status.FAILED_PRECONDITION], 'ERROR_REASON_WRONG_PHASE',
  );
  const none = await client.unary('ListLegalMoves', { match_id: id, token: game.tokens[seat], seat });
  check(none.moves.length === 0, 'legal moves after the end');
}

// Replays the match as the observer and as seat 0; the seat's stream hides others' tiles.
async function watch(game) {
  const { client, id } = game;
  for (const viewer of [null, 0]) {
    const token = viewer === null ? game.observer : game.tokens[viewer];
    const events = (await client.stream('WatchMatch', { match_id: id, token, from_sequence: 0 })).map((r) => r.event);
    const who = viewer === null ? 'observer' : `seat ${viewer}`;
    events.forEach((e, i) => check(Number(e.sequence) === i, `${who} stream: event ${i} has sequence ${e.sequence}`));
    check(events[0].kind === 'match_created', `${who} stream starts with ${events[0].kind}`);
    check(events[events.length - 1].kind === 'match_ended', `${who} stream ends with ${events[events.length - 1].kind}`);
    const actions = events.filter((e) => e.kind === 'action_applied').map((e) => e.action_applied);
    check(actions.length === game.moves, `${who} stream has ${actions.length} actions, played ${game.moves}`);
    actions.forEach((a, i) => check(a.move_count === i + 1, `${who} stream: action ${i} has move_count ${a.move_count}`));
    const deals = events.filter((e) => e.kind === 'round_dealt').map((e) => e.round_dealt);
    check(deals.length === game.round + 1, `${who} stream has ${deals.length} deals, ${game.round + 1} rounds`);
    if (viewer === null) continue;
    for (const d of deals) {
      d.hands.forEach((h, s) => check(s === viewer || h.tiles.length === 0, `privacy: seat ${viewer} stream shows hand ${s}`));
      check(d.hands[viewer].tiles.length === d.hand_sizes[viewer], `seat ${viewer} stream lacks its own hand`);
      check(d.boneyard_tiles.length === 0, `privacy: seat ${viewer} stream shows the boneyard`);
    }
    for (const a of actions) {
      if (a.move.kind === 'draw') {
        check((a.drawn_tile !== null) === (a.seat === viewer), `privacy: seat ${viewer} stream, draw by seat ${a.seat}, drawn_tile ${show(a.drawn_tile)}`);
      }
    }
  }
}

// Once the match is over: the reveal opens the commitment given at creation,
// every seeded deal and lot is the one the revealed seed makes (recomputed
// here, docs/dealing.md), and the heads on the stream, with their sequence
// numbers, are those the replies gave. Returns how many deals were recomputed.
async function proveDeals(game, created, matchEnd) {
  const { client, id, seats } = game;
  const reveal = matchEnd.reveal;
  check(reveal !== null, 'the match_end reveals nothing');
  const seed = BigInt(reveal.seed);
  const salt = Buffer.from(reveal.seed_salt, 'hex');
  const opened = provable.commitment(seed, salt).toString('hex');
  check(opened === created.seed_commitment, `the revealed seed and salt give ${opened}, not the commitment ${created.seed_commitment}`);
  const events = (await client.stream('WatchMatch', { match_id: id, token: game.observer, from_sequence: 0 })).map((r) => r.event);
  const ends = events.filter((e) => e.kind === 'round_ended' || e.kind === 'match_ended');
  const heads = ends.map((e) => e.chain_head);
  check(show(heads) === show(game.heads), `stream heads ${show(heads)} != reply heads ${show(game.heads)}`);
  const sequences = ends.map((e) => e.sequence);
  check(show(sequences) === show(game.headSequences), `stream head sequences ${show(sequences)} != reply sequences ${show(game.headSequences)}`);
  const ended = events[events.length - 1].match_ended.match_end;
  check(show(ended.reveal) === show(reveal), 'the MatchEnded event reveals other secrets than the reply');
  let checked = 0;
  for (const e of events.filter((x) => x.kind === 'round_dealt')) {
    const d = e.round_dealt;
    if (d.explicit_deal) continue;
    const made = provable.seededDeal(seed, d.round_index, seats);
    const served = d.hands.map((h) => h.tiles.map(tileText));
    check(show(served) === show(made.hands), `round ${d.round_index}: served hands ${show(served)}, the seed deals ${show(made.hands)}`);
    check(show(d.boneyard_tiles.map(tileText)) === show(made.boneyard), `round ${d.round_index}: the boneyard is not the seed's`);
    if (d.leader_choice === 'LEADER_CHOICE_LOT') {
      const leader = provable.lot(seed, d.round_index, seats);
      check(d.leader === leader, `round ${d.round_index}: the lot gives seat ${leader}, seat ${d.leader} led`);
    }
    checked += 1;
  }
  return checked;
}

async function main() {
  const { options, rest } = parseOptions(process.argv.slice(2));
  const address = rest[0] || '127.0.0.1:50051';
  const seats = Number.parseInt(rest[1] || '2', 10);
  const seed = Number.parseInt(rest[2] || '7', 10);
  if (![2, 3, 4].includes(seats) || !Number.isSafeInteger(seed) || seed < 0) {
    process.stderr.write('usage: node conformance.js [ADDRESS] [SEATS 2|3|4] [SEED] [--tls-ca FILE] [--house-key-file FILE]\n');
    return 2;
  }
  const timer = setTimeout(() => {
    process.stderr.write(`conformance.js: gave up after ${MAX_MILLIS + 5000} ms\n`);
    process.exit(1);
  }, MAX_MILLIS + 5000);
  timer.unref();
  try {
    const summary = await play(address, seats, seed, options);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof CheckFailed) process.stderr.write(`conformance.js: check failed: ${err.message}\n`);
    else if (err && err.code !== undefined) process.stderr.write(`conformance.js: RPC failed: ${grpcCodeName(err.code)}: ${err.details}\n`);
    else process.stderr.write(`conformance.js: ${err && err.stack ? err.stack : err}\n`);
    return 1;
  }
}

main().then((code) => {
  process.exitCode = code;
});
