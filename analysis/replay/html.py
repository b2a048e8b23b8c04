"""The whole match as one self-contained HTML page: board, slider, arrow keys, scores, moves.

No network and no server: the page holds its data as JSON and a short
script. Every picture fragment is made here by svg.py, once per round (each
tile once, each marker once), and a step only names which of them it shows,
so a long match stays small and the page draws exactly what `--svg` draws.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from analysis.replay.geometry import Geometry, layout_geometry
from analysis.replay.model import Replay, Step
from analysis.replay.svg import counted_marker, defs, frame, open_marker, tile_svg

_STYLE = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#222;background:#e9ede6}
header{padding:8px 14px;background:#2f4f3a;color:#fff}
header h1{font-size:16px;margin:0}
main{display:flex;gap:12px;padding:12px;align-items:flex-start}
#left{flex:1 1 auto;min-width:0}
#table{background:#f4f7f2;border:1px solid #b9c4b3;border-radius:6px}
#board{display:block;width:100%;height:72vh}
#side{flex:0 0 300px}
.panel{background:#fff;border:1px solid #c8d0c4;border-radius:6px;padding:8px 10px;
 margin-bottom:10px}
.panel h2{font-size:13px;margin:0 0 4px;color:#2f4f3a;text-transform:uppercase}
.big{font-size:20px;font-weight:bold}
#scores{border-collapse:collapse;width:100%}
#scores td{padding:2px 4px;border-top:1px solid #eee}
#scores tr.turn td{background:#fff6d8}
#controls{display:flex;gap:6px;align-items:center;padding:0 0 8px}
#controls input{flex:1}
button{font-size:16px;min-width:36px}
#moves{position:relative;max-height:40vh;overflow:auto;font-family:ui-monospace,monospace;font-size:12px}
#moves .rnd{margin-top:4px;font-weight:bold;font-family:system-ui,sans-serif}
#moves span{cursor:pointer;padding:0 3px;border-radius:3px;display:inline-block}
#moves span.cur{background:#2f4f3a;color:#fff}
#moves span.pts{color:#b35c00}
#note{color:#8a4b00}
#moves span.err{text-decoration:underline wavy #c0392b}
#moves span.large{background:#f6d4cf}
#moves span.large.cur{background:#2f4f3a}
#decision .lost{font-weight:bold;color:#c0392b}
#moves span.good{border-bottom:2px solid #2e8b57}
#moves span.bad{border-bottom:2px solid #c0392b}
#decision .luck{color:#555}
"""

_SCRIPT = r"""
(function(){
const D = JSON.parse(document.getElementById('replay-data').textContent);
const last = D.steps.length - 1;
const layer = document.getElementById('board-layer');
const svg = document.getElementById('board');
const slider = document.getElementById('slider');
const moveSpans = Array.from(document.querySelectorAll('#moves span[data-step]'));
let cur = -1;
function text(id, value) { document.getElementById(id).textContent = value; }
function show(i) {
  i = Math.max(0, Math.min(last, i|0));
  const s = D.steps[i], r = D.rounds[s.round];
  layer.innerHTML = r.tiles.slice(0, s.k).join('') + s.m.map(k => r.marks[k]).join('');
  svg.setAttribute('viewBox', s.vb.join(' '));
  text('step', i); text('round', s.round); text('action', s.action);
  let what = s.move;
  if (s.kind === 'draw') what = 'draw ' + (s.drawn || '(tile hidden)');
  text('move', 'seat ' + s.seat + ': ' + what);
  const sum = document.getElementById('ends-sum');
  sum.textContent = s.ends_sum; sum.dataset.value = s.ends_sum;
  const pts = document.getElementById('points');
  pts.textContent = s.points === null ? '-' : s.points;
  pts.dataset.value = s.points === null ? '' : s.points;
  const body = document.querySelector('#scores tbody');
  body.innerHTML = '';
  s.scores.forEach(function(v, seat) {
    const tr = document.createElement('tr');
    tr.dataset.seat = seat; tr.dataset.score = v;
    if (s.turn === seat) tr.className = 'turn';
    tr.innerHTML = '<td>seat ' + seat + '</td><td class="score">' + v + '</td><td>' +
      s.hand_sizes[seat] + ' tiles</td>';
    body.appendChild(tr);
  });
  text('boneyard', s.boneyard);
  const a = s.a, dec = document.getElementById('decision');
  if (!a) {
    dec.textContent = D.analysed ? 'no decision (one legal move)' : 'not analysed';
  } else {
    const how = a.exact ? 'exact' : '\u00b1 ' + a.loss_se.toFixed(2);
    dec.innerHTML = 'best <b>' + a.best + '</b> (equity ' + a.best_equity.toFixed(2) +
      ')<br>played ' + s.move + ': ' + (a.loss > 0 ? '<span class="lost">lost ' +
      a.loss.toFixed(2) + '</span> ' + how : 'the best') +
      (a.flag ? ' \u2014 ' + a.flag : '') + '<br><small>' + a.phase + ', ' +
      (a.exact ? 'solved exactly' : a.rollouts + ' rollouts') + '</small>';
  }
  if (s.l) {
    dec.innerHTML += '<div class="luck">' + s.l.map(function(e) {
      const who = e.kind === 'draw' ? 'luck of the draw' : e.kind === 'deal' ?
        'seat ' + e.seat + "'s deal" : 'seat ' + e.seat + "'s side, the lot";
      return who + ': ' + (e.luck >= 0 ? '+' : '') + e.luck.toFixed(2) + ' \u00b1 ' +
        e.se.toFixed(2);
    }).join('<br>') + '</div>';
  }
  let status = '';
  if (s.round_end) {
    const e = s.round_end;
    status = 'Round ' + e.round + ' ends, ' + (e.ending === 'domino' ? 'domino by seat ' +
      e.finisher : 'blocked') + ': pips ' + e.pips.join(', ') + '; deductions ' +
      e.deductions.join(', ') + '.';
  }
  if (s.winner !== undefined) status += ' Seat ' + s.winner + ' wins the match.';
  text('status', status);
  slider.value = i;
  if (cur >= 0 && moveSpans[cur]) moveSpans[cur].classList.remove('cur');
  if (moveSpans[i]) {
    moveSpans[i].classList.add('cur');
    // Scroll the move list only, never the page (scrollIntoView would move both).
    const list = moveSpans[i].parentNode, top = moveSpans[i].offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 20) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }
  cur = i;
  document.body.dataset.step = i;
}
slider.max = last;
slider.addEventListener('input', function() { show(+slider.value); });
document.getElementById('first').onclick = function() { show(0); };
document.getElementById('prev').onclick = function() { show(cur - 1); };
document.getElementById('next').onclick = function() { show(cur + 1); };
document.getElementById('lastbtn').onclick = function() { show(last); };
moveSpans.forEach(function(el) { el.onclick = function() { show(+el.dataset.step); }; });
document.addEventListener('keydown', function(e) {
  if (e.target === slider && (e.key === 'ArrowLeft' || e.key === 'ArrowRight')) {
    return;  // the slider moves itself and fires 'input'
  }
  if (e.key === 'ArrowLeft') show(cur - 1);
  else if (e.key === 'ArrowRight') show(cur + 1);
  else if (e.key === 'Home') show(0);
  else if (e.key === 'End') show(last);
  else return;
  e.preventDefault();
});
const start = /^#(\d+)$/.exec(location.hash);  // a link to a step: page.html#57
show(start ? +start[1] : 0);
})();
"""


def _viewbox(geometry: Geometry) -> list[float]:
    box = frame(geometry)
    return [round(box.x, 2), round(box.y, 2), round(box.w, 2), round(box.h, 2)]


Analysis = dict[tuple[int, int], dict[str, Any]]
"""A stored analysis of the match's decisions by (round, action): what the page shows of
each (`analysis.replay.source.stored_analysis`)."""
Luck = dict[tuple[int, int], list[dict[str, Any]]]
"""The stored luck of the match's chance events by (round, action), the lot and the deals
under action -1 (`analysis.rollout.store.match_luck_events`)."""


def _luck_of(step: Step, luck: Luck | None) -> list[dict[str, Any]]:
    """The chance events shown at a step: a draw's luck at the draw, the lot and the deals at
    the round's first action."""
    if not luck:
        return []
    shown = list(luck.get((step.round, -1), ())) if step.action == 0 else []
    if step.kind == "draw":
        shown += [e for e in luck.get((step.round, step.action), ()) if e["kind"] == "draw"]
    return shown


def _page_data(
    replay: Replay, analysis: Analysis | None = None, luck: Luck | None = None
) -> dict[str, Any]:
    rounds: dict[int, dict[str, Any]] = {}
    steps: list[dict[str, Any]] = []
    geometries: dict[int, Geometry] = {}
    last_of_round: dict[int, Step] = {}
    for step in replay.steps:
        last_of_round[step.round] = step
    for r, step in last_of_round.items():
        geometry = layout_geometry(step.placements)
        geometries[r] = geometry
        rounds[r] = {"tiles": [tile_svg(s) for s in geometry.shapes], "marks": {}}
    for step in replay.steps:
        geometry = geometries[step.round]
        marks = rounds[step.round]["marks"]
        keys = []
        for kind, items, draw in (
            ("c", step.counted_ends, counted_marker),
            ("o", step.open_sides, open_marker),
        ):
            for m in items:
                key = f"{kind}:{m.tile}:{m.side}:{m.value}"
                if key not in marks:
                    marks[key] = draw(geometry, m)
                keys.append(key)
        k = len(step.placements)
        prefix = Geometry(geometry.shapes[:k])
        steps.append(
            {
                "round": step.round,
                "action": step.action,
                "seat": step.seat,
                "move": step.move,
                "kind": step.kind,
                "drawn": step.drawn,
                "points": step.points,
                "ends_sum": step.ends_sum,
                "scores": list(step.scores),
                "turn": step.turn,
                "boneyard": step.boneyard,
                "hand_sizes": list(step.hand_sizes),
                "round_end": None if step.round_end is None else step.round_end.to_json(),
                **({"winner": step.winner} if step.winner is not None else {}),
                "k": k,
                "m": keys,
                "vb": _viewbox(prefix),
                **(
                    {"a": analysis[(step.round, step.action)]}
                    if analysis and (step.round, step.action) in analysis
                    else {}
                ),
                **({"l": shown} if (shown := _luck_of(step, luck)) else {}),
            }
        )
    ordered = [
        rounds.get(r, {"tiles": [], "marks": {}}) for r in range(max(rounds, default=-1) + 1)
    ]
    return {
        "info": replay.info.to_json(),
        "rounds": ordered,
        "steps": steps,
        "analysed": analysis is not None,
    }


def _move_list(replay: Replay, analysis: Analysis | None = None, luck: Luck | None = None) -> str:
    parts: list[str] = []
    current = -1
    for step in replay.steps:
        if step.round != current:
            current = step.round
            parts.append(f'<div class="rnd">Round {current}</div>')
        label = step.move
        if step.kind == "draw" and step.drawn:
            label = f"draw {step.drawn}"
        classes = ["pts"] if step.points else []
        title = f"step {step.n}, seat {step.seat}" + (
            f", {step.points} points" if step.points else ""
        )
        judged = (analysis or {}).get((step.round, step.action))
        if judged is not None and judged["flag"]:
            classes.append("large" if judged["flag"] == "large loss" else "err")
            title += f", lost {judged['loss']:.2f} (best {judged['best']})"
        drew = [e for e in _luck_of(step, luck) if e["kind"] == "draw"]
        if drew:
            classes.append("good" if drew[0]["luck"] >= 0 else "bad")
            title += f", luck {drew[0]['luck']:+.2f} ± {drew[0]['se']:.2f}"
        cls = f' class="{" ".join(classes)}"' if classes else ""
        parts.append(
            f'<span data-step="{step.n}"{cls} title="{escape(title)}">{escape(label)}</span>'
        )
    return "".join(parts)


def match_page(replay: Replay, analysis: Analysis | None = None, luck: Luck | None = None) -> str:
    """The page (see the module's doc); with `analysis`, each decision's equity lost and best
    move beside the step, and the errors marked in the move list; with `luck`, the luck of
    each draw (marked in the move list) and of the lot and the deals at a round's start."""
    info = replay.info
    data = json.dumps(_page_data(replay, analysis, luck), separators=(",", ":")).replace(
        "</", "<\\/"
    )
    result = ""
    if info.finished and info.scores is not None:
        result = f" · seat {info.winner} won, scores {' '.join(str(s) for s in info.scores)}"
    note = f'<p id="note">{escape(replay.hidden_note)}</p>' if replay.hidden_note else ""
    title = f"Sniff match {info.match_id}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{_STYLE}</style></head>
<body data-step="0">
<header><h1>{escape(title)}</h1>
<div>{info.seats} seats · {escape(info.variant)} · target {info.target}{escape(result)}
</div></header>
{note}
<main>
<div id="left">
<div id="controls">
<button id="first" title="first (Home)">|&#x25C0;</button>
<button id="prev" title="back (left arrow)">&#x25C0;</button>
<input id="slider" type="range" min="0" value="0" aria-label="step">
<button id="next" title="forward (right arrow)">&#x25B6;</button>
<button id="lastbtn" title="last (End)">&#x25B6;|</button>
</div>
<div id="table"><svg id="board" xmlns="http://www.w3.org/2000/svg" viewBox="-5 -4 10 8"
 preserveAspectRatio="xMidYMid meet">{defs()}<g id="board-layer"></g></svg></div></div>
<div id="side">
<div class="panel"><h2>Step</h2>
<div>step <b id="step"></b> · round <b id="round"></b> · action <b id="action"></b></div>
<div class="big" id="move"></div>
<div>ends sum <span class="big" id="ends-sum"></span> · points <span class="big" id="points">
</span></div>
<div>boneyard <b id="boneyard"></b> tiles</div>
<div id="status"></div></div>
<div class="panel"><h2>Scores</h2><table id="scores"><tbody></tbody></table></div>
<div class="panel"><h2>Decision</h2><div id="decision"></div></div>
<div class="panel"><h2>Moves</h2><div id="moves">{_move_list(replay, analysis, luck)}</div></div>
</div></main>
<script type="application/json" id="replay-data">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
